"""NetHack's calendar is pinned (envs/balrog/nethack_clock.py): the seed decides the game on any day, in any time zone."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.extra("nethack")

# A game per id, then NetHack's calendar as the game's own loaded library computes it: getnow(),
# the birth time u_init stored, the moon, Friday 13th, night, midnight, and mktime's inverse of CLOCK.
PROBE = """
import _ctypes, ctypes, hashlib, json, sys, warnings
warnings.simplefilter("ignore")
import gymnasium as gym
import rl4vlm_gym
out = {}
for env_id in sys.argv[1:]:
    env = gym.make(env_id)
    obs, _ = env.reset(seed=0)
    lib = ctypes.CDLL(env.unwrapped.game.nethack.dlpath)  # the loaded game's library: dlopen of a loaded file shares it
    lib.getnow.restype = lib.time_from_yyyymmddhhmmss.restype = ctypes.c_long
    out[env_id] = {
        "bytes": hashlib.sha256(obs["text"].encode() + obs["image"].tobytes()).hexdigest(),
        "message": obs["text"].split("\\n\\nlanguage observation:")[0],
        "calendar": [lib.getnow(), ctypes.c_long.in_dll(lib, "ubirthday").value, lib.phase_of_the_moon(),
                     lib.friday_13th(), lib.night(), lib.midnight(), lib.time_from_yyyymmddhhmmss(b"20000101120000")],
    }
    _ctypes.dlclose(lib._handle)  # else the next game's NLE finds its library loaded already
    env.close()
print(json.dumps(out))
"""


def _games(timezone: str, *env_ids: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TZ": timezone}
    return subprocess.Popen([sys.executable, "-c", PROBE, *env_ids], env=env, stdout=subprocess.PIPE, text=True)


def test_the_seed_decides_the_game_in_any_time_zone_with_a_quiet_pinned_calendar() -> None:
    from rl4vlm_gym.envs.balrog.nethack_clock import CLOCK

    ids = ("balrog/NetHack-v0", "balrog/MiniHack-Corridor-R3-v0")
    # UTC-12 and UTC+14, 26 hours apart: CLOCK (noon UTC) is local midnight in the first; today
    # one date may be a full moon and the other not
    runs = [_games(timezone, *ids) for timezone in ("Etc/GMT+12", "Etc/GMT-14")]
    west, east = (json.loads(run.communicate(timeout=60)[0]) for run in runs)
    assert [run.returncode for run in runs] == [0, 0]
    assert west == east
    for env_id in ids:
        getnow, birth, moon, friday_13th, night, midnight, noon = west[env_id]["calendar"]
        assert getnow == birth == noon == CLOCK  # the calendar and u_init's time(), in UTC (mktime is timegm)
        assert moon not in (0, 4) and friday_13th == night == midnight == 0  # gmtime: local midnight in UTC-12
        assert "moon tonight" not in west[env_id]["message"]


def test_only_the_build_the_patch_was_written_for_is_patched_and_the_cache_heals(tmp_path, monkeypatch) -> None:
    import rl4vlm_gym.envs.balrog.nethack  # noqa: F401  (first: it imports NLE quietly)
    from rl4vlm_gym.envs.balrog import nethack_clock

    library = nethack_clock.NLE_LIBRARY.read_bytes()
    for other in (b"\x7fELF not nethack", library[:-1] + bytes([library[-1] ^ 1])):
        with pytest.raises(ValueError, match="not balrog-nle 0.9.0's .* another NLE build is refused"):
            nethack_clock.patch(other)
    monkeypatch.setenv("RL4VLM_GYM_CACHE", str(tmp_path))
    made = nethack_clock.pinned_library()
    assert made.parent == tmp_path / "nle" and hashlib.sha256(made.read_bytes()).hexdigest() == nethack_clock.PATCHED_SHA256
    made.write_bytes(b"truncated")  # a damaged cache file is made again, not loaded
    assert nethack_clock.pinned_library() == made and hashlib.sha256(made.read_bytes()).hexdigest() == nethack_clock.PATCHED_SHA256
    assert [path.name for path in made.parent.iterdir()] == [made.name]  # no temporary file left


def test_nle_keeps_its_own_library_outside_our_envs() -> None:
    import gymnasium as gym

    import rl4vlm_gym  # noqa: F401  (registers the ids)
    from rl4vlm_gym.envs.balrog.nethack_clock import NLE_LIBRARY, pinned_clock

    env = gym.make("balrog/MiniHack-Corridor-R3-v0")
    from nle.nethack import nethack as nle_nethack

    assert nle_nethack.DLPATH == str(NLE_LIBRARY)
    with pytest.raises(RuntimeError), pinned_clock() as library:
        assert nle_nethack.DLPATH == str(library)
        raise RuntimeError("a game that fails to be made")
    assert nle_nethack.DLPATH == str(NLE_LIBRARY)
    env.close()
