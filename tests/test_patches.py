"""Every replacement of a third-party internal is listed, fingerprinted and guarded (rl4vlm_gym/patches.py).

Two tests per patch: its fingerprints match the installed library (this fails when the library
changes: look at what changed, then take the new fingerprints with ``patches.fingerprint``), and with
the target replaced by something else its site refuses, warns :class:`PatchRefusedWarning` naming
the patch, and leaves the library's own object in place (its fallback). And one test that no module
of ours assigns over a third-party object outside a listed site.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import inspect
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from rl4vlm_gym import patches
from rl4vlm_gym.patches import PATCHES, PatchRefusedWarning

ROOT = Path(__file__).resolve().parents[1]
NAMES = [entry.name for entry in PATCHES]


def _ready(entry: patches.Patch | str) -> None:
    """Import the targets' libraries the way our envs do (MiniWorld and pyglet headless, NLE quietly,
    openenv-core without Gradio);
    skip where the patched library is not installed (an extra left out: ``--no-skips`` fails the run)."""
    entry = patches.patch(entry) if isinstance(entry, str) else entry
    try:
        importlib.metadata.version(entry.distribution)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip(f"{entry.distribution} is not installed (the extra that patches it is left out)")
    if entry.distribution in ("miniworld", "pyglet"):
        from rl4vlm_gym.envs.navigation.gl import import_miniworld

        import_miniworld()
    elif entry.distribution == "balrog-nle":
        import rl4vlm_gym.envs.balrog.nethack  # noqa: F401
    elif entry.distribution == "openenv-core":
        import rl4vlm_gym.server  # noqa: F401 - openenv-core without its web UI (8 s of Gradio)


# -- the list ----------------------------------------------------------------------------------------


def test_the_list_is_well_formed() -> None:
    assert len(set(NAMES)) == len(NAMES)
    for entry in PATCHES:
        assert entry.kind in ("assigned", "overridden", "called", "binary"), entry.name
        assert entry.targets and all(len(fp) == 16 and int(fp, 16) >= 0 for fp in entry.targets.values()), entry.name
        module, _, attribute = entry.site.partition(":")
        assert module.startswith("rl4vlm_gym.") and attribute, entry.name
        assert entry.why and entry.fallback, entry.name
    with pytest.raises(KeyError, match="no patch called 'nope'"):
        patches.patch("nope")


def _page_entry(entry: patches.Patch) -> str:
    """The entry's section of docs/patches.md, as written from the list."""
    targets = "".join(f"  - `{target}` (fingerprint `{fp}`)\n" for target, fp in entry.targets.items())
    return (
        f"### `{entry.name}`\n\n- **replaces** ({entry.kind}), in {entry.distribution} {entry.versions}:\n{targets}"
        f"- **where**: `{entry.site}`\n- **why**: {entry.why}.\n- **if refused**: {entry.fallback}.\n"
    )


def test_the_page_lists_every_patch_as_the_module_does() -> None:
    page = (ROOT / "docs" / "patches.md").read_text(encoding="utf-8")
    listed = page.split("## The patches\n\n", 1)[1].split("## Not patches", 1)[0]
    assert listed == "\n".join(_page_entry(entry) for entry in PATCHES) + "\n", "rewrite docs/patches.md's list from PATCHES"


@pytest.mark.parametrize(
    ("version", "versions", "expected"),
    [
        ("2.1.0", "==2.1.0", True),
        ("2.1", "==2.1.0", True),  # trailing zeros do not count
        ("2.1.1", "==2.1.0", False),
        ("2.0.9", ">=2.1,<2.2", False),
        ("2.1.0", ">=2.1,<2.2", True),
        ("2.1.99", ">=2.1,<2.2", True),
        ("2.2.0", ">=2.1,<2.2", False),
        ("1.5.31", "!=1.5.31", False),
        ("1.7.0rc1", "<=1.7", True),
    ],
)
def test_version_ranges(version: str, versions: str, expected: bool) -> None:
    assert patches.version_in(version, versions) is expected


def test_a_range_that_cannot_be_read_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot read the version clause"):
        patches.version_in("1.0", "~=1.0")


# -- fingerprints: each patch's targets are the installed library's --------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_fingerprints_match_the_installed_library(name: str) -> None:
    entry = patches.patch(name)
    _ready(entry)
    assert patches.check(entry) == []
    for target in entry.targets:  # and every target is the library's own, wherever we replaced it
        assert patches.fingerprint(patches.original(target)) == entry.targets[target], target


@pytest.mark.parametrize("name", NAMES)
def test_a_changed_fingerprint_or_version_is_refused(name: str) -> None:
    entry = patches.patch(name)
    _ready(entry)
    target = next(iter(entry.targets))
    changed = dataclasses.replace(entry, targets={**entry.targets, target: "0" * 16})
    assert patches.check(changed) == [f"{target} has fingerprint {entry.targets[target]}, not {'0' * 16}"]
    older = dataclasses.replace(entry, versions="<0.0.1")
    assert patches.check(older) == [f"{entry.distribution} is {_version(entry)}, not <0.0.1"]
    with pytest.warns(PatchRefusedWarning, match=f"refused the patch '{name}'.*{entry.fallback[:20]}"):
        assert patches.guard(older) is False
    absent = dataclasses.replace(entry, distribution="not-a-distribution-of-ours")
    assert patches.check(absent) == ["not-a-distribution-of-ours is not installed"]


def _version(entry: patches.Patch) -> str:
    return importlib.metadata.version(entry.distribution)


def test_fingerprints_read_source_and_files(tmp_path: Path) -> None:
    def one() -> int:
        return 1

    def two() -> int:
        return 2

    assert patches.fingerprint(one) != patches.fingerprint(two)
    assert patches.fingerprint(classmethod(one)) == patches.fingerprint(one)
    (tmp_path / "a").write_bytes(b"a")
    (tmp_path / "b").write_bytes(b"b")
    assert patches.fingerprint(tmp_path / "a") != patches.fingerprint(str(tmp_path / "b"))
    assert patches.fingerprint(str(tmp_path / "a")) == "ca978112ca1bbdca"  # sha256(b"a")
    with pytest.raises(TypeError):
        patches.fingerprint(len)  # a builtin has no source: check() reports it as unreadable


# -- fallbacks: a changed target is refused, with a warning, and left in place --------------------------


def _refused(name: str):  # noqa: ANN202 - a context manager
    return pytest.warns(PatchRefusedWarning, match=f"refused the patch '{name}'")


def test_texture_load_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("miniworld-texture-load")
    from rl4vlm_gym.envs.navigation import gl, textures

    gl.import_miniworld()
    from miniworld import opengl

    def load(cls, tex_path):  # noqa: ANN001, ANN202 - a MiniWorld that changed its loader
        return None

    miniworlds = patches.original("miniworld.opengl:Texture.load")
    assert miniworlds.__func__ is not textures._load
    theirs = classmethod(load)
    monkeypatch.setattr(opengl.Texture, "load", theirs)
    with _refused("miniworld-texture-load"):
        assert textures.install() is False
    assert inspect.getattr_static(opengl.Texture, "load") is theirs
    monkeypatch.setattr(opengl.Texture, "load", miniworlds)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PatchRefusedWarning)
        assert textures.install() is True  # MiniWorld's own loader again: replaced, quietly
    assert opengl.Texture.load.__func__ is textures._load


def test_intersect_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("miniworld-intersect")
    import gymnasium as gym

    import rl4vlm_gym  # noqa: F401 - registers the ids
    from rl4vlm_gym.envs.navigation import worlds

    env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=(32, 32), obs_mode="text")
    env.reset(seed=0)
    world = env.unwrapped.world
    agent = world.agent
    theirs = worlds.MiniWorldEnv.intersect
    calls = []

    def intersect(self, ent, pos, radius):  # noqa: ANN001, ANN202 - a MiniWorld whose intersect changed
        calls.append(pos)
        return theirs(self, ent, pos, radius)

    assert world.intersect(agent, agent.pos, agent.radius) is None  # ours answers
    monkeypatch.setattr(worlds.MiniWorldEnv, "intersect", intersect)
    with _refused("miniworld-intersect"):
        assert world.intersect(agent, agent.pos, agent.radius) is None
    assert len(calls) == 1
    world.intersect(agent, agent.pos, agent.radius)  # refused once, quietly after
    assert len(calls) == 2
    env.close()


def test_texture_paths_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("miniworld-texture-paths")
    from miniworld import opengl

    from rl4vlm_gym.envs.navigation import textures

    monkeypatch.setattr(opengl.Texture, "tex_paths", {})  # this test's own memo
    textures.remember_paths(["concrete"])  # MiniWorld's files of the texture (its randomized variants) as its search finds them
    assert [Path(p).name for p in opengl.Texture.tex_paths["concrete"]] == [f"concrete_{i}.png" for i in range(1, 5)]
    theirs = opengl.Texture.get

    def get(cls, tex_name, rng=None):  # noqa: ANN001, ANN202 - a MiniWorld whose Texture.get changed
        return theirs(tex_name, rng)

    monkeypatch.setattr(opengl.Texture, "get", classmethod(get))
    with _refused("miniworld-texture-paths"):
        textures.remember_paths(["brick_wall"])
    assert "brick_wall" not in opengl.Texture.tex_paths  # left to MiniWorld's own look-up


def test_worlds_without_gl_fall_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("miniworld-worlds-without-gl")
    import gymnasium as gym
    from miniworld import objmesh

    from rl4vlm_gym.envs.navigation import nogl

    assert nogl.available()
    theirs = objmesh.ObjMesh._load_mtl

    def load_mtl(self, model_file):  # noqa: ANN001, ANN202 - a MiniWorld whose material loader changed
        return theirs(self, model_file)

    monkeypatch.setattr(objmesh.ObjMesh, "_load_mtl", load_mtl)
    with _refused("miniworld-worlds-without-gl"):
        assert not nogl.available()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PatchRefusedWarning)
        env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", render_process=True)
        obs, _ = env.reset(seed=0)
    world = env.unwrapped.world
    assert world.scene is None and world.shadow_window is not None  # built and drawn with GL here
    assert obs["image"].any()
    env.close()


def test_proximity_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("miniworld-proximity")
    import gymnasium as gym

    import rl4vlm_gym  # noqa: F401 - registers the ids
    from rl4vlm_gym.envs.navigation import worlds

    env = gym.make("rl4vlm/MiniWorld-Sidewalk-v1", image_size=(32, 32), obs_mode="text")
    env.reset(seed=0)
    world = env.unwrapped.world
    goal = world.goal_entity()
    near, inside = worlds.MiniWorldEnv.near, worlds.Room.point_inside
    calls = []

    def changed_near(self, ent0, ent1=None):  # noqa: ANN001, ANN202 - a MiniWorld whose near changed
        calls.append("near")
        return near(self, ent0, ent1)

    def changed_inside(self, p):  # noqa: ANN001, ANN202
        calls.append("inside")
        return inside(self, p)

    assert (world.near(goal), world.in_street()) == (
        near(world, goal),
        bool(inside(world.street, world.agent.pos)),
    )  # ours answers
    for cls, name, changed in ((worlds.MiniWorldEnv, "near", changed_near), (worlds.Room, "point_inside", changed_inside)):
        monkeypatch.setattr(cls, name, changed)  # either target changed: both tests refused
        with _refused("miniworld-proximity"):
            assert world.near(goal) == near(world, goal)
        assert world.in_street() is bool(inside(world.street, world.agent.pos))
        assert calls == [name.removeprefix("point_")], "refused, MiniWorld's own test answers"
        calls.clear()
        monkeypatch.undo()
    env.close()


def test_text_generation_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("textworld-parse-cache")
    from textworld import logic
    from textworld.envs.pddl import textgen

    from rl4vlm_gym.envs.household import pddl_cache

    def parse_and_convert(text, **options):  # noqa: ANN001, ANN202, ARG001 - a TextWorld whose parser changed
        return None

    targets = patches.patch("textworld-parse-cache").targets
    own = {target: patches.original(target) for target in targets}  # TextWorld's
    monkeypatch.setattr(textgen, "_parse_and_convert", parse_and_convert)
    before = {target: patches.resolve(target) for target in targets}
    with _refused("textworld-parse-cache"):
        assert pddl_cache.lighten_text_generation() is False
    assert textgen._parse_and_convert is parse_and_convert
    assert {target: patches.resolve(target) for target in targets} == before  # none of the three replaced
    monkeypatch.setattr(textgen, "_parse_and_convert", own["textworld.envs.pddl.textgen:_parse_and_convert"])
    monkeypatch.setattr(logic, "_parse_and_convert", own["textworld.logic:_parse_and_convert"])
    monkeypatch.setattr(textgen, "copy_context", own["textworld.envs.pddl.textgen:copy_context"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", PatchRefusedWarning)
        assert pddl_cache.lighten_text_generation() is True
    assert getattr(textgen._parse_and_convert, "memoized", False) and getattr(logic._parse_and_convert, "memoized", False)
    assert textgen.copy_context is pddl_cache._copy_context


def test_translation_cache_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("textworld-pddl-translation-cache")
    import textworld
    from textworld.envs import PddlEnv

    from rl4vlm_gym.envs.household import pddl_cache

    loaded = []

    def load(self, filename_or_data):  # noqa: ANN001, ANN202 - a TextWorld whose load changed
        loaded.append(filename_or_data)

    monkeypatch.setattr(PddlEnv, "load", load)
    env = pddl_cache.CachedPddlEnv(textworld.EnvInfos())
    with _refused("textworld-pddl-translation-cache"):
        env.load({"a game": "of another TextWorld"})
    assert loaded == [{"a game": "of another TextWorld"}]  # TextWorld's load ran, ours did not
    assert PddlEnv.load is load
    env.close()


def test_shared_game_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("textworld-shared-game")
    import textworld
    from textworld.envs.wrappers import tw_inform7

    from rl4vlm_gym.envs.balrog import textworld_env
    from rl4vlm_gym.envs.balrog.textworld_games import make_game

    loads = []
    own_load = tw_inform7.GameData.load

    def load(self, gamefile):  # noqa: ANN001, ANN202 - a TextWorld whose wrapper's load changed
        loads.append(gamefile)
        own_load(self, gamefile)

    monkeypatch.setattr(tw_inform7.GameData, "load", load)
    monkeypatch.setattr(textworld_env, "_game_data", lambda path: pytest.fail("the shared Game was used"))
    path = str(make_game("coin_collector", 0))
    with _refused("textworld-shared-game"):
        env = textworld_env._start(path, textworld.EnvInfos(admissible_commands=True))
    assert loads == [path]  # textworld.start made the env: its wrapper loaded the .json itself
    assert env.reset().admissible_commands
    env.close()


def test_shadow_window_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("pyglet-deferred-shadow-window")
    from rl4vlm_gym.envs.navigation import gl

    gl.import_miniworld()
    pyglet_gl = sys.modules["pyglet.gl"]

    def create_shadow_window() -> None:  # a pyglet whose start-up changed
        raise AssertionError("not to be called")

    monkeypatch.setattr(pyglet_gl, "_create_shadow_window", create_shadow_window)
    with _refused("pyglet-deferred-shadow-window"):
        assert gl.deferring_shadow_window() is False
    assert pyglet_gl._create_shadow_window is create_shadow_window


def test_a_refused_shadow_window_is_pyglets_own_and_worlds_still_render() -> None:
    """In a fresh process whose pyglet differs from the fingerprint, pyglet makes its shadow window at
    import (its own behaviour) and MiniWorld's worlds render as with the patch: the same frame."""
    _ready("pyglet-deferred-shadow-window")
    script = textwrap.dedent(
        """
        import dataclasses, warnings, sys
        import gymnasium as gym
        import numpy as np
        from rl4vlm_gym import patches
        import rl4vlm_gym

        name = "pyglet-deferred-shadow-window"
        entry = patches.patch(name)
        changed = dataclasses.replace(entry, targets={t: "0" * 16 for t in entry.targets})
        patches._BY_NAME[name] = changed
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from rl4vlm_gym.envs.navigation import gl
            gl.import_miniworld()
            made_at_import = sys.modules["pyglet.gl"]._shadow_window is not None
            env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=(32, 32))
            obs, _ = env.reset(seed=3)
        refused = [str(w.message) for w in caught if issubclass(w.category, patches.PatchRefusedWarning)]
        print(made_at_import, len(refused), name in refused[0], int(obs["image"].astype(np.int64).sum()))
        """
    )
    reference = textwrap.dedent(
        """
        import gymnasium as gym
        import numpy as np
        import rl4vlm_gym
        env = gym.make("rl4vlm/MiniWorld-OneRoom-v1", image_size=(32, 32))
        obs, _ = env.reset(seed=3)
        print(int(obs["image"].astype(np.int64).sum()))
        """
    )
    runs = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for code in (script, reference)
    ]
    (refused, refused_err), (ours, ours_err) = (run.communicate(timeout=120) for run in runs)
    assert [run.returncode for run in runs] == [0, 0], refused_err + ours_err
    made_at_import, warned, named, pixels = refused.split()
    assert (made_at_import, warned, named) == ("True", "1", "True"), refused_err
    assert pixels == ours.strip()


def test_session_table_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _ready("openenv-session-table")
    from openenv.core.env_server.http_server import HTTPEnvServer

    from rl4vlm_gym.server.app import create_app
    from rl4vlm_gym.server.environment import Catalog

    async def destroy_session(self, session_id):  # noqa: ANN001, ANN202 - an openenv-core whose sessions changed
        raise AssertionError("not to be called")

    monkeypatch.setattr(HTTPEnvServer, "_destroy_session", destroy_session)
    with _refused("openenv-session-table"):
        app = create_app(Catalog.of("rl4vlm/NumberLine-v0"))
    assert app.state.openenv_server is None  # our shutdown hook closes nothing of openenv-core's
    assert HTTPEnvServer._destroy_session is destroy_session
    monkeypatch.undo()
    assert create_app(Catalog.of("rl4vlm/NumberLine-v0")).state.openenv_server is not None


def test_websocket_session_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # Another openenv-core's session making: the server does not wrap it (nothing set on the instance) and
    # openenv-core answers state itself (on its loop: slower for the others, the same answer).
    _ready("openenv-websocket-session")
    from fastapi.testclient import TestClient
    from openenv.core.env_server.http_server import HTTPEnvServer

    from rl4vlm_gym.server.app import create_app
    from rl4vlm_gym.server.environment import Catalog

    theirs = HTTPEnvServer._create_session

    async def create_session(self):  # noqa: ANN001, ANN202 - an openenv-core whose session making changed
        return await theirs(self)

    monkeypatch.setattr(HTTPEnvServer, "_create_session", create_session)
    with _refused("openenv-websocket-session"):
        app = create_app(Catalog.of("rl4vlm/NumberLine-v0"))
    assert not {"_create_session", "_destroy_session"} & set(vars(app.state.openenv_server))
    with TestClient(app) as client, client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"seed": 1, "make_kwargs": {"image_size": [64, 64]}}})
        assert ws.receive_json()["type"] == "observation"
        ws.send_json({"type": "state"})
        assert ws.receive_json()["data"]["step_count"] == 0
    monkeypatch.undo()
    assert {"_create_session", "_destroy_session"} <= set(
        vars(create_app(Catalog.of("rl4vlm/NumberLine-v0")).state.openenv_server)
    )


def test_pinned_clock_falls_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _ready(patches.patch("nethack-pinned-clock"))  # first: NLE imported quietly
    from nle.nethack import nethack as nle_nethack

    from rl4vlm_gym.envs.balrog import nethack_clock

    other = tmp_path / "libnethack.so"
    other.write_bytes(b"\x7fELF another NLE build")
    monkeypatch.setattr(nle_nethack, "DLPATH", str(other))
    with _refused("nethack-pinned-clock"), nethack_clock.pinned_clock() as library:
        assert nle_nethack.DLPATH == str(other) == str(library)  # NLE's own library, unpatched
    assert nle_nethack.DLPATH == str(other)
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("error", PatchRefusedWarning)
        with nethack_clock.pinned_clock() as library:
            assert nle_nethack.DLPATH == str(library) != str(nethack_clock.NLE_LIBRARY)


# -- nothing replaced outside the list ----------------------------------------------------------------------


def _assignments_over_imports(source: str) -> list[tuple[str, int]]:
    """(the enclosing function, line) of every assignment or ``setattr`` whose target is reached from a
    name imported from a third-party module: ``opengl.Texture.load = ...``, ``setattr(textgen, ...)``."""
    tree = ast.parse(source)
    third_party: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            third_party |= {(a.asname or a.name).split(".")[0] for a in node.names if _third_party(a.name)}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _third_party(node.module or ""):
            third_party |= {a.asname or a.name for a in node.names}
    found = []

    def root(node: ast.AST) -> str | None:
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            inside = (
                f"{where}.{child.name}".lstrip(".")
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                else where
            )
            targets = []
            if isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                while any(isinstance(t, (ast.Tuple, ast.List, ast.Starred)) for t in targets):  # a, b.c = ...
                    targets = [u for t in targets for u in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]
                    targets = [t.value if isinstance(t, ast.Starred) else t for t in targets]
                targets = [t for t in targets if isinstance(t, ast.Attribute)]
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "setattr" and child.args:
                targets = [child.args[0]]
            if any(root(t) in third_party for t in targets):
                found.append((inside, child.lineno))
            visit(child, inside)

    visit(tree, "")
    return found


_MAYBE = re.compile(r"^[^#\n]*?\b(?!self\.|cls\.)[A-Za-z_]\w*(?:\.\w+)+[ \t]*(?:[,:][^=\n]*)?[-+*/|&]?=(?!=)|\bsetattr\(", re.M)
"""A line that may assign over an attribute: the AST scan below reads only files that have one."""


def _third_party(module: str) -> bool:
    top = module.split(".")[0]
    return bool(top) and top not in sys.stdlib_module_names and top != "rl4vlm_gym"


def test_the_scan_finds_a_replacement() -> None:
    source = "from miniworld import opengl\nimport pyglet.gl\n\ndef f():\n    opengl.Texture.load = 1\n    setattr(pyglet.gl, 'x', 2)\n"
    assert _assignments_over_imports(source) == [("f", 5), ("f", 6)] and _MAYBE.search(source)
    swap = "from nle.nethack import nethack\n\nclass C:\n    def g(self):\n        saved, nethack.DLPATH = nethack.DLPATH, 'x'\n"
    assert _assignments_over_imports(swap) == [("C.g", 5)] and _MAYBE.search(swap)
    assert _assignments_over_imports("import sys\nsys.argv = []\n") == []  # the standard library's are not patches


def test_no_third_party_object_is_replaced_outside_a_listed_site() -> None:
    sites = {(entry.site.split(":")[0], entry.site.split(":")[1]) for entry in PATCHES}
    unlisted = []
    folders = (
        (ROOT / "rl4vlm_gym", "rl4vlm_gym"),
        (ROOT / "envs", "rl4vlm_gym.envs"),
        (ROOT / "baselines", "rl4vlm_gym.baselines"),
    )
    for folder, package in folders:
        for path in sorted(folder.rglob("*.py")):
            module = ".".join((package, *path.relative_to(folder).with_suffix("").parts)).removesuffix(".__init__")
            text = path.read_text(encoding="utf-8")
            if not _MAYBE.search(text):  # no attribute assignment but self's or cls's, no setattr: nothing to parse
                continue
            for where, line in _assignments_over_imports(text):
                if not any(
                    module == site_module and (where == site or where.startswith(site + ".")) for site_module, site in sites
                ):
                    unlisted.append(f"{path.relative_to(ROOT)}:{line} ({where or 'module level'})")
    assert unlisted == [], "list these replacements in rl4vlm_gym/patches.py (and guard them), or make them elsewhere"
