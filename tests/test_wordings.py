"""The ``wording`` argument: train is the env's own text, held-out says the same episode in other
words (the mission and the feedback), with several phrasings picked by the seed in any process."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401  (registers the ids)
from rl4vlm_gym import wording
from rl4vlm_gym.testing import check_determinism

# One id per family that has a held-out wording, with cheap settings.
FAMILIES = {
    "cards": ("rl4vlm/Points24-v0", {}),
    "blackjack": ("rl4vlm/Blackjack-v0", {}),
    "numberline": ("rl4vlm/NumberLine-v0", {}),
    "sokoban": ("rl4vlm/Sokoban-v0", {"level": 0, "image_size": 64}),
    "frozenlake": ("rl4vlm/FrozenLake-v0", {"image_size": 64}),
    "probe": ("rl4vlm/ColourNaming-v0", {"image_size": 32}),
    "household": ("rl4vlm/Household-v0", {"level": 0, "image_size": 64}),
    "webshop": ("rl4vlm/WebShop-v1", {"level": 0, "image_size": 128}),
    "navigation": ("rl4vlm/MiniWorld-Sidewalk-v1", {"image_size": (60, 80)}),
}


def _play(env_id: str, kwargs: dict, chosen: str, seed: int, steps: int = 6) -> list[tuple]:
    """A rollout with the train wording's oracle moves (the first an unparseable output)."""
    pair = {w: gym.make(env_id, wording=w, **kwargs) for w in ("train", chosen)}
    seen = {w: [env.reset(seed=seed)] for w, env in pair.items()}
    for t in range(steps):
        action = "<<gibberish>>" if t == 0 else pair["train"].unwrapped.oracle_action()
        results = {w: env.step(action) for w, env in pair.items()}
        for w, result in results.items():
            seen[w].append(result)
        if results["train"][2] or results["train"][3]:
            break
    for env in pair.values():
        env.close()
    return list(zip(seen["train"], seen[chosen], strict=True))


SLOW = {"webshop", "navigation"}  # a catalog or a GL world and its planner: 10-30 s


@pytest.mark.parametrize("family", [pytest.param(f, marks=[pytest.mark.slow] if f in SLOW else []) for f in FAMILIES])
def test_held_out_plays_the_train_episode_in_other_words(family: str) -> None:
    env_id, kwargs = FAMILIES[family]
    steps = _play(env_id, kwargs, "held-out", seed=3)
    (train, _), (held, _) = steps[0]
    assert held["mission"] != train["mission"]
    for t, (train_step, held_step) in enumerate(steps):
        train_obs, held_obs = train_step[0], held_step[0]
        assert np.array_equal(train_obs["image"], held_obs["image"]), f"step {t}: the image changed"
        assert train_obs["actions"] == held_obs["actions"], f"step {t}: the actions changed"
        assert train_step[-1]["state_key"] == held_step[-1]["state_key"], f"step {t}: the state changed"
        assert train_step[1:-1] == held_step[1:-1], f"step {t}: rewards or ends changed"
        assert held_obs["mission"] == held["mission"], "the mission is one phrasing for the whole episode"
    gibberish = steps[1]
    assert gibberish[0][0]["text"] != gibberish[1][0]["text"], "the invalid-action feedback is not reworded"
    assert gibberish[0][-1]["action"] == gibberish[1][-1]["action"], "info['action'] is the same in every wording"


@pytest.mark.parametrize("family", ["numberline", "probe", "sokoban", "frozenlake"])
def test_the_seed_picks_one_of_several_phrasings(family: str) -> None:
    # Missions without episode fields: every phrasing of the template shows up over a few seeds.
    env_id, kwargs = FAMILIES[family]
    env = gym.make(env_id, wording="held-out", **kwargs)
    missions = {env.reset(seed=seed)[0]["mission"] for seed in range(24)}
    train = gym.make(env_id, **kwargs).reset(seed=0)[0]["mission"]
    env.close()
    assert missions == set(type(env.unwrapped).PHRASES["held-out"]["mission"]) and train not in missions


def test_every_template_has_several_independent_phrasings() -> None:
    from rl4vlm_gym.envs.cards import wording as cards
    from rl4vlm_gym.envs.frozenlake import wording as frozenlake
    from rl4vlm_gym.envs.household import wording as household
    from rl4vlm_gym.envs.navigation import wording as navigation
    from rl4vlm_gym.envs.probe import wording as probe
    from rl4vlm_gym.envs.sokoban import wording as sokoban
    from rl4vlm_gym.envs.webshop import wording as webshop

    books = [*(book for per in cards.PHRASES.values() for book in per.values())]
    books += [m.PHRASES["held-out"] for m in (frozenlake, household, navigation, probe, sokoban, webshop)]
    for book in books:
        for key, phrasings in book.items():
            assert len(phrasings) >= 3 and len(set(phrasings)) == len(phrasings), key
            # independent sentences, not one frame with a word swapped: the first words differ
            openings = {" ".join(p.split()[:2]) for p in phrasings}
            assert len(openings) == len(phrasings) or key == "help", f"{key}: {phrasings}"


@pytest.mark.parametrize("family", ["cards", "household"])
def test_held_out_phrasing_is_the_same_in_another_process(family: str) -> None:
    env_id, kwargs = FAMILIES[family]
    assert "identical in 2 processes" in check_determinism(env_id, seed=5, steps=8, wording="held-out", **kwargs)


def test_the_phrasing_is_picked_without_drawing_from_the_episode_rng() -> None:
    rng = np.random.default_rng(7)
    before = rng.bit_generator.state
    salt = wording.salt(rng)
    assert rng.bit_generator.state == before and salt == wording.salt(np.random.default_rng(7))
    assert salt != wording.salt(np.random.default_rng(8))
    picks = {wording.choose(("a", "b", "c"), wording.salt(np.random.default_rng(s)), "mission") for s in range(20)}
    assert picks == {"a", "b", "c"}


def test_train_is_the_default_and_unknown_wordings_are_refused() -> None:
    env = gym.make("rl4vlm/NumberLine-v0")
    assert env.unwrapped.wording == "train"
    with pytest.raises(ValueError, match=r"wording='poetic' is unknown for NumberLine; choose one of \('train', 'held-out'\)"):
        gym.make("rl4vlm/NumberLine-v0", wording="poetic")
    # families without templates (BALROG's envs keep BALROG's words) have only train
    with pytest.raises(ValueError, match="wording='held-out' is unknown"):
        gym.make("rl4vlm/TicTacToe-vs-Random-v0", wording="held-out")


def test_a_missing_template_is_named() -> None:
    with pytest.raises(KeyError, match=r"the wording has no template 'nope'"):
        wording.say({"mission": ("x",)}, "nope", 0)
