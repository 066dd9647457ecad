"""The base env contract (VLMEnv), checked through the real cards envs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym.registry import env_card

NUMBERLINE = "rl4vlm/NumberLine-v0"
EZPOINTS = "rl4vlm/EZPoints-v0"
CARD_IDS = ["rl4vlm/NumberLine-v0", "rl4vlm/EZPoints-v0", "rl4vlm/Points24-v0", "rl4vlm/Blackjack-v0"]
OBS_MODES = ["image+text", "image", "text"]
OBS_KEYS = {"image", "text", "mission", "actions"}
SUBPROCESS_TIMEOUT = 120


def _sides() -> str:
    from rl4vlm_gym.envs.cards.numberline import NumberLine

    return f"{NumberLine.MIN_IMAGE_SIDE}..{NumberLine.MAX_IMAGE_SIDE}"


SIDES = _sides()  # the allowed image sides, as the error message writes them


def _make(env_id: str, **kwargs: Any) -> gym.Env:
    return gym.make(env_id, **kwargs)


def _oracle(env: gym.Env) -> str:
    return env.unwrapped.oracle_action()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
# Invalid actions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("obs_mode", OBS_MODES)
def test_unparseable_action_costs_a_step_and_changes_nothing(obs_mode: str) -> None:
    env = _make(NUMBERLINE, obs_mode=obs_mode)
    obs0, info0 = env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step("I give up")
    error = "'I give up' is not an admissible action; choose one of '-', '+'"
    assert info["action"] == {"raw": "I give up", "parsed": None, "valid": False, "error": error}
    assert env.unwrapped.elapsed_steps == 1  # type: ignore[attr-defined]
    assert info["state_key"] == info0["state_key"]
    assert (terminated, truncated) == (False, False)
    feedback = f"Invalid action: {error}. Nothing happened."
    if obs_mode == "image":
        assert obs0["text"] == ""
        assert obs["text"] == feedback
    else:
        assert obs["text"] == f"{feedback}\n{obs0['text']}"
    np.testing.assert_array_equal(obs["image"], obs0["image"])
    assert obs["actions"] == obs0["actions"] == ("-", "+")
    assert obs["mission"] == obs0["mission"]


@pytest.mark.parametrize("obs_mode", OBS_MODES)
def test_card_not_in_hand_is_an_invalid_action(obs_mode: str) -> None:
    env = _make(EZPOINTS, obs_mode=obs_mode)
    obs0, info0 = env.reset(seed=0)
    values = env.unwrapped.values  # type: ignore[attr-defined]
    missing = next(str(n) for n in range(1, 11) if n not in values)
    obs, reward, terminated, truncated, info = env.step(f'{{"thoughts": "play it", "action": "{missing}"}}')
    error = f"no unused card is worth {missing}"
    assert info["action"] == {
        "raw": f'{{"thoughts": "play it", "action": "{missing}"}}',
        "parsed": None,
        "valid": False,
        "error": error,
    }
    assert reward == -1.0
    assert info["state_key"] == info0["state_key"]
    assert info0["state_key"].endswith("|formula=")
    assert env.unwrapped.formula == []  # type: ignore[attr-defined]
    assert env.unwrapped.elapsed_steps == 1  # type: ignore[attr-defined]
    assert f"Invalid action: {error}." in obs["text"]
    if obs_mode != "image":
        assert obs["text"].endswith(obs0["text"])  # same cards, same (empty) formula
    np.testing.assert_array_equal(obs["image"], obs0["image"])


def test_a_card_cannot_be_used_twice() -> None:
    env = _make(EZPOINTS)
    env.reset(seed=0)
    values = env.unwrapped.values  # type: ignore[attr-defined]
    assert len(set(values)) == len(values), "precondition: seed 0 deals two different values"
    card = str(values[0])
    _, reward, _, _, info = env.step(card)
    assert info["action"]["valid"] is True and reward == 0.0
    key = info["state_key"]
    _, reward, _, _, info = env.step(card)
    assert info["action"] == {"raw": card, "parsed": None, "valid": False, "error": f"no unused card is worth {card}"}
    assert info["state_key"] == key
    assert reward == -1.0


@pytest.mark.parametrize(
    ("env_id", "variant", "expected"),
    [
        (NUMBERLINE, "rl4vlm", -1.0),
        (NUMBERLINE, "verl-agent", 0.0),
        (EZPOINTS, "rl4vlm", -1.0),
        (EZPOINTS, "verl-agent", 0.0),
        ("rl4vlm/Points24-v0", "rl4vlm", -1.0),
        ("rl4vlm/Points24-v0", "verl-agent", 0.0),
        ("rl4vlm/Blackjack-v0", "rl4vlm", -1.0),
        ("rl4vlm/Blackjack-v0", "verl-agent", 0.0),
    ],
)
def test_invalid_action_reward_follows_the_variant(env_id: str, variant: str, expected: float) -> None:
    env = _make(env_id, reward_variant=variant)
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step("I refuse to answer")
    assert info["action"]["valid"] is False
    assert reward == expected
    assert type(reward) is float
    assert (terminated, truncated) == (False, False)


def test_rule_invalid_reward_under_verl_agent_is_zero() -> None:
    env = _make(EZPOINTS, reward_variant="verl-agent")
    env.reset(seed=0)
    missing = next(str(n) for n in range(1, 11) if n not in env.unwrapped.values)  # type: ignore[attr-defined]
    _, reward, _, _, info = env.step(missing)
    assert info["action"]["valid"] is False
    assert reward == 0.0


def test_default_reward_variant_is_rl4vlm() -> None:
    env = _make(NUMBERLINE)
    assert env.unwrapped.reward_variant == "rl4vlm"  # type: ignore[attr-defined]


def test_invalid_actions_count_towards_the_step_budget() -> None:
    env = _make(NUMBERLINE)  # level 0: positions 0..5, 10 steps
    env.reset(seed=3)
    for step in range(1, 10):
        _, _, terminated, truncated, _ = env.step("nonsense")
        assert (terminated, truncated) == (False, False), step
    _, reward, terminated, truncated, info = env.step("nonsense")
    assert (terminated, truncated) == (False, True)
    assert reward == -1.0
    assert info["action"]["valid"] is False


@pytest.mark.parametrize("unwrapped", [False, True])
def test_steps_after_the_end_are_invalid_and_change_nothing(unwrapped: bool) -> None:
    env = _make(NUMBERLINE, obs_mode="image+text")
    env.reset(seed=3)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(_oracle(env))
        done = terminated or truncated
    assert terminated and info["success"]
    stepper = env.unwrapped if unwrapped else env
    steps = env.unwrapped.elapsed_steps  # type: ignore[attr-defined]
    for action in ("+", "-", "nonsense"):
        after, reward, term, trunc, info2 = stepper.step(action)
        assert info2["action"]["valid"] is False and info2["action"]["error"] == "the episode is over; call reset()"
        assert (reward, term, trunc) == (-1.0, True, False)
        assert info2["state_key"] == info["state_key"] and info2["success"]
        np.testing.assert_array_equal(after["image"], obs["image"])
        assert after["text"].startswith("Invalid action: the episode is over; call reset(). Nothing happened.")
    assert env.unwrapped.elapsed_steps == steps  # type: ignore[attr-defined]
    _, info3 = env.reset(seed=3)
    assert env.step(_oracle(env))[4]["action"]["valid"]  # a new episode plays again


def test_huge_json_integer_is_an_invalid_action_not_an_exception() -> None:
    env = _make(EZPOINTS)
    env.reset(seed=0)
    _, reward, _, _, info = env.step('{"action": 1' + "0" * 400 + "}")
    assert info["action"]["valid"] is False
    assert reward == -1.0


# --------------------------------------------------------------------------------------------
# Observations and obs modes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("obs_mode", OBS_MODES)
@pytest.mark.parametrize("env_id", CARD_IDS)
def test_observation_has_four_keys_and_fits_the_space(env_id: str, obs_mode: str) -> None:
    env = _make(env_id, obs_mode=obs_mode)
    obs, _ = env.reset(seed=4)
    observations = [obs]
    for action in ("definitely not an action", None, None):
        obs, _, terminated, truncated, _ = env.step(action if action is not None else _oracle(env))
        observations.append(obs)
        if terminated or truncated:
            break
    for obs in observations:
        assert set(obs) == OBS_KEYS
        assert env.observation_space.contains(obs)
        assert obs["image"].dtype == np.uint8
        assert obs["image"].shape == (300, 300, 3)
        assert isinstance(obs["text"], str) and isinstance(obs["mission"], str) and obs["mission"]
        assert type(obs["actions"]) is tuple and obs["actions"]


@pytest.mark.parametrize("env_id", CARD_IDS)
def test_obs_modes_carry_the_state_where_the_card_says(env_id: str) -> None:
    envs = {mode: _make(env_id, obs_mode=mode) for mode in OBS_MODES}
    obs = {mode: env.reset(seed=5)[0] for mode, env in envs.items()}
    for _ in range(3):
        _check_modes(obs)
        action = _oracle(envs["text"])
        steps = {mode: env.step(action) for mode, env in envs.items()}
        obs = {mode: step[0] for mode, step in steps.items()}
        if steps["text"][2] or steps["text"][3]:
            break
    _check_modes(obs)


def _check_modes(obs: dict[str, dict[str, Any]]) -> None:
    both, image_only, text_only = obs["image+text"], obs["image"], obs["text"]
    # image+text: the same image as image mode, the same text as text mode
    np.testing.assert_array_equal(both["image"], image_only["image"])
    assert both["text"] == text_only["text"]
    assert both["image"].any()
    # text mode: a black image
    assert not text_only["image"].any()
    # image mode: feedback only, never the state description
    feedback = image_only["text"]
    state = text_only["text"][len(feedback) + 1 :] if feedback else text_only["text"]
    assert text_only["text"] == (f"{feedback}\n{state}" if feedback else state)
    assert state and state not in feedback
    assert both["mission"] == image_only["mission"] == text_only["mission"]
    assert both["actions"] == image_only["actions"] == text_only["actions"]


@pytest.mark.parametrize("env_id", CARD_IDS)
def test_image_mode_text_is_empty_at_reset(env_id: str) -> None:
    obs, _ = _make(env_id, obs_mode="image").reset(seed=6)
    assert obs["text"] == ""
    assert obs["image"].any()


@pytest.mark.parametrize("env_id", CARD_IDS)
def test_text_mode_image_is_all_zeros(env_id: str) -> None:
    env = _make(env_id, obs_mode="text", image_size=(160, 240))
    obs, _ = env.reset(seed=6)
    assert obs["image"].shape == (160, 240, 3)
    assert obs["image"].dtype == np.uint8
    assert not obs["image"].any()
    assert obs["text"]


# --------------------------------------------------------------------------------------------
# Levels
# --------------------------------------------------------------------------------------------


def test_reset_level_option_sets_and_persists() -> None:
    env = _make(NUMBERLINE)
    _, info = env.reset(seed=0)
    assert info["level"] == 0
    _, info = env.reset(seed=0, options={"level": 3})
    assert info["level"] == 3
    assert env.unwrapped.level == 3  # type: ignore[attr-defined]
    for seed in range(1, 6):
        _, info = env.reset(seed=seed)
        assert info["level"] == 3
    _, info = env.reset(options={"level": 1})
    assert info["level"] == 1


def test_level_changes_the_game() -> None:
    def positions(level: int) -> list[int]:
        env = _make(NUMBERLINE, level=level)
        out = []
        for seed in range(20):
            _, info = env.reset(seed=seed)
            target, current = (int(part.split("=")[1]) for part in info["state_key"].split("|"))
            out += [target, current]
        return out

    assert max(positions(0)) <= 5
    top = positions(4)
    assert max(top) <= 100
    assert max(top) > 20


def test_level_given_to_make_is_reported() -> None:
    _, info = _make(NUMBERLINE, level=2).reset(seed=0)
    assert info["level"] == 2


def test_numpy_integer_level_is_accepted() -> None:
    _, info = _make(NUMBERLINE).reset(seed=0, options={"level": np.int64(2)})
    assert info["level"] == 2
    assert type(info["level"]) is int


# --------------------------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        ({"level": 5}, ["level=5", "0..4"]),
        ({"level": -1}, ["level=-1", "0..4"]),
        ({"level": True}, ["level=True", "0..4"]),
        ({"level": "1"}, ["level='1'", "0..4"]),
        ({"obs_mode": "rgb"}, ["obs_mode='rgb'", "'image+text'", "'image'", "'text'"]),
        ({"image_size": 10}, ["image_size=", "(height, width)", SIDES]),
        ({"image_size": (300,)}, ["image_size=(300,)", SIDES]),
        ({"image_size": (300, 5000)}, ["image_size=(300, 5000)", SIDES]),
        ({"image_size": "300"}, ["image_size='300'", SIDES]),
        ({"image_size": True}, ["image_size=True", SIDES]),
        ({"image_size": (300.0, 300.0)}, ["image_size=(300.0, 300.0)", SIDES]),
        ({"reward_variant": "gigpo"}, ["reward_variant='gigpo'", "'rl4vlm'", "'verl-agent'"]),
        ({"render_mode": "window"}, ["render_mode='window'", "'rgb_array'", "'ansi'", "'human'"]),
        ({"action_format": "xml"}, ["action_format='xml'", "'json'", "'tags'", "'plain'", "'auto'"]),
        ({"action_match": "fuzzy"}, ["action_match='fuzzy'", "'strict'", "'lenient'"]),
    ],
)
def test_bad_argument_raises_naming_it_and_the_choices(kwargs: dict[str, Any], fragments: list[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's own warning about an unknown render_mode
        with pytest.raises(ValueError) as excinfo:
            _make(NUMBERLINE, **kwargs)
    for fragment in fragments:
        assert fragment in str(excinfo.value)


@pytest.mark.parametrize(
    ("options", "fragments"),
    [
        ({"level": 9}, ['options["level"]=9', "0..4"]),
        ({"lvl": 1}, ["unknown options ['lvl']", "'level'"]),
        ({"level": 1, "seed": 3}, ["unknown options ['seed']", "'level'"]),
    ],
)
def test_bad_reset_option_raises_naming_it(options: dict[str, Any], fragments: list[str]) -> None:
    env = _make(NUMBERLINE)
    with pytest.raises(ValueError) as excinfo:
        env.reset(seed=0, options=options)
    for fragment in fragments:
        assert fragment in str(excinfo.value)


def test_rejected_reset_does_not_change_the_level() -> None:
    env = _make(NUMBERLINE)
    env.reset(seed=0)
    with pytest.raises(ValueError):
        env.reset(seed=0, options={"level": 4, "typo": True})
    _, info = env.reset(seed=0)
    assert info["level"] == 0


# --------------------------------------------------------------------------------------------
# Image size, render, reset order
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", CARD_IDS)
@pytest.mark.parametrize(("image_size", "shape"), [(128, (128, 128, 3)), ((200, 320), (200, 320, 3)), ((320, 200), (320, 200, 3))])
def test_image_size(env_id: str, image_size: Any, shape: tuple[int, int, int]) -> None:
    env = _make(env_id, image_size=image_size, render_mode="rgb_array")
    obs, _ = env.reset(seed=2)
    assert obs["image"].shape == shape
    assert env.observation_space["image"].shape == shape
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(env.render(), obs["image"])
    obs, *_ = env.step(_oracle(env))
    assert obs["image"].shape == shape


def test_ansi_render_shows_mission_state_and_actions() -> None:
    env = _make(NUMBERLINE, render_mode="ansi", obs_mode="text")
    obs, _ = env.reset(seed=3)
    text = env.render()
    assert text == f"Mission: {obs['mission']}\n{obs['text']}\nActions: -, +\n"


def test_step_before_reset_raises_reset_needed() -> None:
    with pytest.raises(gym.error.ResetNeeded):
        _make(NUMBERLINE).step("+")


def test_unwrapped_step_before_reset_raises_reset_needed() -> None:
    from rl4vlm_gym.envs.cards.numberline import NumberLine

    with pytest.raises(gym.error.ResetNeeded):
        NumberLine().step("+")


# --------------------------------------------------------------------------------------------
# Determinism
# --------------------------------------------------------------------------------------------

DIGEST_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, sys
    import gymnasium as gym
    import rl4vlm_gym

    def digests(env_id, seed):
        env = gym.make(env_id)
        obs, info = env.reset(seed=seed)
        image = obs["image"]
        reset = hashlib.sha256(repr((image.shape, image.dtype.str)).encode() + image.tobytes()).hexdigest()
        rollout = hashlib.sha256(image.tobytes())
        for _ in range(6):
            obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
            rollout.update(obs["image"].tobytes())
            rollout.update(repr((obs["text"], reward, terminated, truncated, info)).encode())
            if terminated or truncated:
                break
        return reset, rollout.hexdigest()

    out = {}
    for env_id in sys.argv[1].split(","):
        for seed in (0, 1, 2**31 + 5):
            out[f"{env_id}|{seed}"] = digests(env_id, seed)
    print(json.dumps(out))
    """
)


def _digests_in_subprocesses(hash_seeds: list[str], cwd: str) -> list[dict[str, list[str]]]:
    procs = []
    for hash_seed in hash_seeds:
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", DIGEST_SCRIPT, ",".join(CARD_IDS)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=cwd,
            )
        )
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=SUBPROCESS_TIMEOUT)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def test_same_seed_gives_byte_identical_images_across_processes(tmp_path: Any) -> None:
    first, second = _digests_in_subprocesses(["0", "4242"], str(tmp_path))
    assert first == second
    assert sorted(first) == sorted(f"{i}|{s}" for i in CARD_IDS for s in (0, 1, 2**31 + 5))
    for env_id in CARD_IDS:
        resets = {first[f"{env_id}|{seed}"][0] for seed in (0, 1, 2**31 + 5)}
        assert len(resets) > 1, f"{env_id}: every seed drew the same image"
    # ... and this process agrees with them
    namespace: dict[str, Any] = {}
    exec(DIGEST_SCRIPT.split("out = {}")[0], namespace)
    assert list(namespace["digests"](NUMBERLINE, 1)) == first[f"{NUMBERLINE}|1"]


@pytest.mark.parametrize("env_id", CARD_IDS)
def test_infos_hold_no_wall_clock_values(env_id: str) -> None:
    def rollout() -> list[dict[str, Any]]:
        env = _make(env_id)
        _, info = env.reset(seed=9)
        infos = [info]
        for action in ["nonsense", None, None, None, None]:
            time.sleep(0.01)
            _, _, terminated, truncated, info = env.step(action if action is not None else _oracle(env))
            infos.append(info)
            if terminated or truncated:
                break
        return infos

    first = rollout()
    second = rollout()
    assert first == second
    for info in first:
        assert {"success", "progress", "level", "state_key", "optimal_steps"} <= set(info)
        json.dumps(info)  # plain values only
        assert 0.0 <= info["progress"] <= 1.0
        assert type(info["optimal_steps"]) is int


# --------------------------------------------------------------------------------------------
# Optimal steps: computed once per episode, at reset only where the plan is cheap or asked for
# --------------------------------------------------------------------------------------------


def _counting(expensive: bool) -> tuple[type, list[int]]:
    from rl4vlm_gym.envs.cards.numberline import NumberLine

    calls: list[int] = []

    class Counting(NumberLine):
        EXPENSIVE_PLAN = expensive

        def _optimal_steps(self) -> int | None:
            calls.append(self.elapsed_steps)
            return super()._optimal_steps()

    return Counting, calls


def test_cheap_plan_is_reported_at_reset_and_computed_once() -> None:
    from rl4vlm_gym.core import NOT_COMPUTED

    Counting, calls = _counting(expensive=False)
    env = Counting(level=0, obs_mode="text")
    _, info = env.reset(seed=5)
    assert calls == [0] and info["optimal_steps"] == env.optimal_steps > 0 and calls == [0]
    assert env.step(env.oracle_action())[4]["optimal_steps"] == info["optimal_steps"] and calls == [0]
    env.reset(seed=6)
    assert calls == [0, 0], "once per episode"
    lazy = Counting(level=0, obs_mode="text", optimal_steps_at_reset=False)  # a cheap env may opt out too
    assert lazy.reset(seed=5)[1]["optimal_steps"] == NOT_COMPUTED and calls == [0, 0]


def test_expensive_plan_waits_until_asked_and_keeps_its_value() -> None:
    from rl4vlm_gym.core import NOT_COMPUTED

    Counting, calls = _counting(expensive=True)
    env = Counting(level=0, obs_mode="text")
    with pytest.raises(gym.error.ResetNeeded):
        _ = env.optimal_steps
    _, info = env.reset(seed=5)
    assert info["optimal_steps"] == NOT_COMPUTED == -2 and not calls
    obs, _, _, _, info = env.step(env.oracle_action())
    assert info["optimal_steps"] == NOT_COMPUTED and not calls
    optimal = env.optimal_steps
    assert optimal > 0 and env.optimal_steps == optimal and calls == [1]
    assert env.step(env.oracle_action())[4]["optimal_steps"] == optimal  # once asked, every info carries it
    assert env.reset(seed=5)[1]["optimal_steps"] == NOT_COMPUTED, "a new episode asks again"
    eager = Counting(level=0, obs_mode="text", optimal_steps_at_reset=True)
    assert eager.reset(seed=5)[1]["optimal_steps"] == optimal and calls == [1, 0]


@pytest.mark.parametrize("value", ["yes", 1, 0.0])
def test_optimal_steps_at_reset_must_be_a_bool(value: Any) -> None:
    with pytest.raises(ValueError, match=f"optimal_steps_at_reset={value!r} must be True, False or None"):
        _make(NUMBERLINE, optimal_steps_at_reset=value)


# --------------------------------------------------------------------------------------------
# Import hygiene
# --------------------------------------------------------------------------------------------

ENV_MODULES = [
    f"rl4vlm_gym.envs.cards.{name}"
    for name in (
        "numberline",
        "ezpoints",
        "points24",
        "points",
        "blackjack",
        "blackjack_oracle",
        "deck",
        "points_oracle",
        "layout",
        "renderer",
    )
]
HEAVY_ROOTS = {"torch", "pyglet", "selenium", "pygame", "transformers", "miniworld"}

IMPORT_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import rl4vlm_gym
    before = sorted(sys.modules)
    import gymnasium as gym
    env = gym.make("rl4vlm/NumberLine-v0")
    env.reset(seed=0)
    env.step("+")
    after = sorted(sys.modules)
    print(json.dumps({"before": before, "after": after}))
    """
)


def test_import_is_light_and_lazy(tmp_path: Any) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_SCRIPT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=SUBPROCESS_TIMEOUT,
    )
    assert proc.returncode == 0, proc.stderr
    modules = json.loads(proc.stdout.strip().splitlines()[-1])
    before, after = set(modules["before"]), set(modules["after"])
    assert "rl4vlm_gym" in before
    assert not {m.split(".")[0] for m in before} & HEAVY_ROOTS
    assert not set(ENV_MODULES) & before
    # making an env loads its own module, and still no window toolkit
    assert "rl4vlm_gym.envs.cards.numberline" in after
    assert "rl4vlm_gym.envs.cards.ezpoints" not in after
    assert not {m.split(".")[0] for m in after} & HEAVY_ROOTS


@pytest.mark.parametrize("env_id", [*CARD_IDS, "rl4vlm/ColourNaming-v0", "rl4vlm/Household-v0"])
def test_reset_with_options_still_obeys_the_seed(env_id: str) -> None:
    """``reset(seed=s, options={"level": k})`` is the episode of seed s at level k: the same in a
    fresh env, the same as ``make(level=k).reset(seed=s)``, and different for another seed."""

    def episode(env: gym.Env, **reset: Any) -> tuple[str, bytes, str]:
        obs, info = env.reset(**reset)
        return info["state_key"], obs["image"].tobytes(), obs["text"]

    top = len(env_card(env_id).levels) - 1
    for level in sorted({0, top}):
        first = episode(_make(env_id), seed=11, options={"level": level})
        again = _make(env_id)
        again.reset(seed=99)  # an env that has played another seed before
        assert episode(again, seed=11, options={"level": level}) == first, (
            f"{env_id}: reset(seed=11, options={{'level': {level}}}) gave another episode the second time: "
            "the seed is ignored when options are given"
        )
        assert episode(_make(env_id, level=level), seed=11) == first, (
            f"{env_id}: reset(seed=11, options={{'level': {level}}}) differs from make(level={level}).reset(seed=11)"
        )
    others = {episode(_make(env_id), seed=seed, options={"level": top}) for seed in range(11, 19)}
    assert len(others) > 1, f"{env_id}: eight seeds with options gave one episode: the seed is ignored"
