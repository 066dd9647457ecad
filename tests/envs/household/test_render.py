"""Tests for the household image, ``rl4vlm_gym.envs.household.renderer``."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

from rl4vlm_gym.envs.household.kinds import OBJECTS
from rl4vlm_gym.envs.household.renderer import render
from rl4vlm_gym.envs.household.view import Item, View

# Views built by code that a subprocess can run too, for the cross-process determinism test.
VIEWS_CODE = """
from rl4vlm_gym.envs.household.view import Item, View
HOUSE = ("cabinet 1", "cabinet 2", "countertop 1", "fridge 1", "microwave 1", "sinkbasin 1", "desk 1",
         "coffeemachine 1")
VIEWS = [
    View(HOUSE, room="kitchen"),
    View(HOUSE, "countertop 1", "countertop", contents=(Item("apple 1", "apple", sliced=True),
         Item("mug 2", "mug", clean=True, hot=True), Item("houseplant 1", "houseplant")), room="kitchen"),
    View(HOUSE, "fridge 1", "fridge", openable=True, is_open=True, contents=(Item("egg 1", "egg", cool=True),),
         holding=Item("knife 1", "knife")),
    View(HOUSE, "cabinet 2", "cabinet", openable=True),
    View(HOUSE, "desk 1", "desk", contents=(Item("desklamp 1", "desklamp", on=True),), lit=True, room="bedroom"),
    View(HOUSE, "coffeemachine 1", "coffeemachine", holding=Item("cup 1", "cup", cool=True)),
]
"""
_namespace: dict = {}
exec(VIEWS_CODE, _namespace)
VIEWS: list[View] = _namespace["VIEWS"]
HOUSE: tuple[str, ...] = _namespace["HOUSE"]

SIZE = (300, 300)


def _digest(size: tuple[int, int]) -> str:
    sha = hashlib.sha256()
    for view in VIEWS:
        sha.update(render(view, size).tobytes())
    return sha.hexdigest()


def _changed_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Indices of the image rows where ``a`` and ``b`` differ."""
    return np.flatnonzero((a != b).any(axis=(1, 2)))


# --- shape, dtype, ownership ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [(300, 300), (64, 64), (240, 320), (320, 240), (128, 512), (1024, 1024)])
def test_shape_and_dtype(size: tuple[int, int]) -> None:
    for view in VIEWS:
        frame = render(view, size)
        assert frame.shape == (*size, 3)
        assert frame.dtype == np.uint8
        assert frame.flags.c_contiguous
        assert frame.std() > 10  # something is drawn, not a flat fill


def test_returns_a_fresh_writable_array() -> None:
    first = render(VIEWS[1], SIZE)
    assert first.flags.writeable
    keep = first.copy()
    first[...] = 0  # the caller owns the array: scribbling on it must not reach the caches
    second = render(VIEWS[1], SIZE)
    assert not np.shares_memory(first, second)
    assert np.array_equal(second, keep)


@pytest.mark.parametrize("size", [(300,), (300, 300, 3), (10, 300), (300.5, 300), "300x300", None])
def test_bad_sizes_raise(size: object) -> None:
    with pytest.raises(ValueError, match="size"):
        render(VIEWS[0], size)  # type: ignore[arg-type]


# --- determinism ---------------------------------------------------------------------------------


def test_same_view_same_bytes() -> None:
    for view in VIEWS:
        assert render(view, SIZE).tobytes() == render(view, SIZE).tobytes()
    # an equal but distinct View object gives the same image
    exec(VIEWS_CODE, fresh := {})
    assert [render(v, SIZE).tobytes() for v in fresh["VIEWS"]] == [render(v, SIZE).tobytes() for v in VIEWS]


def test_same_bytes_in_another_process() -> None:
    # A different hash seed in the child catches any dependence on hash() or set order.
    script = VIEWS_CODE + (
        "import hashlib\n"
        "from rl4vlm_gym.envs.household.renderer import render\n"
        "sha = hashlib.sha256()\n"
        "for view in VIEWS:\n"
        "    sha.update(render(view, (240, 320)).tobytes())\n"
        "print(sha.hexdigest())\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == _digest((240, 320))


# --- every fact of the view changes the image ----------------------------------------------------

_CABINET = View(HOUSE, "cabinet 1", "cabinet", openable=True, is_open=True, contents=(Item("plate 1", "plate"),))
_PAIRS = {
    "open vs closed": (View(HOUSE, "cabinet 1", "cabinet", openable=True, is_open=True),
                       View(HOUSE, "cabinet 1", "cabinet", openable=True, is_open=False)),
    "holding vs not": (_CABINET, View(**{**_CABINET.__dict__, "holding": Item("mug 1", "mug")})),
    "holding another": (View(HOUSE, holding=Item("mug 1", "mug")), View(HOUSE, holding=Item("mug 2", "mug"))),
    "holding a hot mug": (View(HOUSE, holding=Item("mug 1", "mug")), View(HOUSE, holding=Item("mug 1", "mug", hot=True))),
    "clean badge": (_CABINET, View(**{**_CABINET.__dict__, "contents": (Item("plate 1", "plate", clean=True),)})),
    "lit vs not": (View(HOUSE, "desk 1", "desk"), View(HOUSE, "desk 1", "desk", lit=True)),
    "another place of a kind": (View(HOUSE, "cabinet 1", "cabinet", True), View(HOUSE, "cabinet 2", "cabinet", True)),
    "another kind": (View(HOUSE, "desk 1", "desk"), View(HOUSE, "desk 1", "sidetable")),
    "middle vs place": (View(HOUSE), View(HOUSE, "countertop 1", "countertop")),
    "room": (View(HOUSE, room="kitchen"), View(HOUSE, room="bathroom")),
    "another item": (_CABINET, View(**{**_CABINET.__dict__, "contents": (Item("plate 2", "plate"),)})),
    "one more item": (_CABINET, View(**{**_CABINET.__dict__, "contents": (*_CABINET.contents, Item("cup 1", "cup"))})),
    "one receptacle fewer": (View(HOUSE), View(HOUSE[:-1])),
}


@pytest.mark.parametrize("name", list(_PAIRS))
def test_different_views_differ(name: str) -> None:
    a, b = _PAIRS[name]
    assert not np.array_equal(render(a, SIZE), render(b, SIZE))


def test_each_state_badge_looks_different() -> None:
    states = ["clean", "hot", "cool", "sliced", "on"]
    frames = [render(View(HOUSE, "desk 1", "desk", contents=(Item("apple 1", "apple", **{s: True}),)), SIZE)
              for s in states]
    frames.append(render(View(HOUSE, "desk 1", "desk", contents=(Item("apple 1", "apple"),)), SIZE))
    for i in range(len(frames)):
        for j in range(i):
            assert not np.array_equal(frames[i], frames[j]), (states + ["none"])[i]


def test_holding_only_changes_the_bottom_strip() -> None:
    a, b = _PAIRS["holding vs not"]
    rows = _changed_rows(render(a, SIZE), render(b, SIZE))
    assert rows.size and rows.min() >= 0.8 * SIZE[0]


def test_place_name_only_changes_the_header() -> None:
    a, b = _PAIRS["another place of a kind"]
    rows = _changed_rows(render(a, SIZE), render(b, SIZE))
    assert rows.size and rows.max() < 0.15 * SIZE[0]


def test_lit_lamp_also_lights_the_scene() -> None:
    a, b = _PAIRS["lit vs not"]
    rows = _changed_rows(render(a, SIZE), render(b, SIZE))
    assert rows.max() > 0.15 * SIZE[0]  # not just the LAMP ON tag in the header
    # the glow is warm: more red than blue where it differs
    diff = render(b, SIZE).astype(int) - render(a, SIZE).astype(int)
    scene = diff[int(0.15 * SIZE[0]) :]
    assert scene[..., 0].sum() > scene[..., 2].sum()


def test_open_vs_closed_changes_the_drawing_not_only_the_tag() -> None:
    a, b = _PAIRS["open vs closed"]
    rows = _changed_rows(render(a, SIZE), render(b, SIZE))
    assert rows.max() > 0.5 * SIZE[0]


# --- closed receptacles hide their contents ------------------------------------------------------


def test_closed_receptacle_shows_no_contents() -> None:
    shut = View(HOUSE, "fridge 1", "fridge", openable=True, is_open=False)
    listed = View(HOUSE, "fridge 1", "fridge", openable=True, is_open=False, contents=(Item("apple 1", "apple"),))
    open_empty = View(HOUSE, "fridge 1", "fridge", openable=True, is_open=True)
    assert np.array_equal(render(shut, SIZE), render(listed, SIZE))
    assert not np.array_equal(render(shut, SIZE), render(open_empty, SIZE))


def test_open_empty_differs_from_open_with_contents() -> None:
    empty = View(HOUSE, "fridge 1", "fridge", openable=True, is_open=True)
    full = View(HOUSE, "fridge 1", "fridge", openable=True, is_open=True, contents=(Item("apple 1", "apple"),))
    assert not np.array_equal(render(empty, SIZE), render(full, SIZE))


# --- robustness ----------------------------------------------------------------------------------

_ODD_KINDS = ["sink", "houseplant", "coffeemachine", "toaster", "cart", "ottoman", "bathtub", "papertowelroll",
              "glassbottle", "showerdoor", "blinds", "", "Ünïcode thing", "x" * 80]


@pytest.mark.parametrize("kind", _ODD_KINDS)
@pytest.mark.parametrize("openable", [False, True])
def test_unknown_kinds_render(kind: str, openable: bool) -> None:
    place = f"{kind} 1"
    item = Item(f"{kind} 2", kind, clean=True, hot=True, cool=True, sliced=True, on=True)
    for view in (
        View((place, "cabinet 1"), place, kind, openable, openable, (item,), item, True, "attic"),
        View((place, "cabinet 1"), place, kind, openable, False, (), item),
        View((place,), room="attic"),
    ):
        frame = render(view, SIZE)
        assert frame.shape == (*SIZE, 3)


def test_unknown_kinds_get_a_stable_distinct_colour() -> None:
    a = render(View(HOUSE, "toaster 1", "toaster"), SIZE)
    b = render(View(HOUSE, "toaster 1", "blinds"), SIZE)
    assert not np.array_equal(a, b)


def test_kind_is_inferred_from_the_place_when_missing() -> None:
    assert np.array_equal(render(View(HOUSE, "fridge 1", None), SIZE), render(View(HOUSE, "fridge 1", "fridge"), SIZE))


@pytest.mark.parametrize("size", [(300, 300), (64, 64), (240, 320), (96, 600)])
def test_many_receptacles_and_items(size: tuple[int, int]) -> None:
    many = tuple(f"cabinet {i}" for i in range(1, 201))
    items = tuple(Item(f"butterknife {i}", "butterknife", clean=i % 3 == 0) for i in range(120))
    for view in (View(many[:60]), View(many), View(many, "countertop 1", "countertop", contents=items[:30]),
                 View(many, "countertop 1", "countertop", contents=items, holding=items[0])):
        assert render(view, size).shape == (*size, 3)


def test_overflow_is_counted_not_dropped() -> None:
    # Beyond what fits, the "+N more" card changes with the count, so the image does too.
    items = tuple(Item(f"spoon {i}", "spoon") for i in range(100))
    a = render(View(HOUSE, "countertop 1", "countertop", contents=items), SIZE)
    b = render(View(HOUSE, "countertop 1", "countertop", contents=items[:-1]), SIZE)
    assert not np.array_equal(a, b)
    many = tuple(f"drawer {i}" for i in range(1, 301))
    assert not np.array_equal(render(View(many), SIZE), render(View(many[:-1]), SIZE))


def test_sixty_receptacles_all_get_a_tile() -> None:
    # The last name is drawn (not folded into "+N more") when changing it changes the image.
    names = tuple(f"{kind} {i}" for kind in ("cabinet", "drawer", "countertop", "stoveburner") for i in range(1, 16))
    renamed = (*names[:-1], "stoveburner 99")
    assert not np.array_equal(render(View(names), SIZE), render(View(renamed), SIZE))


def test_thirty_items_all_get_a_card() -> None:
    kinds = sorted(OBJECTS)[:30]
    items = tuple(Item(f"{kind} {i}", kind, hot=i % 4 == 0) for i, kind in enumerate(kinds, 1))
    renamed = (*items[:-1], Item(f"{kinds[-1]} 99", kinds[-1]))
    a = render(View(HOUSE, "countertop 1", "countertop", contents=items), SIZE)
    b = render(View(HOUSE, "countertop 1", "countertop", contents=renamed), SIZE)
    assert not np.array_equal(a, b)


def test_state_text_names_the_states_the_image_badges() -> None:
    from rl4vlm_gym.envs.household.view import describe

    plain = View(("sinkbasin 1",), place="sinkbasin 1", kind="sinkbasin", holding=Item("apple 1", "apple"))
    washed = View(("sinkbasin 1",), place="sinkbasin 1", kind="sinkbasin", holding=Item("apple 1", "apple", clean=True, sliced=True))
    assert not np.array_equal(render(plain, (128, 128)), render(washed, (128, 128)))
    assert describe(plain).endswith("You are carrying: a apple 1.")
    assert describe(washed).endswith("You are carrying: a apple 1 (clean, sliced).")
    hot = View(("microwave 1",), place="microwave 1", kind="microwave", openable=True, is_open=True, contents=(Item("mug 1", "mug", hot=True),))
    assert "In it, you see a mug 1 (hot)." in describe(hot)


# --- the held-out look (the visual transfer axis) ------------------------------------------------


def test_held_out_look_draws_every_view_otherwise() -> None:
    from rl4vlm_gym.envs.household.renderer import LOOKS, _held_out_palette

    assert LOOKS == ("default", "held-out")
    for view in VIEWS:
        default, held_out = render(view, SIZE), render(view, SIZE, "held-out")
        assert held_out.shape == default.shape and held_out.dtype == np.uint8
        assert (held_out != default).any(axis=2).mean() > 0.3  # a new palette: most pixels change
        # not the palette alone: the drawings are line art (a view without drawings is the overview's tiles)
        assert not np.array_equal(held_out, _held_out_palette(default))
        assert render(view, SIZE).tobytes() == default.tobytes()  # drawing held-out leaves the default's caches alone
    with pytest.raises(ValueError, match="look"):
        render(VIEWS[0], SIZE, "sepia")


def test_held_out_palette_keeps_luma_and_turns_hue() -> None:
    from rl4vlm_gym.envs.household.renderer import _held_out_palette

    colours = np.array([[[200, 40, 40], [40, 160, 60], [240, 230, 200], [128, 128, 128], [0, 0, 0], [255, 255, 255]]], np.uint8)
    turned = _held_out_palette(colours).astype(float)
    luma = np.array([0.299, 0.587, 0.114])
    assert np.abs(turned @ luma - colours.astype(float) @ luma).max() <= 1.5  # the text keeps its contrast (clipping: 1.1)
    assert np.array_equal(turned[0, 3:], colours[0, 3:])  # greys, black and white stay
    assert np.abs(turned[0, :3] - colours[0, :3]).max(axis=1).min() > 20  # every colour moves


def test_held_out_env_plays_the_same_episode() -> None:
    import gymnasium as gym

    import rl4vlm_gym  # noqa: F401

    envs = [gym.make("rl4vlm/Household-v0", image_size=(96, 96), appearance=look) for look in ("default", "held-out")]
    (a, _), (b, _) = (env.reset(seed=5) for env in envs)
    for _ in range(3):
        assert a["text"] == b["text"] and a["mission"] == b["mission"] and not np.array_equal(a["image"], b["image"])
        action = envs[0].unwrapped.oracle_action()
        a, b = envs[0].step(action)[0], envs[1].step(action)[0]
