"""Behaviour of the string spaces Unicode and UnicodeTuple, alone and inside vector envs."""

from __future__ import annotations

import copy
import functools
import json
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector.utils import (
    batch_space,
    concatenate,
    create_empty_array,
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

from rl4vlm_gym.spaces import SharedStrings, Unicode, UnicodeTuple

# --------------------------------------------------------------------------------------------
# Unicode
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Hello, wörld! 🙂", True),
        ("", True),
        ("x" * 16, True),
        ("🙂" * 16, True),  # code points, not bytes
        ("\ud800", True),  # a lone surrogate is still a str
        ("中文<b>&{j}:\"\n\t", True),
        ("x" * 17, False),
        (3, False),
        (None, False),
        (b"abc", False),
        (["a"], False),
        (("a",), False),
    ],
)
def test_unicode_contains(value: object, expected: bool) -> None:
    assert Unicode(max_length=16).contains(value) is expected
    assert (value in Unicode(max_length=16)) is expected


@pytest.mark.parametrize("max_length", [0, -1, 1.5, "8", None])
def test_unicode_rejects_a_bad_max_length(max_length: object) -> None:
    with pytest.raises(ValueError, match="max_length must be a positive int"):
        Unicode(max_length)  # type: ignore[arg-type]


def test_unicode_rejects_a_bool_max_length() -> None:
    with pytest.raises(ValueError, match="max_length"):
        Unicode(True)


def test_unicode_samples_from_its_vocabulary() -> None:
    vocabulary = ("stand", "hit", "go to desk 1")
    space = Unicode(64, vocabulary=vocabulary, seed=0)
    samples = [space.sample() for _ in range(200)]
    assert set(samples) == set(vocabulary)


def test_unicode_samples_without_vocabulary_are_members() -> None:
    space = Unicode(5, seed=1)
    samples = [space.sample() for _ in range(200)]
    assert all(isinstance(s, str) and len(s) <= 5 for s in samples)
    assert all(space.contains(s) for s in samples)
    assert len(set(samples)) > 20  # actually random


@pytest.mark.parametrize("vocabulary", [(), ("a", "b", "c", "d")])
def test_unicode_seeded_sampling_is_reproducible(vocabulary: tuple[str, ...]) -> None:
    first = Unicode(32, vocabulary=vocabulary, seed=123)
    second = Unicode(32, vocabulary=vocabulary, seed=123)
    assert [first.sample() for _ in range(30)] == [second.sample() for _ in range(30)]
    first.seed(7)
    second.seed(7)
    assert [first.sample() for _ in range(30)] == [second.sample() for _ in range(30)]
    other = Unicode(32, vocabulary=vocabulary, seed=124)
    first.seed(123)
    assert [first.sample() for _ in range(30)] != [other.sample() for _ in range(30)]


def test_unicode_sample_refuses_mask_and_probability() -> None:
    with pytest.raises(NotImplementedError):
        Unicode(8).sample(mask=np.ones(3))
    with pytest.raises(NotImplementedError):
        Unicode(8).sample(probability=np.ones(3))


def test_unicode_equality_and_hash() -> None:
    assert Unicode(5) == Unicode(5)
    assert hash(Unicode(5)) == hash(Unicode(5))
    assert Unicode(5) != Unicode(6)
    assert Unicode(5) != UnicodeTuple(5, 5)
    assert len({Unicode(5), Unicode(5), Unicode(6)}) == 2
    assert repr(Unicode(7)) == "Unicode(max_length=7)"


def test_unicode_pickles() -> None:
    space = Unicode(9, vocabulary=("a",))
    clone = pickle.loads(pickle.dumps(space))
    assert clone == space
    assert clone.vocabulary == ("a",)


def test_unicode_json_round_trip() -> None:
    space = Unicode(64)
    values = ["Hello, wörld! 🙂", "", "中文", "\ud800", 'quote " and \\ backslash']
    restored = space.from_jsonable(json.loads(json.dumps(space.to_jsonable(values))))
    assert restored == values


def test_unicode_is_not_flattenable() -> None:
    assert Unicode(8).is_np_flattenable is False


# --------------------------------------------------------------------------------------------
# UnicodeTuple
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (("go 1", "look"), True),
        ((), True),
        (("🙂🙂🙂🙂", "中文"), True),
        (("a", "b", "c"), True),
        (("a", "b", "c", "d"), False),  # too many items
        (("abcde",), False),  # item too long
        (("a\0b",), False),  # NUL separates items in shared memory
        (["a", "b"], False),  # a list is not a tuple
        (("a", 3), False),
        ("ab", False),
        (None, False),
    ],
)
def test_unicode_tuple_contains(value: object, expected: bool) -> None:
    assert UnicodeTuple(max_items=3, max_length=4).contains(value) is expected


@pytest.mark.parametrize("max_items", [-1, 1.5, "3"])
def test_unicode_tuple_rejects_bad_max_items(max_items: object) -> None:
    with pytest.raises(ValueError, match="max_items must be a non-negative int"):
        UnicodeTuple(max_items)  # type: ignore[arg-type]


def test_unicode_tuple_samples_are_members_and_reproducible() -> None:
    first = UnicodeTuple(max_items=4, max_length=6, seed=5)
    second = UnicodeTuple(max_items=4, max_length=6, seed=5)
    a = [first.sample() for _ in range(50)]
    b = [second.sample() for _ in range(50)]
    assert a == b
    assert all(first.contains(x) for x in a)
    assert {len(x) for x in a} == {0, 1, 2, 3, 4}


def test_unicode_tuple_equality_hash_and_repr() -> None:
    assert UnicodeTuple(3, 4) == UnicodeTuple(3, 4)
    assert hash(UnicodeTuple(3, 4)) == hash(UnicodeTuple(3, 4))
    assert UnicodeTuple(3, 4) != UnicodeTuple(3, 5)
    assert UnicodeTuple(3, 4) != UnicodeTuple(4, 4)
    assert UnicodeTuple(3, 4) != Unicode(4)
    assert UnicodeTuple(3, 4).max_length == 4
    assert repr(UnicodeTuple(3, 4)) == "UnicodeTuple(max_items=3, max_length=4)"


def test_unicode_tuple_json_round_trip() -> None:
    space = UnicodeTuple(4, 16)
    values = [("go to desk 1", "look"), (), ("🙂", "\ud800", "")]
    dumped = json.dumps(space.to_jsonable(values))
    assert json.loads(dumped) == [["go to desk 1", "look"], [], ["🙂", "\ud800", ""]]
    assert space.from_jsonable(json.loads(dumped)) == values


# --------------------------------------------------------------------------------------------
# Gymnasium vector utilities
# --------------------------------------------------------------------------------------------


def test_batch_space_gives_a_tuple_of_copies() -> None:
    assert batch_space(Unicode(8), 3) == spaces.Tuple([Unicode(8)] * 3)
    assert batch_space(UnicodeTuple(2, 5), 2) == spaces.Tuple([UnicodeTuple(2, 5)] * 2)


def test_batch_space_of_an_observation_dict() -> None:
    obs_space = spaces.Dict(
        {
            "image": spaces.Box(0, 255, (4, 5, 3), np.uint8),
            "text": Unicode(8),
            "actions": UnicodeTuple(2, 3),
        }
    )
    batched = batch_space(obs_space, 3)
    assert batched["image"].shape == (3, 4, 5, 3)
    assert batched["text"] == spaces.Tuple([Unicode(8)] * 3)
    assert batched["actions"] == spaces.Tuple([UnicodeTuple(2, 3)] * 3)
    sample = batched.sample()
    assert batched.contains(sample)


def test_create_empty_array_and_concatenate() -> None:
    assert create_empty_array(Unicode(4), 3) == ("", "", "")
    assert create_empty_array(UnicodeTuple(2, 4), 2) == ((), ())
    assert concatenate(Unicode(4), ["a", "b"], create_empty_array(Unicode(4), 2)) == ("a", "b")




@pytest.mark.parametrize(
    "values",
    [["🙂中文", "\ud800", ""], ["x" * 8, "🙂" * 8, "𝄞é\n\t "], ["", "", ""], ["NUL\0ok", "中" * 8, "a"]],
    ids=["emoji-surrogate-empty", "max-length", "all-empty", "nul-and-cjk"],
)
def test_unicode_shared_memory_round_trip(values: list[str]) -> None:
    space = Unicode(max_length=8)
    memory = create_shared_memory(space, n=3)
    for index, value in enumerate(values):
        write_to_shared_memory(space, index, value, memory)
    read = read_from_shared_memory(space, memory, n=3)
    assert tuple(read) == tuple(values)
    assert [read[i] for i in range(3)] == values


@pytest.mark.parametrize(
    "values",
    [
        [(), ("a", "中文🙂", "\ud800x"), ("abcd", "🙂🙂🙂🙂", "wxyz")],
        [("", "a"), ("a", ""), ("", "", "")],
        [(), (), ()],
    ],
    ids=["empty-unicode-max", "empty-items", "all-empty"],
)
def test_unicode_tuple_shared_memory_round_trip(values: list[tuple[str, ...]]) -> None:
    space = UnicodeTuple(max_items=3, max_length=4)
    memory = create_shared_memory(space, n=3)
    for index, value in enumerate(values):
        write_to_shared_memory(space, index, value, memory)
    assert tuple(read_from_shared_memory(space, memory, n=3)) == tuple(values)


def test_unicode_tuple_with_one_empty_string_survives_shared_memory() -> None:
    space = UnicodeTuple(max_items=3, max_length=4)
    memory = create_shared_memory(space, n=3)
    values = [("",), (), ("a",)]
    for index, value in enumerate(values):
        write_to_shared_memory(space, index, value, memory)
    assert tuple(read_from_shared_memory(space, memory, n=3)) == tuple(values)


def test_observation_dict_shared_memory_round_trip() -> None:
    obs_space = spaces.Dict(
        {
            "image": spaces.Box(0, 255, (2, 3, 3), np.uint8),
            "text": Unicode(16),
            "mission": Unicode(16),
            "actions": UnicodeTuple(3, 8),
        }
    )
    memory = create_shared_memory(obs_space, n=3)
    observations = [
        {"image": np.full((2, 3, 3), i, np.uint8), "text": text, "mission": "Go 🙂", "actions": actions}
        for i, (text, actions) in enumerate([("Target: 3", ("-", "+")), ("", ()), ("\ud800中", ("go to 1",))])
    ]
    for index, obs in enumerate(observations):
        write_to_shared_memory(obs_space, index, obs, memory)
    read = read_from_shared_memory(obs_space, memory, n=3)
    assert tuple(read["text"]) == ("Target: 3", "", "\ud800中")
    assert tuple(read["mission"]) == ("Go 🙂",) * 3
    assert tuple(read["actions"]) == (("-", "+"), (), ("go to 1",))
    assert read["image"][:, 0, 0, 0].tolist() == [0, 1, 2]


@pytest.mark.parametrize(
    ("space", "value", "name"),
    [
        (Unicode(max_length=8), "x" * 9, "Unicode(max_length=8)"),
        (Unicode(max_length=8), "🙂" * 9, "Unicode(max_length=8)"),
        (UnicodeTuple(max_items=2, max_length=4), ("a", "b", "c"), "UnicodeTuple(max_items=2, max_length=4)"),
        (UnicodeTuple(max_items=2, max_length=4), ("abcde",), "UnicodeTuple(max_items=2, max_length=4)"),
        (UnicodeTuple(max_items=2, max_length=4), ("a\0b",), "UnicodeTuple(max_items=2, max_length=4)"),
    ],
)
def test_value_that_does_not_fit_raises_naming_the_space(space: Unicode | UnicodeTuple, value: object, name: str) -> None:
    memory = create_shared_memory(space, n=3)
    with pytest.raises(ValueError) as excinfo:
        write_to_shared_memory(space, 1, value, memory)
    message = str(excinfo.value)
    assert name in message
    assert "shared_memory=False" in message


def test_a_rejected_write_leaves_the_previous_value() -> None:
    space = Unicode(max_length=4)
    memory = create_shared_memory(space, n=2)
    write_to_shared_memory(space, 0, "keep", memory)
    with pytest.raises(ValueError):
        write_to_shared_memory(space, 0, "too long", memory)
    assert read_from_shared_memory(space, memory, n=2)[0] == "keep"


def test_shared_strings_is_a_live_view() -> None:
    space = Unicode(max_length=8)
    memory = create_shared_memory(space, n=3)
    view = read_from_shared_memory(space, memory, n=3)
    assert isinstance(view, SharedStrings)
    assert tuple(view) == ("", "", "")
    write_to_shared_memory(space, 1, "after", memory)
    assert view[1] == "after"
    write_to_shared_memory(space, 1, "🙂", memory)  # shorter: no leftovers of "after"
    assert view[1] == "🙂"
    assert len(view) == 3
    assert view[-1] == ""
    assert view[0:2] == ("", "🙂")
    assert view == ("", "🙂", "")
    assert view == ["", "🙂", ""]
    assert view != "🙂"


def test_shared_strings_deepcopy_and_pickle_give_plain_tuples() -> None:
    space = UnicodeTuple(max_items=2, max_length=4)
    memory = create_shared_memory(space, n=2)
    write_to_shared_memory(space, 0, ("a", "🙂"), memory)
    view = read_from_shared_memory(space, memory, n=2)
    frozen = copy.deepcopy(view)
    assert type(frozen) is tuple
    assert frozen == (("a", "🙂"), ())
    pickled = pickle.loads(pickle.dumps(view))
    assert type(pickled) is tuple and pickled == frozen
    write_to_shared_memory(space, 0, ("b",), memory)
    assert frozen == (("a", "🙂"), ())  # the copy is a snapshot
    assert view[0] == ("b",)


def test_shared_strings_is_not_hashable() -> None:
    view = read_from_shared_memory(Unicode(4), create_shared_memory(Unicode(4), n=1), n=1)
    with pytest.raises(TypeError):
        hash(view)


# --------------------------------------------------------------------------------------------
# Vector envs over a real env
# --------------------------------------------------------------------------------------------

# "rl4vlm_gym:" makes spawned workers import the package (which registers the ids);
# functools.partial of gym.make pickles by reference.
make_numberline = functools.partial(gym.make, "rl4vlm_gym:rl4vlm/NumberLine-v0")

STEPS = [
    ("+", "-", "+"),
    ('{"thoughts": "x", "action": "-"}', "<action>+</action>", "garbage 🙂"),
    ("-", "+ or -", "\ud800"),
    ("<action>+</action>", "-", "+"),
]


def _rollout(venv: gym.vector.VectorEnv) -> list[dict[str, object]]:
    try:
        obs, info = venv.reset(seed=[11, 12, 13])
        record = [{"obs": _plain(obs), "state_key": tuple(info["state_key"])}]
        for actions in STEPS:
            obs, reward, terminated, truncated, info = venv.step(actions)
            record.append(
                {
                    "obs": _plain(obs),
                    "reward": reward.tolist(),
                    "terminated": terminated.tolist(),
                    "truncated": truncated.tolist(),
                    "valid": info["action"]["valid"].tolist() if "action" in info else None,
                }
            )
        return record
    finally:
        venv.close()


def _plain(obs: dict[str, object]) -> dict[str, object]:
    for key in ("text", "mission", "actions"):
        assert type(obs[key]) is tuple, (key, type(obs[key]))
    assert all(type(a) is tuple for a in obs["actions"])  # type: ignore[union-attr]
    return {
        "image": obs["image"].tobytes(),  # type: ignore[union-attr]
        "text": obs["text"],
        "mission": obs["mission"],
        "actions": obs["actions"],
    }


@pytest.fixture(scope="module")
def sync_rollout() -> list[dict[str, object]]:
    return _rollout(gym.vector.SyncVectorEnv([make_numberline] * 3))


def test_sync_vector_env_steps_each_env_by_its_own_text(sync_rollout: list[dict[str, object]]) -> None:
    # Hand-worked from the seeds: targets 1, 1, 1 and starts 0, 3, 5 on positions 0..5.
    assert sync_rollout[0]["obs"]["text"] == ("Target: 1\nCurrent: 0", "Target: 1\nCurrent: 3", "Target: 1\nCurrent: 5")
    assert sync_rollout[0]["obs"]["actions"] == (("-", "+"),) * 3
    # step 1 ("+", "-", "+"): env 0 reaches the target, env 1 gets closer, env 2 is stuck at the edge
    assert sync_rollout[1]["reward"] == [1.0, 0.0, -1.0]
    assert sync_rollout[1]["terminated"] == [True, False, False]
    assert sync_rollout[1]["obs"]["text"] == (
        "You reached the target.\nTarget: 1\nCurrent: 1",
        "Target: 1\nCurrent: 2",
        "Target: 1\nCurrent: 5",
    )
    # step 2: env 0 is reset (no action info), env 1's tags answer is valid, env 2 wrote garbage
    assert sync_rollout[2]["valid"] == [False, True, False]
    assert sync_rollout[2]["reward"] == [0.0, -1.0, -1.0]
    text = sync_rollout[2]["obs"]["text"]
    assert text[1] == "Target: 1\nCurrent: 3"
    assert text[2] == (
        "Invalid action: 'garbage 🙂' is not an admissible action; choose one of '-', '+'. "
        "Nothing happened.\nTarget: 1\nCurrent: 5"
    )
    # step 3: an ambiguous answer and a lone surrogate are invalid; the state stays
    assert sync_rollout[3]["valid"] == [True, False, False]
    assert sync_rollout[3]["obs"]["text"][1] == (
        "Invalid action: '+ or -' is ambiguous: it mentions '+', '-'. Nothing happened.\nTarget: 1\nCurrent: 3"
    )
    assert sync_rollout[3]["obs"]["text"][2].endswith("Nothing happened.\nTarget: 1\nCurrent: 5")
    assert sync_rollout[4]["obs"]["text"][1:] == ("Target: 1\nCurrent: 2", "Target: 1\nCurrent: 5")


@pytest.mark.parametrize("shared_memory", [True, False], ids=["shared", "pipes"])
def test_async_vector_env_matches_sync(shared_memory: bool, sync_rollout: list[dict[str, object]]) -> None:
    venv = gym.vector.AsyncVectorEnv([make_numberline] * 3, shared_memory=shared_memory, context="spawn")
    assert _rollout(venv) == sync_rollout
