"""Every replacement of a third-party internal, in one list, each checked before it is made.

Some of our speed and determinism comes from replacing or restating a few private parts of the
libraries we build on (MiniWorld's texture loader and collision test, TextWorld's parsers and PDDL
set-up, pyglet's start-up, openenv-core's session table, NLE's ``libnethack.so``). A private part may
change in any release, and a replacement written for the old one would then silently do something
else. So each replacement is a :class:`Patch` in :data:`PATCHES`: what it replaces (``targets``), the
versions of the distribution it was written for, and a fingerprint of each target taken from that
version: the SHA-256 of its source code (``inspect.getsource``: the same on every Python version), or
of the file a path names. The place that makes the replacement (``site``) asks :func:`guard` first;
when the installed version is outside the range or a fingerprint differs, the patch is refused:
a :class:`PatchRefusedWarning` names the patch and what differed, and the library's own code stays
in place (slower, or with the behaviour the ``fallback`` field describes, never wrong silently).

``docs/patches.md`` is the page for people; ``tests/test_patches.py`` holds each fingerprint to the
installed library and proves each fallback. To write a new patch: add its entry here with the
fingerprints :func:`fingerprint` gives for the installed version, call :func:`guard` (or
:func:`assign`) at its site, and add it to both tests.

This module imports nothing but the standard library; a target's module is imported only when its
patch is checked, by the family that needs it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
import os
import re
import threading
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PATCHES", "Patch", "PatchRefusedWarning", "assign", "check", "fingerprint", "guard", "original", "patch", "resolve"]


class PatchRefusedWarning(RuntimeWarning):
    """A patch was not made: the library it replaces is not the one it was written for."""


@dataclass(frozen=True)
class Patch:
    """One replacement of a third-party internal.

    Args:
        name: how warnings, docs and tests name it.
        distribution: the installed distribution that owns the targets (as ``pip`` names it).
        versions: the versions the patch was written for: comma-separated clauses such as
            ``">=2.1.0,<2.2"`` (``==``, ``!=``, ``>=``, ``<=``, ``>``, ``<`` on release numbers).
        targets: what is replaced, restated or relied on, as ``"module:attribute.path"``, each with
            the first 16 hex digits of its fingerprint (:func:`fingerprint`) in those versions.
        site: where our replacement lives (``"module:attribute"``, in this package).
        kind: ``"assigned"`` (we assign over the target), ``"overridden"`` (a subclass of ours
            restates the target), ``"called"`` (we call or read the target's privates) or ``"binary"``
            (we patch the file the target names).
        why: what the replacement buys.
        fallback: what happens when the patch is refused.
    """

    name: str
    distribution: str
    versions: str
    targets: Mapping[str, str]
    site: str
    kind: str
    why: str
    fallback: str


PATCHES: tuple[Patch, ...] = (
    Patch(
        name="miniworld-texture-load",
        distribution="miniworld",
        versions="==2.1.0",
        targets={"miniworld.opengl:Texture.load": "ca5f374eb0c5105c"},
        site="rl4vlm_gym.envs.navigation.textures:install",
        kind="assigned",
        why="pyglet converts an RGB texture to RGBA with a regular expression (4 s for the brick wall, 6-8 s at "
        "each process's first reset); ours converts with numpy and gives GL the same bytes",
        fallback="MiniWorld's own loader: the same frames, seconds slower at each process's first reset",
    ),
    Patch(
        name="miniworld-intersect",
        distribution="miniworld",
        versions="==2.1.0",
        targets={"miniworld.miniworld:MiniWorldEnv.intersect": "b0edb0bba59c9c64"},
        site="rl4vlm_gym.envs.navigation.worlds:LevelledWorld.intersect",
        kind="overridden",
        why="MiniWorld's collision test costs 0.14 ms a call in numpy on 3-vectors and the oracle's planner makes "
        "hundreds of thousands per plan; ours gives the same verdict from the walls' geometry computed once",
        fallback="every call goes to MiniWorld's intersect: the same verdicts, the oracle's plans slower",
    ),
    Patch(
        name="miniworld-texture-paths",
        distribution="miniworld",
        versions="==2.1.0",
        targets={"miniworld.opengl:Texture.get": "932ba638197da6f1", "miniworld.utils:get_file_path": "4f2f5ae9b8f24c6e"},
        site="rl4vlm_gym.envs.navigation.textures:remember_paths",
        kind="called",
        why="Texture.get reads its memo of each texture's files (tex_paths) but never fills it, so each room of each "
        "reset looks for up to ten files through os.path.realpath (a fifth of a Maze reset's CPU); ours fills the memo "
        "with the paths Texture.get's own search finds",
        fallback="MiniWorld looks for the files at every call: the same textures and frames, resets slower",
    ),
    Patch(
        name="miniworld-worlds-without-gl",
        distribution="miniworld",
        versions="==2.1.0",
        targets={
            "miniworld.miniworld:MiniWorldEnv.__init__": "32011923696b2794",
            "miniworld.miniworld:MiniWorldEnv.reset": "cd2b3e13fc481402",
            "miniworld.entity:MeshEnt.__init__": "562c68df15af356e",
            "miniworld.objmesh:ObjMesh.__init__": "abd16e0eca46f769",
            "miniworld.objmesh:ObjMesh._load_mtl": "273fc23bb7c95fa6",
        },
        site="rl4vlm_gym.envs.navigation.nogl:swapped",
        kind="assigned",
        why="a world drawn by a render process is built and reset in the env's process too (for the planner, the "
        "text and the physics), where MiniWorld would make GL objects: for those blocks the names its constructor, "
        "reset and meshes call (pyglet, FrameBuffer, glEnable, Texture, ObjMesh) stand for inert objects of the same "
        "sizes, and a mesh's extents are computed as ObjMesh.__init__ computes them (_extents, its _load_mtl called)",
        fallback="worlds are built with GL in the env's process and drawn there (no render process): the same worlds "
        "and frames, and the env's process holds a GL context",
    ),
    Patch(
        name="miniworld-proximity",
        distribution="miniworld",
        versions="==2.1.0",
        targets={
            "miniworld.miniworld:MiniWorldEnv.near": "c5bacca9c8b2b633",
            "miniworld.miniworld:Room.point_inside": "60a86b13c3c0a871",
        },
        site="rl4vlm_gym.envs.navigation.worlds:LevelledWorld.near",
        kind="overridden",
        why="the oracle's planner asks whether the goal is near (and on Sidewalk whether the agent is in the street, "
        "SidewalkWorld.in_street) at every pose it reaches, each a numpy call on 3-vectors; ours decides on Python "
        "floats where the answer is clear by 1e-9 and asks MiniWorld where it is not: the same verdicts",
        fallback="MiniWorld's near and point_inside answer every call: the same verdicts, the oracle's plans slower",
    ),
    Patch(
        name="textworld-parse-cache",
        distribution="textworld",
        versions="==1.7.0",
        targets={
            "textworld.envs.pddl.textgen:_parse_and_convert": "449a494829320c03",
            "textworld.logic:_parse_and_convert": "4d0401d024e4b974",
            "textworld.envs.pddl.textgen:copy_context": "ab04ca2ab859dd9e",
        },
        site="rl4vlm_gym.envs.household.pddl_cache:lighten_text_generation",
        kind="assigned",
        why="TextWorld's text generator parses the same few hundred grammar strings with tatsu at every step and "
        "deep-copies each derivation's context: ours keeps the parse trees and copies the contexts one level "
        "deep (an ALFWorld step 160 -> 83 ms)",
        fallback="TextWorld's own parsing and copying: the same text, steps about twice as slow",
    ),
    Patch(
        name="textworld-pddl-translation-cache",
        distribution="textworld",
        versions="==1.7.0",
        targets={
            "textworld.envs.pddl.logic:PddlState.__init__": "e94c2d7361e302c7",
            "textworld.envs.pddl.pddl:PddlEnv.load": "3280f48a2d5b468e",
            "textworld.envs.pddl.pddl:PddlEnv.reset": "a80cae96e20a3b86",
        },
        site="rl4vlm_gym.envs.household.pddl_cache:CachedPddlEnv",
        kind="overridden",
        why="PddlEnv translates the game's PDDL to SAS twice at every load and reset (~0.3 s each on a kitchen); "
        "ours restates load, reset and PddlState.__init__ with the translations and parsed grammar cached",
        fallback="CachedPddlEnv is TextWorld's PddlEnv: the same games, each load and reset ~0.6 s slower",
    ),
    Patch(
        name="textworld-shared-game",
        distribution="textworld",
        versions="==1.7.0",
        targets={
            "textworld.helpers:start": "d2475b56ccd1c15b",
            "textworld.envs:_guess_backend": "c8dcbf1e9a894854",
            "textworld.envs.wrappers.tw_inform7:GameData.load": "337a510d7f1d382a",
            "textworld.envs.wrappers.tw_inform7:StateTracking.load": "4de9b973cc746701",
        },
        site="rl4vlm_gym.envs.balrog.textworld_env:_start",
        kind="called",
        why="textworld.start loads the game's .json into a Game at every start (0.02-0.13 s; a kit check of a BALROG "
        "TextWorld id starts one game up to 18 times); ours restates start (_guess_backend's backend, then the Inform 7 "
        "wrappers, then load) with the backend holding the process's Game of that file in _game, which the wrappers' "
        "load takes instead of loading the .json, as textworld's own copy() shares a Game",
        fallback="textworld.start: each start loads the .json again, the same game and play, starts slower",
    ),
    Patch(
        name="pyglet-deferred-shadow-window",
        distribution="pyglet",
        versions="==1.5.31",
        targets={
            "pyglet.gl:_create_shadow_window": "f56c9d4c7852ffff",
            "pyglet.gl.base:Context.destroy": "6fb6c183467b9e93",
        },
        site="rl4vlm_gym.envs.navigation.gl:ensure_context",
        kind="called",
        why="pyglet makes its GL context (the shadow window) when pyglet.gl is imported, and a GL context does not "
        "survive fork: we import with options['shadow_window'] off and run pyglet's private start-up step "
        "(_create_shadow_window) at the first world, and release the context pyglet leaves current (Context.destroy "
        "switches to the shadow window), so importing or making an env leaves fork usable and any thread can render",
        fallback="pyglet makes its shadow window at import, as it does by itself: a process that imported the "
        "navigation envs cannot fork workers that render, and rendering stays in the importing thread",
    ),
    Patch(
        name="openenv-session-table",
        distribution="openenv-core",
        versions="==0.3.0",
        targets={
            "openenv.core.env_server.http_server:create_fastapi_app": "f09b8467960f8e40",
            "openenv.core.env_server.http_server:HTTPEnvServer.__init__": "9b11f79d431295b1",
            "openenv.core.env_server.http_server:HTTPEnvServer.register_routes": "bed99171fbe3c135",
            "openenv.core.env_server.http_server:HTTPEnvServer._destroy_session": "301cd781d5f522f3",
        },
        site="rl4vlm_gym.server.app:_server_of",
        kind="called",
        why="create_fastapi_app keeps its HTTPEnvServer to itself: we find it in the closure cells of the routes "
        "it registered and, at shutdown, close its sessions (_sessions, _destroy_session), so every env is closed",
        fallback="no HTTPEnvServer is found: sessions still open at shutdown are not closed by us (openenv-core's "
        "own behaviour), and app.state.openenv_server is None",
    ),
    Patch(
        name="openenv-lazy-mcp",
        distribution="openenv-core",
        versions="==0.3.0",
        targets={
            "rl4vlm_gym.server._openenv:CORE_INIT": "73a9691a8a1976fc",
            "rl4vlm_gym.server._openenv:ENV_SERVER_INIT": "44080affc9ebc98a",
            "rl4vlm_gym.server._openenv:HTTP_SERVER": "23a753c2e2b304a5",
        },
        site="rl4vlm_gym.server._openenv:import_openenv",
        kind="assigned",
        why="openenv-core's http_server imports its mcp_environment module (FastMCP and the MCP SDK: 1.2 s of CPU, "
        "60% of importing our server, in every process that serves or plays a remote env) for get_server_tools, "
        "called only for an env with an MCP server: while openenv-core is first imported, a stand-in module gives "
        "http_server a get_server_tools that imports the real one when called, and MCPEnvironment is imported on "
        "first access",
        fallback="openenv-core is imported as it is, FastMCP with it (1.2 s more in each process that imports the "
        "server or rl4vlm/Remote-v0)",
    ),
    Patch(
        name="openenv-idle-reaper",
        distribution="openenv-core",
        versions="==0.3.0",
        targets={
            "openenv.core.env_server.http_server:HTTPEnvServer._reap_idle_sessions": "6c2113ac949d12c0",
            "openenv.core.env_server.http_server:HTTPEnvServer._start_reaper": "bb56ab1e77c13267",
            "openenv.core.env_server.http_server:HTTPEnvServer._update_session_activity": "945e393c2bbd0761",
        },
        site="rl4vlm_gym.server.app:_reap_idle_sessions",
        kind="overridden",
        why="openenv-core's idle-session reaper looks every max(timeout / 4, 5) s, a floor no caller can lower: "
        "create_app(reap_every=...) gives the server an instance reaper that restates openenv-core's loop "
        "(_session_lock, _session_info's last_activity_at, _destroy_session) with that interval, so a short idle "
        "timeout is enforced within it (the test of reclaiming waits 0.1 s rounds, not 5 s)",
        fallback="reap_every is ignored: openenv-core's own reaper looks every max(idle_timeout / 4, 5) s",
    ),
    Patch(
        name="openenv-websocket-session",
        distribution="openenv-core",
        versions="==0.3.0",
        targets={
            "openenv.core.env_server.http_server:HTTPEnvServer._create_session": "1c95d7435d440256",
            "openenv.core.env_server.http_server:HTTPEnvServer.__init__": "9b11f79d431295b1",
            "openenv.core.env_server.http_server:HTTPEnvServer.register_routes": "bed99171fbe3c135",
            "openenv.core.env_server.http_server:HTTPEnvServer._update_session_activity": "945e393c2bbd0761",
            "openenv.core.env_server.http_server:HTTPEnvServer._destroy_session": "301cd781d5f522f3",
        },
        site="rl4vlm_gym.server.app:_note_session",
        kind="overridden",
        why="openenv-core's WebSocket handler reads an env's state on its event loop (an oracle's plan or a fresh "
        "render there held up every client and /health for seconds): the server gets an instance _create_session "
        "that calls openenv-core's and notes the session it made on the connection being served, and the transport "
        "answers state itself in the session's thread (_session_executors, _update_session_activity), as "
        "register_routes' handler answers it; and an instance _destroy_session that runs openenv-core's shielded "
        "(_destroy_to_the_end), since a handler cancelled between taking the session out of the table and closing "
        "its env left the env open",
        fallback="openenv-core answers state on its event loop: the same answers, and a slow state holds up the "
        "server's other clients while it is computed; a handler cancelled while its session closes may leave the "
        "session's env open",
    ),
    Patch(
        name="nethack-pinned-clock",
        distribution="balrog-nle",
        versions="==0.9.0",
        targets={"nle.nethack.nethack:DLPATH": "40186ea53388b962"},
        site="rl4vlm_gym.envs.balrog.nethack_clock:pinned_clock",
        kind="binary",
        why="NetHack reads the wall clock for its calendar (moon phase, Friday the 13th, night, birth time), so "
        "the same seed played another game on another day: our envs load a copy of libnethack.so whose clock "
        "reads 2000-01-01 12:00 UTC",
        fallback="NLE's own library: games follow the wall clock and local time zone, so a seed no longer decides "
        "the game on every day",
    ),
)
"""Every replacement of a third-party internal in this package."""

_BY_NAME = {entry.name: entry for entry in PATCHES}


def patch(name: str) -> Patch:
    """The entry of :data:`PATCHES` called ``name``."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no patch called {name!r}; the patches are {sorted(_BY_NAME)}") from None


def resolve(target: str) -> Any:
    """The object ``"module:attribute.path"`` names, as stored: a classmethod or staticmethod is
    returned as the descriptor in the class's ``__dict__`` (``inspect.getattr_static``), not bound."""
    owner, attribute = _owner_and_attribute(target)
    return inspect.getattr_static(owner, attribute)


_assigned: dict[str, tuple[Any, Any]] = {}
"""By target: the value :func:`assign` stored there and the value it replaced."""


def original(target: str) -> Any:
    """The library's own object at ``target``: what :func:`assign` replaced, while our replacement is
    still there; else what is there now (:func:`resolve`)."""
    current = resolve(target)
    stored = _assigned.get(target)
    return stored[1] if stored is not None and stored[0] is current else current


def _owner_and_attribute(target: str) -> tuple[Any, str]:
    module_name, _, path = target.partition(":")
    owner: Any = importlib.import_module(module_name)
    *parents, last = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    return owner, last


def fingerprint(value: Any) -> str:
    """The first 16 hex digits of the SHA-256 of ``value``'s source code, or of the file's bytes when
    ``value`` is a path (``str`` or ``os.PathLike``). A classmethod or staticmethod is fingerprinted by its
    function. Raises ``TypeError`` when there is no source to read."""
    if isinstance(value, (str, os.PathLike)):
        return hashlib.sha256(Path(value).read_bytes()).hexdigest()[:16]
    value = getattr(value, "__func__", value)  # classmethod, staticmethod, bound method
    return hashlib.sha256(inspect.getsource(value).encode("utf-8")).hexdigest()[:16]


def _release(text: str) -> tuple[int, ...]:
    """``"2.1.0"`` -> ``(2, 1, 0)``, trailing zeros dropped (``2.1`` == ``2.1.0``); a pre- or post-release
    suffix is ignored."""
    match = re.match(r"\s*v?(\d+(?:\.\d+)*)", text)
    if match is None:
        raise ValueError(f"cannot read the version {text!r}")
    numbers = [int(part) for part in match.group(1).split(".")]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return tuple(numbers)


_OPERATORS = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    "<": lambda a, b: a < b,
}


def version_in(version: str, versions: str) -> bool:
    """Whether ``version`` satisfies every clause of ``versions`` (``">=2.1,<2.2"``)."""
    for clause in versions.split(","):
        match = re.fullmatch(r"\s*(==|!=|>=|<=|>|<)\s*([\w.]+)\s*", clause)
        if match is None:
            raise ValueError(f"cannot read the version clause {clause!r} of {versions!r}")
        if not _OPERATORS[match.group(1)](_release(version), _release(match.group(2))):
            return False
    return True


def check(entry: Patch | str) -> list[str]:
    """What differs between the installed library and what ``entry`` was written for: an empty list
    when the patch may be made. Reads the installed version and each target's fingerprint now (of
    the library's own object where our replacement is in place: :func:`original`)."""
    entry = patch(entry) if isinstance(entry, str) else entry
    try:
        version = importlib.metadata.version(entry.distribution)
    except importlib.metadata.PackageNotFoundError:
        return [f"{entry.distribution} is not installed"]
    if not version_in(version, entry.versions):
        return [f"{entry.distribution} is {version}, not {entry.versions}"]
    differences = []
    for target, expected in entry.targets.items():
        try:
            found = fingerprint(original(target))
        except (ImportError, AttributeError, OSError, TypeError) as err:
            differences.append(f"{target} cannot be read ({type(err).__name__}: {err})")
            continue
        if found != expected:
            differences.append(f"{target} has fingerprint {found}, not {expected}")
    return differences


_verdicts: dict[tuple[str, tuple[int, ...]], tuple[tuple[Any, ...], bool]] = {}
"""guard's verdicts, by patch name and the identities of its targets (the objects are kept with the
verdict, so their ids are not reused): a target replaced by someone else is checked again."""
_lock = threading.Lock()


def guard(entry: Patch | str) -> bool:
    """Whether the patch may be made: :func:`check` once per process and set of targets. When it may
    not, warns :class:`PatchRefusedWarning` naming the patch, what differed and the fallback."""
    entry = patch(entry) if isinstance(entry, str) else entry
    try:
        objects = tuple(original(target) for target in entry.targets)
    except (ImportError, AttributeError):
        objects = ()
    key = (entry.name, tuple(id(obj) for obj in objects))
    with _lock:
        known = _verdicts.get(key)
        listed = entry is _BY_NAME.get(entry.name)  # a changed copy (a test's) is checked, never remembered
        if known is not None and listed:
            return known[1]
        differences = check(entry)
        if listed:
            _verdicts[key] = (objects, not differences)
    if differences:
        warnings.warn(
            f"rl4vlm_gym refused the patch {entry.name!r} ({entry.site}): {'; '.join(differences)}. "
            f"It was written for {entry.distribution} {entry.versions}; the library's own code is used instead: "
            f"{entry.fallback}. See docs/patches.md.",
            PatchRefusedWarning,
            stacklevel=2,
        )
    return not differences


def assign(entry: Patch | str, replacements: Mapping[str, Any]) -> bool:
    """Make an ``"assigned"`` patch: set each target of ``replacements`` (``{"module:attr.path": value}``,
    the values as they are to be stored, e.g. a ``classmethod``) if :func:`guard` allows it; else
    leave every target as it is. True when the replacements are in place (also when they already were)."""
    entry = patch(entry) if isinstance(entry, str) else entry
    unknown = set(replacements) - set(entry.targets)
    if unknown:
        raise ValueError(f"{sorted(unknown)} are not targets of the patch {entry.name!r}")
    if all(resolve(target) is value for target, value in replacements.items()):
        return True
    if not guard(entry):
        return False
    for target, value in replacements.items():
        owner, attribute = _owner_and_attribute(target)
        previous = inspect.getattr_static(owner, attribute)
        setattr(owner, attribute, value)
        _assigned[target] = (value, previous)
    return True
