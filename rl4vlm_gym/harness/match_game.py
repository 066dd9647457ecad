"""One game of a match: the seats play an AEC env to its end, and the game's record.

:func:`play_game` plays, scores (a forfeit, a fold in a chip game, a team's success) and, for
two-seat chip games played through OpenSpiel, adds each seat's AIVAT estimate of its chips
(:func:`aivat_estimator`, :mod:`rl4vlm_gym.harness.aivat`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from rl4vlm_gym.games import GameSpec
from rl4vlm_gym.harness.match_errors import MatchError
from rl4vlm_gym.harness.match_players import Seat

__all__ = ["aivat_estimator", "play_game"]

# the match harness's logger, under the name it has always had (log settings that name it keep working)
logger = logging.getLogger("rl4vlm_gym.harness.matches")

_MAX_ITER = 100_000  # agent turns of one game at most, whatever the env's own limit


def play_game(
    env: Any,
    seats: Sequence[Seat],
    seed: int,
    *,
    cooperative: bool = False,
    folded: Callable[[Any, int], Sequence[float]] | None = None,
    aivat: Any = None,
) -> dict[str, Any]:
    """Play one game of ``env`` (reset with ``seed``), ``seats[i]`` in ``env.possible_agents[i]``.

    A player forfeits when it raises, writes no text, ends its input (a person: EOF), or when the
    step limit ends the game and it wrote more invalid moves than every other seat (it stalled).
    A forfeit in a chip game with a ``folded`` rule (:attr:`GameSpec.folded`) is scored as a fold
    at that point: the returns become ``folded(env, seat)`` (the game's own are kept as
    ``env_returns``). With an ``aivat`` estimator (:class:`rl4vlm_gym.harness.aivat.Estimator`,
    for two-seat chip games played through OpenSpiel), the record's ``aivat`` is each seat's
    AIVAT estimate of its chips, from the OpenSpiel history the env's ``state`` holds at the end
    and the known move distributions (chance; the seats' ``policy``), ``aivat_nodes`` the number
    of nodes corrected and ``spiel_history`` that history (OpenSpiel action ids, chance included).

    Returns:
        The record: each seat's return and score (by return: 1 to a sole best, 0.5 to each of
        tied best, 0 to the others; a forfeiting seat counts below every other; in a
        ``cooperative`` game the team's: 1 to every seat when all returns are positive, else 0),
        the steps (acting seat, raw output, parsed move, validity, parser error, every seat's
        reward), the invalid moves per seat, and ``error``/``forfeit`` (the seat at fault).
    """
    env.reset(seed=seed)
    agents = list(env.possible_agents)
    if len(agents) != len(seats):
        raise MatchError(f"the game has {len(agents)} agents ({agents}); a match seats {len(seats)} players")
    for i, (seat, agent) in enumerate(zip(seats, agents, strict=True)):
        seat.begin(env, agent, seed, i)
    returns = [0.0] * len(agents)
    invalid = [0] * len(agents)
    steps: list[dict[str, Any]] = []
    error = forfeit = None
    truncated = False
    for agent in env.agent_iter(_MAX_ITER):
        i = agents.index(agent)
        # a built-in player reads the env's true state, not the observation: not drawing it saves
        # a quarter of a poker game's time
        obs, _, terminated, trunc, _ = env.last(observe=seats[i].builtin is None)
        if terminated or trunc:
            truncated = truncated or bool(trunc)
            env.step(None)
            continue
        try:
            output = seats[i].act(env, agent, obs)
        except EOFError as err:  # a person ended the input
            error, forfeit = f"{seats[i].spec.label} forfeits: {err}", i
            break
        except Exception as err:  # the player's failure ends the game; the tournament goes on
            error, forfeit = f"{seats[i].spec.label} raised {type(err).__name__}: {err}", i
            break
        if not isinstance(output, str):
            error, forfeit = f"{seats[i].spec.label} returned {type(output).__name__}, not str: {output!r:.200}", i
            break
        env.step(output)
        action = env.infos.get(agent, {}).get("action", {})
        rewards = [float(env.rewards.get(a, 0.0)) for a in agents]
        returns = [r + s for r, s in zip(returns, rewards, strict=True)]
        valid = bool(action.get("valid", True))
        invalid[i] += not valid
        steps.append(
            {
                "seat": i,
                "raw": output,
                "parsed": action.get("parsed"),
                "valid": valid,
                "error": action.get("error"),
                "rewards": rewards,
            }
        )
    most = max(invalid)
    if forfeit is None and truncated and invalid.count(most) == 1:
        forfeit = invalid.index(most)  # the step limit ended a game one player stalled with invalid moves
        error = f"the step limit ended the game; {seats[forfeit].spec.label} wrote {invalid[forfeit]} invalid moves"
    record: dict[str, Any] = {"agents": agents}
    if forfeit is not None and folded is not None and not cooperative:
        record["env_returns"] = returns
        returns = [float(r) for r in folded(env, forfeit)]
    if cooperative:  # one team: a forfeit (either seat's fault) fails it like a wrong answer
        scores = [float(forfeit is None and min(returns) > 0)] * len(agents)
    else:
        place = [(i != forfeit, r) for i, r in enumerate(returns)]
        best = max(place)
        winners = [i for i, p in enumerate(place) if p == best]
        scores = [1.0 if len(winners) == 1 and i in winners else 0.5 if i in winners else 0.0 for i in range(len(agents))]
    for i, seat in enumerate(seats):
        if seat.human is not None and not seat.human.quit:
            try:
                last = env.observe(agents[i])
            except Exception:  # noqa: BLE001 - an env may not observe after its end: the result is enough
                last = {}
            seat.human.end(last, returns, i)
    estimate = _aivat(aivat, env, seats, returns) if aivat is not None and not cooperative else None
    record.update(
        {
            "returns": returns,
            "scores": scores,
            **({"aivat": estimate[0], "aivat_nodes": estimate[1], "spiel_history": estimate[2]} if estimate is not None else {}),
            "num_steps": len(steps),
            "invalid_actions": invalid,
            "truncated": truncated,
            "error": error,
            "forfeit": forfeit,
            "steps": steps,
        }
    )
    return record


def _aivat(aivat: Any, env: Any, seats: Sequence[Seat], returns: Sequence[float]) -> tuple[list[float], int, list[int]] | None:
    """The seats' AIVAT estimates of ``returns``, the nodes corrected and the OpenSpiel history
    (action ids, chance included: the game can be valued again with other values), or ``None`` where the
    env's state is not a game of ``aivat``'s OpenSpiel game, or a known policy cannot value it
    (the game's record then has no estimate, and the match is ranked by its raw chips)."""
    state = getattr(env, "state", None)
    if len(seats) != 2 or state is None or not hasattr(state, "history") or str(state.get_game()) != aivat.game:
        return None
    history = [int(a) for a in state.history()]
    try:
        estimate, nodes = aivat.estimate(returns, history, [s.policy for s in seats], [s.policy_key for s in seats])
    except Exception as err:  # noqa: BLE001 - an estimate is an extra: the game's result stands without it
        logger.warning("no AIVAT estimate for this game: %s: %s", type(err).__name__, err)
        return None
    return estimate, nodes, history


def aivat_estimator(spec: GameSpec, env: Any) -> Any:
    """The AIVAT estimator of ``spec`` as ``env`` plays it (:attr:`GameSpec.aivat`), or ``None``:
    the game names no baseline, is not played through OpenSpiel (``env.state``), has other than
    two seats, is not zero-sum, or is too large to value."""
    if spec.aivat is None or spec.payoff != "chips" or len(env.possible_agents) != 2:
        return None
    state = getattr(env, "state", None)
    if state is None or not hasattr(state, "get_game"):
        return None
    from rl4vlm_gym.harness import aivat

    game = str(state.get_game())
    if spec.aivat == "uniform":
        return aivat.estimator(game)
    baseline = getattr(spec.builtin(spec.aivat), "policy", None)
    if baseline is None:
        return aivat.estimator(game)
    return aivat.estimator(game, baseline, key=spec.players[spec.aivat], name=spec.aivat)
