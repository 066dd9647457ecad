"""NetHack's calendar pinned: NLE's ``libnethack.so`` patched so the game reads one fixed moment, in UTC.

NetHack reads the wall clock for its calendar: the moon's phase (full moon: +1 Luck and "You are
lucky!  Full moon tonight."; new moon: "Be careful!  New moon tonight."), Friday the 13th (-1
Luck), night and midnight (how undead and gremlins behave), and the game's birth time
(``ubirthday``), which sets shop prices, an anthole's ants and T-shirt slogans. In local time:
the same seed played a different game on another day or in another time zone. Our contract is
that the seed decides the game, in any process, on any day, anywhere.

:func:`pinned_library` makes once, in the cache (``$RL4VLM_GYM_CACHE/nle``, default
``~/.cache/rl4vlm_gym/nle``), a copy of ``balrog-nle`` 0.9.0's ``libnethack.so`` in which

- ``getnow()``, NetHack's reading of the clock for its calendar and its game timer, returns
  :data:`CLOCK`;
- ``u_init``'s ``time(&ubirthday)`` calls a ``time()`` of ours (written in ``getnow``'s
  freed bytes) that returns :data:`CLOCK`; those two were the library's only calls of ``time``;
- the imported ``localtime`` and ``mktime`` are renamed ``gmtime`` and ``timegm`` (same
  signatures, same glibc version) in the dynamic string table, the names the loader binds (the
  debugging symbol table keeps the old names), so no ``TZ`` moves the calendar.

:data:`CLOCK` is 2000-01-01 12:00:00 UTC: a Saturday (not Friday the 13th), noon (neither
``night()``, 22:00-5:59, nor ``midnight()``), and moon phase 7 of NetHack's 0-7 (a waning
crescent: neither new, 0, nor full, 4). Left alone: ``gettimeofday``, which stamps ttyrec
headers only (recording is off here). The patch is refused, with an error that says why, unless
the library is byte for byte the build it was written for (SHA-256, and each site's bytes).

NLE copies ``nle.nethack.nethack.DLPATH`` into a memory file when a game is made and loads it
again at each reset (to reset NetHack's globals), so the library must be chosen before the game
exists: :func:`pinned_clock` points ``DLPATH`` at the copy while our envs make their game, and
restores it after, so other NLE users in the process keep NLE's library.

This is the patch ``nethack-pinned-clock`` of :mod:`rl4vlm_gym.patches`: where ``DLPATH`` names
another build than balrog-nle 0.9.0's, :func:`pinned_clock` refuses it with a warning and the game
loads NLE's own library (its calendar then follows the wall clock).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from rl4vlm_gym.extras import require

require("nethack", "BALROG's NetHack and MiniHack envs")  # before importing it: an error naming the extra

from nle.nethack import nethack as nle_nethack

from rl4vlm_gym import cache, patches

CLOCK = 946_728_000  # 2000-01-01 12:00:00 UTC (see the module's docstring)
NLE_LIBRARY = Path(nle_nethack.DLPATH)  # NLE's own, as installed
LIBRARY_SHA256 = "40186ea53388b9626c0e31df37f90ab0b65b77d73e1035f0cf0bd0e96249ed73"  # balrog-nle 0.9.0, x86-64 Linux
PATCHED_SHA256 = "1618ea64eaf39b92059ae7d8221134cbc77f4f42117f03d1cea2313cbbc6b5b5"  # the library after PATCHES

# Addresses in this build; its code and dynamic string table are loaded at their file offsets.
GETNOW = 0x103AE0  # getnow(): 33 bytes, then 15 bytes of padding before getyear()
OUR_TIME = GETNOW + 11  # our time(), right after the new getnow()
U_INIT_TIME_CALL = 0x21BF76  # u_init's `call time@plt` (time(&ubirthday))
TIME_PLT = 0x589C0
DYNSTR = 0x153A0  # .dynstr: the import names "localtime" (+19429) and "mktime" (+19464), each used by one symbol only
_CLOCK = struct.pack("<q", CLOCK)


def _call(site: int, target: int) -> bytes:
    """``call target`` (E8 rel32) placed at ``site``."""
    return b"\xe8" + struct.pack("<i", target - (site + 5))


# (file offset, the bytes there in LIBRARY_SHA256's build, the bytes written instead)
PATCHES: tuple[tuple[int, bytes, bytes], ...] = (
    (
        GETNOW,
        # sub rsp,0x18; mov qword [rsp+8],0; lea rdi,[rsp+8]; call time@plt; mov rax,[rsp+8]; add rsp,0x18; ret; padding
        bytes.fromhex("4883ec1848c744240800000000488d7c2408e8c94ef5ff488b4424084883c418c3" "66662e0f1f8400000000000f1f4000"),
        (
            b"\x48\xb8" + _CLOCK + b"\xc3"  # getnow: movabs rax, CLOCK; ret
            + b"\x48\xb8" + _CLOCK  # our time(t): movabs rax, CLOCK
            + b"\x48\x85\xff\x74\x03"  # test rdi, rdi; jz ret (t may be NULL)
            + b"\x48\x89\x07\xc3"  # mov [rdi], rax; ret
        ).ljust(48, b"\xcc"),  # the rest int3: never run
    ),
    (U_INIT_TIME_CALL, _call(U_INIT_TIME_CALL, TIME_PLT), _call(U_INIT_TIME_CALL, OUR_TIME)),
    (DYNSTR + 19429, b"localtime\0", b"gmtime\0\0\0\0"),
    (DYNSTR + 19464, b"mktime\0", b"timegm\0"),
)


def patch(library: bytes) -> bytes:
    """``library`` (NLE's ``libnethack.so``) with NetHack's calendar pinned to :data:`CLOCK` in UTC.

    Raises ``ValueError`` unless ``library`` is the build the patch was written for."""
    digest = hashlib.sha256(library).hexdigest()
    if digest != LIBRARY_SHA256:
        raise ValueError(
            f"libnethack.so has SHA-256 {digest}, not balrog-nle 0.9.0's {LIBRARY_SHA256}: NetHack's clock is pinned "
            "by patching that build's machine code (the x86-64 Linux wheel), so another NLE build is refused"
        )
    patched = bytearray(library)
    for offset, before, after in PATCHES:
        assert patched[offset : offset + len(before)] == before and len(before) == len(after), hex(offset)
        patched[offset : offset + len(after)] = after
    assert hashlib.sha256(patched).hexdigest() == PATCHED_SHA256, "the patch wrote other bytes than reviewed"
    return bytes(patched)


def cache_dir() -> Path:
    """``$RL4VLM_GYM_CACHE/nle`` (default ``~/.cache/rl4vlm_gym/nle``), beside the TextWorld games."""
    return cache.cache_dir("nle")


def pinned_library() -> Path:
    """The patched library in the cache, made from NLE's on first use.

    Several processes may make it at once (``pytest -n auto``): each writes a temporary file beside
    it and renames it into place, so a file under the final name is always complete."""
    target = cache_dir() / f"libnethack-clock-{PATCHED_SHA256[:16]}.so"
    if _verified(target):
        return target
    data = patch(NLE_LIBRARY.read_bytes())
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, scratch = tempfile.mkstemp(dir=target.parent, prefix=".libnethack-", suffix=".so")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(scratch, target)
    except BaseException:
        os.unlink(scratch)
        raise
    _seen[target] = _identity(target)
    return target


_seen: dict[Path, tuple[int, ...]] = {}
"""Cache files hashed (or written) by this process, by path: their identity then."""


def _identity(path: Path) -> tuple[int, ...]:
    stat = path.stat()
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


def _verified(path: Path) -> bool:
    """Whether ``path`` holds the patched library: hashed once per process and file (3.7 ms of a
    44 ms MiniHack make), again only if the file changed since."""
    try:
        identity = _identity(path)
    except OSError:
        return False
    if _seen.get(path) == identity:
        return True
    if hashlib.sha256(path.read_bytes()).hexdigest() != PATCHED_SHA256:
        return False
    _seen[path] = identity
    return True


@contextlib.contextmanager
def pinned_clock() -> Iterator[Path]:
    """NLE games made inside load the patched library (NLE copies ``DLPATH`` when a game is made).

    ``DLPATH`` is a module global: our games are made one thread at a time under a lock, so each
    gets the patched library (an NLE game of someone else's made meanwhile in another thread could too).
    Where ``DLPATH`` is not the build the patch was written for, it is left alone (a warning says so)
    and the path yielded is NLE's."""
    with _dlpath_lock:
        if not patches.guard("nethack-pinned-clock"):
            yield Path(nle_nethack.DLPATH)
            return
        library = pinned_library()
        saved, nle_nethack.DLPATH = nle_nethack.DLPATH, str(library)
        try:
            yield library
        finally:
            nle_nethack.DLPATH = saved


_dlpath_lock = threading.Lock()
