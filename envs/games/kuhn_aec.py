"""Kuhn poker as a PettingZoo AEC env where each agent sees only its own card.

``kuhn_poker_env()`` plays OpenSpiel's ``kuhn_poker``; the deal is drawn from the env's RNG
(seeded by ``reset(seed=...)``), so two envs with one seed deal the same hands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from rl4vlm_gym.envs.games.aec import agent_spaces, cached_frame, check_arguments
from rl4vlm_gym.envs.games.kuhn import ACTIONS, MISSION, KuhnOpponent, _spiel, hand_image, hand_text, showdown
from rl4vlm_gym.parsing import ActionParser

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from rl4vlm_gym.rendering import HumanWindow

__all__ = ["KuhnPokerAEC", "kuhn_poker_env"]

SYNONYMS = {"check": "pass", "fold": "pass", "call": "bet"}


class KuhnPokerAEC(AECEnv):
    """Kuhn poker for two VLM agents behind PettingZoo's AEC API; hidden cards stay hidden.

    ## Description
    OpenSpiel's ``kuhn_poker`` plays the rules and pays the chips; ``player_0`` acts first.

    ## Observation
    ``observe(agent)`` is ``{"image", "text", "mission", "actions"}``: the agent's own card face
    up, the other face down (face up after a showdown), the moves and the pot, the same in
    words, the rules, and ``pass``/``bet`` when it is its turn (else nothing).

    ## Action Space
    Free text parsed against ``pass``/``bet`` (``check``/``fold`` mean pass, ``call`` bet). An
    invalid move changes nothing, keeps the turn and pays nothing; the reason is in the agent's
    ``infos[agent]["action"]`` and text.

    ## Rewards
    OpenSpiel's returns at the end of the hand (+-1 or +-2 chips), 0 before.

    ## Arguments
    ``obs_mode``, ``image_size`` (a square side), ``action_format``, ``action_match`` as in
    ``VLMEnv``; ``render_mode`` (``rgb_array`` and ``human`` show the view of the agent to move,
    ``ansi`` its text); ``max_cycles``: steps after which every agent is truncated;
    ``render_fps``: the pace of the ``human`` window. ``oracle_action(agent)`` is the CFR
    equilibrium's most likely move (``kuhn_cfr.json``, at the agent's information state).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array", "ansi", "human"], "name": "rl4vlm_kuhn_poker_v0", "is_parallelizable": False, "render_fps": 2}

    def __init__(
        self,
        *,
        obs_mode: str = "image+text",
        image_size: int = 256,
        action_format: str = "auto",
        action_match: str = "lenient",
        render_mode: str | None = None,
        max_cycles: int = 20,
        render_fps: int = 2,
    ) -> None:
        super().__init__()
        check_arguments(
            self.metadata, obs_mode=obs_mode, image_size=image_size, min_side=64, render_mode=render_mode,
            max_cycles=max_cycles,
        )
        self.metadata = {**self.metadata, "render_fps": render_fps}
        self.obs_mode, self.image_size, self.render_mode, self.max_cycles = obs_mode, image_size, render_mode, max_cycles
        self.parser = ActionParser(format=action_format, match=action_match, synonyms=SYNONYMS)  # type: ignore[arg-type]
        self.possible_agents = ["player_0", "player_1"]  # OpenSpiel's players 0 and 1
        side = image_size
        self.observation_spaces, self.action_spaces = agent_spaces(self.possible_agents, side)
        self._window: HumanWindow | None = None
        self._frames: dict[Any, NDArray[np.uint8]] = {}
        self.np_random, _ = seeding.np_random(None)
        self.reset()

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]  # the same object every call (PettingZoo's api_test)

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand from the env's RNG (``options`` are accepted and unused, as PettingZoo asks)."""
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        first = int(self.np_random.integers(3))
        self.cards = (first, (first + 1 + int(self.np_random.integers(2))) % 3)
        self.history: tuple[int, ...] = ()
        self.state = _spiel().new_initial_state()
        for card in self.cards:
            self.state.apply_action(card)
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.feedback = dict.fromkeys(self.agents, "")
        self.agent_selection = self.agents[0]
        self.num_steps = 0
        self._update_vocabulary()
        self._render_human()

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def legal_moves(self, agent: str) -> tuple[str, ...]:
        if agent != self.agent_selection or self.terminations.get(agent, True) or self.truncations.get(agent, True):
            return ()
        return ACTIONS

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self._seat(agent)
        text = [self.feedback[agent]] if self.feedback.get(agent) else []
        if self.obs_mode != "image":
            text.append(hand_text(seat, self.cards, self.history, self.state.returns() if self.state.is_terminal() else None))
        image = np.zeros((self.image_size, self.image_size, 3), np.uint8) if self.obs_mode == "text" else self._image(seat)
        return {"image": image, "text": "\n".join(text), "mission": MISSION, "actions": self.legal_moves(agent)}

    def _image(self, seat: int) -> NDArray[np.uint8]:
        shown = showdown(self.history, self.state.is_terminal())
        # the picture shows only what the seat knows: its card, the moves, the other card at a showdown
        key = (seat, self.cards[seat], self.cards[1 - seat] if shown else None, self.history)
        return cached_frame(
            self._frames, key, lambda: hand_image((self.image_size, self.image_size), seat, self.cards, self.history, shown)
        )

    def oracle_action(self, agent: str | None = None) -> str:
        """The CFR equilibrium's most likely move for ``agent`` (default: the one to move; pass
        among equals), as ``LeducAEC`` plays its own."""
        agent = agent or self.agent_selection
        if not self.legal_moves(agent):
            raise ValueError(f"{agent} has no move now (it is {self.agent_selection}'s turn or the game is over)")
        p = KuhnOpponent("cfr").probs(self.state.information_state_string())
        return ACTIONS[int(p[1] > p[0])]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        result = self.parser.parse(action if isinstance(action, str) else str(action), self.legal_moves(agent))
        self.infos[agent] = {"action": result.as_info()}
        self.num_steps += 1
        if result.parsed is None:
            self.feedback[agent] = f"Invalid action: {result.error}. Nothing happened."
        else:
            move = ACTIONS.index(result.parsed)
            self.state.apply_action(move)
            self.history += (move,)
            other = self.agents[1 - self.agents.index(agent)]
            self.feedback[agent] = f"You chose {result.parsed}."
            self.feedback[other] = f"Your opponent chose {result.parsed}."
            if self.state.is_terminal():
                returns = self.state.returns()
                self.rewards = {a: float(returns[self._seat(a)]) for a in self.agents}
                self.terminations = dict.fromkeys(self.agents, True)
            else:
                self.agent_selection = self.possible_agents[self.state.current_player()]
        if self.num_steps >= self.max_cycles and not any(self.terminations.values()):
            self.truncations = dict.fromkeys(self.agents, True)
        self._update_vocabulary()
        self._accumulate_rewards()
        self._render_human()

    def _update_vocabulary(self) -> None:
        for agent in self.possible_agents:
            self.action_spaces[agent].vocabulary = self.legal_moves(agent)

    def render(self) -> NDArray[np.uint8] | str | None:
        if self.render_mode is None:
            return None
        seat = self._seat(self.agent_selection)
        if self.render_mode == "ansi":
            return hand_text(seat, self.cards, self.history, self.state.returns() if self.state.is_terminal() else None) + "\n"
        if self.render_mode == "human":
            self._render_human()
            return None
        return self._image(seat)

    def _render_human(self) -> None:
        if self.render_mode != "human":
            return
        if self._window is None:
            from rl4vlm_gym.rendering import HumanWindow

            self._window = HumanWindow("Kuhn poker", self.metadata["render_fps"])
        self._window.show(self._image(self._seat(self.agent_selection)))

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
            self._window = None

    def __str__(self) -> str:
        return "KuhnPokerAEC"


def kuhn_poker_env(**kwargs: Any) -> KuhnPokerAEC:
    """Kuhn poker (OpenSpiel's ``kuhn_poker``) with VLM observations and hidden cards."""
    return KuhnPokerAEC(**kwargs)
