"""``arguments``: bad ``make``/``reset`` arguments name themselves; ``image_size``, every level, appearance and
wording are obeyed."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from rl4vlm_gym.testing.common import _base, _digest, _make, _move, _policy_action, _view_overridden
from rl4vlm_gym.testing.remote import _card, _rules


def check_arguments(env_id: str, /, **kwargs: Any) -> str:
    """Bad arguments raise ``ValueError`` naming themselves; ``image_size``, every level, every
    appearance and every wording are obeyed (an appearance changes the image and nothing else; a
    wording changes the words of the mission and the feedback and nothing else)."""
    bad: dict[str, list[Any]] = {
        "appearance": ["nope"],
        "wording": ["nope"],
        "level": [-1, 10_000, "hard", 1.5],
        "obs_mode": ["video", ""],
        "image_size": [0, (1, 1), (300,), "big", (300.0, 300.0), (100_000, 100_000)],
        "reward_variant": ["nope"],
        "action_format": ["xml"],
        "action_match": ["fuzzy"],
    }
    for name, values in bad.items():
        for value in values:
            try:
                _make(env_id, **{**kwargs, name: value})
            except ValueError as err:
                assert name in str(err), f"make({name}={value!r}) raised a ValueError that does not name {name!r}: {err}"
            else:
                raise AssertionError(f"make({name}={value!r}) was accepted")
    env = _make(env_id, **kwargs)
    for options in ({"level": 10_000}, {"level": "x"}, {"unknown_option": 1}):
        try:
            env.reset(seed=0, options=options)
        except ValueError as err:
            key = next(iter(options))
            assert key in str(err) or "level" in str(err), f"reset(options={options}) error does not name the option: {err}"
        else:
            raise AssertionError(f"reset(options={options}) was accepted")
    card = _card(env_id, kwargs)
    level0: list[tuple[Any, ...]] = []
    for level in range(len(card.levels)):
        _, info = env.reset(seed=0, options={"level": level})
        assert info["level"] == level, f"reset(options={{'level': {level}}}) reported level {info['level']}"
        if level:
            _assert_level_plays(env, level, level0)
    env.close()
    _check_image_size(env_id, **kwargs)
    _check_obs_modes(env_id, **kwargs)
    looks = _check_appearances(env_id, **kwargs)
    words = _check_wordings(env_id, **kwargs)
    return (
        f"{sum(map(len, bad.values())) + 3} bad arguments rejected with named errors; {len(card.levels)} levels reachable "
        f"and distinct; image_size obeyed; {looks}; {words}"
    )


def _check_appearances(env_id: str, /, seeds: int = 3, steps: int = 2, **kwargs: Any) -> str:
    """Each appearance besides the default plays the default's episodes (same text, mission, actions,
    state and rewards for the same seeds and moves) and shows other images."""
    looks = _rules(env_id, kwargs)["APPEARANCES"]
    if len(looks) == 1:
        return "one appearance"
    envs = {look: _make(env_id, **{**kwargs, "appearance": look, "obs_mode": "image+text"}) for look in looks}
    default, others = looks[0], looks[1:]
    differs = dict.fromkeys(others, False)
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        seen = {look: env.reset(seed=seed) for look, env in envs.items()}  # look -> (obs, info)
        for t in range(steps + 1):
            obs, info = seen[default]
            for look in others:
                at = f"appearance={look!r}, seed {seed}, {'reset' if t == 0 else f'step {t}'}"
                other, other_info = seen[look]
                for key in ("text", "mission", "actions"):
                    assert other[key] == obs[key], (
                        f"{at}: obs[{key!r}] differs from the default appearance's: an appearance changes only the image"
                    )
                assert other_info["state_key"] == info["state_key"], f"{at}: the state differs from the default appearance's"
                differs[look] |= not np.array_equal(other["image"], obs["image"])
            if t == steps:
                break
            action = _policy_action(_base(envs[default]), obs, rng)
            results = {look: env.step(action) for look, env in envs.items()}
            rewards = {float(r[1]) for r in results.values()}
            assert len(rewards) == 1, f"seed {seed}, step {t + 1}: the appearances paid different rewards {sorted(rewards)}"
            seen = {look: (r[0], r[4]) for look, r in results.items()}
            if results[default][2] or results[default][3]:
                break
    for env in envs.values():
        env.close()
    unchanged = [look for look, changed in differs.items() if not changed]
    assert not unchanged, f"appearance {unchanged[0]!r} shows the default's images on {seeds} seeds: it changes nothing"
    return f"{len(looks)} appearances: same episodes, other images"


_GARBLED = "<<< not an action >>>"


def _check_wordings(env_id: str, /, seeds: int = 2, steps: int = 3, **kwargs: Any) -> str:
    """Each wording besides the first (``"train"``) plays train's episodes (same images, actions,
    state, rewards and ends for the same seeds and moves), says every mission in other words, and
    rewords every feedback sentence: wherever train's text carries feedback (its text is not the
    bare state description), the other wording's text differs. The first step is an output that
    does not parse, so the invalid-action feedback is checked in every episode."""
    wordings = _rules(env_id, kwargs)["WORDINGS"]
    if len(wordings) == 1:
        return "one wording"
    envs = {w: _make(env_id, **{**kwargs, "wording": w, "obs_mode": "image+text"}) for w in wordings}
    train, others = wordings[0], wordings[1:]
    feedback_steps = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        seen = {w: env.reset(seed=seed) for w, env in envs.items()}  # wording -> (obs, info)
        ended = False
        for t in range(steps + 1):
            obs, info = seen[train]
            described = _base(envs[train]).describe()
            for w in others:
                at = f"wording={w!r}, seed {seed}, {'reset' if t == 0 else f'step {t}'}"
                other, other_info = seen[w]
                assert np.array_equal(other["image"], obs["image"]), (
                    f"{at}: the image differs from the train wording's: a wording changes only words"
                )
                assert other["actions"] == obs["actions"], (
                    f"{at}: obs['actions'] differs from the train wording's: a wording keeps the action vocabulary"
                )
                for key in ("state_key", "success", "progress", "level"):
                    assert other_info[key] == info[key], (
                        f"{at}: info[{key!r}] differs from the train wording's: a wording changes only words"
                    )
                if t == 0:
                    assert other["mission"] != obs["mission"], (
                        f"wording {w!r} gives the train wording's mission at seed {seed}: {obs['mission']!r} is not in other words"
                    )
                elif obs["text"] != described:  # train's text carries feedback
                    feedback_steps += 1
                    assert other["text"] != obs["text"], (
                        f"{at}: the text is the train wording's, feedback included: the feedback is not reworded ({obs['text'][:80]!r})"
                    )
            if t == steps or ended:
                break
            action = _GARBLED if t == 0 else _policy_action(_base(envs[train]), obs, rng)
            results = {w: env.step(action) for w, env in envs.items()}
            outcomes = {(r[1], r[2], r[3]) for r in results.values()}
            assert len(outcomes) == 1, (
                f"seed {seed}, step {t + 1}: the wordings ended differently (reward, terminated, truncated): {sorted(outcomes)}"
            )
            seen = {w: (r[0], r[4]) for w, r in results.items()}
            ended = results[train][2] or results[train][3]
    for env in envs.values():
        env.close()
    return f"{len(wordings)} wordings: same episodes, missions and {feedback_steps} feedbacks in other words"


def _first_observation(env: gym.Env, seed: int, level: int) -> tuple[Any, ...]:
    obs, info = env.reset(seed=seed, options={"level": level})
    return obs["mission"], obs["text"], obs["actions"], _digest(obs["image"]), info["state_key"], info["optimal_steps"]


def _assert_level_plays(env: gym.Env, level: int, level0: list[tuple[Any, ...]], seeds: int = 20) -> None:
    """Some seed's first observation differs from level 0's: the level is not level 0 again."""
    for seed in range(seeds):
        if len(level0) <= seed:
            level0.append(_first_observation(env, seed, 0))
        if _first_observation(env, seed, level) != level0[seed]:
            return
    raise AssertionError(
        f"level {level} plays level 0's episodes: seeds 0..{seeds - 1} give the same first observations at both levels"
    )


def _check_image_size(env_id: str, /, **kwargs: Any) -> None:
    """A non-default, non-square ``image_size`` shapes the observation and ``render()``."""
    made = _make(env_id, **kwargs)
    facts = _base(made).facts()
    side = max(facts["MIN_IMAGE_SIDE"], min(facts["MAX_IMAGE_SIDE"], 96))
    size = (side + 8, side + 24)
    if list(size) == facts["DEFAULT_IMAGE_SIZE"]:
        size = (side + 16, side + 8)
    made.close()
    env = _make(env_id, **{**kwargs, "image_size": size, "render_mode": "rgb_array"})
    obs, _ = env.reset(seed=0)
    shapes = {"reset": obs["image"].shape}
    obs, *_ = env.step(_move(_base(env)))
    shapes["step"] = obs["image"].shape
    frame, overridden = env.render(), _view_overridden(_base(env))
    env.close()
    expected = (*size, 3)
    for where, shape in shapes.items():
        assert shape == expected, f"image_size={size} ignored: the {where} observation is {shape}, not {expected}"
    if not overridden:
        assert isinstance(frame, np.ndarray) and frame.shape == expected, (
            f"image_size={size} ignored by render(): {getattr(frame, 'shape', frame)}"
        )


def _check_obs_modes(env_id: str, /, **kwargs: Any) -> None:
    for obs_mode in _card(env_id, kwargs).obs_modes:
        env = _make(env_id, **{**kwargs, "obs_mode": obs_mode})
        obs, _ = env.reset(seed=0)
        if obs_mode == "text":
            assert not obs["image"].any(), "obs_mode='text' must give a black image"
            assert obs["text"], "obs_mode='text' gave no text"
        if obs_mode == "image":
            assert obs["image"].any(), "obs_mode='image' gave a black image"
            assert obs["text"] == "", f"obs_mode='image' must carry no state in text at reset, got {obs['text']!r}"
        env.close()
