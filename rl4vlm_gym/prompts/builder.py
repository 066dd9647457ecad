"""The prompt builder: an episode's chat messages, step by step, for evaluation and training.

See :mod:`rl4vlm_gym.prompts` for the templates and the ``balrog`` template's protocol; the words
come from :mod:`~rl4vlm_gym.prompts.templates`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rl4vlm_gym.parsing import balrog_extract, balrog_reasoning
from rl4vlm_gym.prompts.config import BalrogDemo, Message, PromptConfig
from rl4vlm_gym.prompts.templates import (
    balrog_generic_instructions,
    balrog_instruction,
    default_system,
    observation_text,
    rl4vlm_game,
    rl4vlm_text,
    vldac_text,
)

__all__ = ["PromptBuilder"]


class PromptBuilder:
    """Builds the messages of one episode, step by step.

    Args:
        config: the prompt configuration.
        env_id: the env's id; the ``rl4vlm`` template picks its text by it.
        attach_images: ``False`` when the images carry nothing (``obs_mode="text"``).
        instructions: the ``balrog`` template's first message (the env's
            :meth:`~rl4vlm_gym.core.VLMEnv.instruction_prompt`); ``None``: generic instructions.
        demos: ``balrog-few-shot``: the candidate demonstrations; the first ``icl_episodes`` of them
            whose first observation is not the episode's own are shown (BALROG keeps a TextWorld
            demonstration of the very game being played out of the prompt).
        icl_episodes: demonstrations shown (BALROG's ``eval.icl_episodes``, 1).
        max_icl_history: demonstration events shown at most (BALROG's ``agent.max_icl_history``).
        cot_history: CoT plans replayed (BALROG's ``agent.max_cot_history``).

    Call :meth:`reset` at the start of an episode, :meth:`messages` for each observation and
    :meth:`record` with the model's answer once it has acted. Both take the ``info`` the env
    returned with the observation; the ``balrog`` template reads BALROG's observation text from
    it (``info["balrog"]``), the others ignore it.
    """

    def __init__(
        self,
        config: PromptConfig | None = None,
        env_id: str = "",
        attach_images: bool = True,
        instructions: str | None = None,
        *,
        demos: Sequence[BalrogDemo] = (),
        icl_episodes: int = 1,
        max_icl_history: int = 1000,
        cot_history: int = 1,
    ) -> None:
        self.config = config or PromptConfig()
        self.env_id = env_id
        self.instructions = instructions
        self.attach_images = attach_images and self.config.images > 0
        if self.config.template == "rl4vlm":
            rl4vlm_game(env_id)  # fail at construction, not at the first step
        self.demos = tuple(demos)
        self.icl_episodes, self.max_icl_history, self.cot_history = icl_episodes, max_icl_history, cot_history
        self._past: deque[tuple[dict[str, Any], str]] = deque(maxlen=max(self.config.history, self.config.images, 1))
        # BALROG's HistoryPromptBuilder._events: observations and the agent's outputs.
        self._events: deque[dict[str, Any]] = deque(maxlen=2 * max(self.config.history, self.config.images))
        self._first: str | None = None  # the episode's first observation (long-term text)
        self._seen: tuple[Mapping[str, Any], Mapping[str, Any] | None] | None = None
        self._steps = 0

    def reset(self) -> None:
        self._past.clear()
        self._events.clear()
        self._first = self._seen = None
        self._steps = 0

    def record(self, obs: Mapping[str, Any], answer: str, info: Mapping[str, Any] | None = None) -> None:
        """Remember the observation just answered and the answer, for the history. Without
        ``info``, the one given to :meth:`messages` with this same ``obs`` is used."""
        if info is None and self._seen is not None and self._seen[0] is obs:
            info = self._seen[1]
        self._past.append((dict(obs), answer))
        self._steps += 1
        if self.config.template == "balrog":
            agent = self.config.output_format
            self._events.append(self._balrog_observation(obs, info))
            action = balrog_extract(agent, answer)
            if action:  # BALROG's agents add no turn for an empty output (``if prev_action:``)
                self._events.append({"action": action, "reasoning": balrog_reasoning(agent, answer)})

    def messages(self, obs: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> list[Message]:
        """The chat messages that ask for the action at ``obs`` (``info``: what the env returned
        with it)."""
        self._seen = (obs, info)
        if self.config.template == "rl4vlm":
            return self._single_turn(obs, rl4vlm_text(self.env_id, obs))
        if self.config.template == "vl-dac":
            return self._single_turn(obs, vldac_text(obs, self._steps), frames=True)
        if self.config.template == "balrog":
            return self._balrog(obs, info)
        return self._default(obs)

    # Templates ------------------------------------------------------------------------------------

    def _default(self, obs: Mapping[str, Any]) -> list[Message]:
        system = default_system(obs["mission"], self.config.output_format)
        messages: list[Message] = [{"role": "system", "content": [_text(system)]}]
        history = list(self._past)[-self.config.history :] if self.config.history else []
        image_budget = self._image_budget(len(history))
        for i, (past, answer) in enumerate(history):
            parts = self._image_parts(past, image_budget[i])
            parts.append(_text(observation_text(past, self.config.show_actions, current=False)))
            messages.append({"role": "user", "content": parts})
            messages.append({"role": "assistant", "content": [_text(answer)]})
        parts = self._image_parts(obs, image_budget[-1])
        parts.append(_text(observation_text(obs, self.config.show_actions, current=True)))
        messages.append({"role": "user", "content": parts})
        return messages

    def _balrog_observation(self, obs: Mapping[str, Any], info: Mapping[str, Any] | None) -> dict[str, Any]:
        """An observation event: BALROG's long- and short-term text and its image (or ``None``)."""
        context = (info or {}).get("balrog")
        image = obs.get("image") if self.attach_images else None
        if context is None:  # an env without BALROG's text: its observation text is the long-term context
            return {"long": obs["text"], "short": "", "image": image}
        if "image" in context and context["image"] is None:  # BALROG shows no image (TextWorld)
            image = None
        return {"long": context.get("long_term_context", ""), "short": context.get("short_term_context", ""), "image": image}

    def _balrog(self, obs: Mapping[str, Any], info: Mapping[str, Any] | None) -> list[Message]:
        """BALROG's ``HistoryPromptBuilder.get_prompt`` after ``update_observation(obs)``, with the
        agent's instruction (and the few-shot agent's demonstrations)."""
        agent = self.config.output_format
        current = self._balrog_observation(obs, info)
        if self._first is None:
            self._first = current["long"]
        events = [*self._events, current][-self._events.maxlen :] if self._events.maxlen else []
        seen = [i for i, e in enumerate(events) if "long" in e]
        with_text = set(seen[::-1][: self.config.history])
        with_image = set([i for i in reversed(seen) if events[i]["image"] is not None][: self.config.images])
        plans = [i for i in reversed(range(len(events))) if events[i].get("reasoning") is not None][: self.cot_history]
        instructions = self.instructions or balrog_generic_instructions(obs)
        if agent == "balrog-few-shot":
            messages = self._balrog_demonstrations(instructions)
        else:
            messages = [{"role": "user", "content": [_text(instructions)]}]
        for i, event in enumerate(events):
            if "action" in event:
                said = f"Previous plan:\n{event['reasoning']}" if i in plans else event["action"]
                messages.append({"role": "assistant", "content": [_text(said)]})
                continue
            lines = ["Current Observation:", *([event["short"]] if event["short"] else [])] if i == len(events) - 1 else ["Observation:"]
            if i in with_text:
                lines.append(event["long"])
            parts = []
            if i in with_image:
                lines.append("Image observation provided.")
                parts.append(_image(event["image"]))
            messages.append({"role": "user", "content": [_text("\n".join(lines)), *parts]})
        last = messages[-1]
        if last["role"] == "user":
            text = last["content"][0]["text"]
            if self.instructions is None and self.config.show_actions:  # our envs' actions vary by state
                text += "\nAdmissible actions: " + ", ".join(obs["actions"])
            last["content"][0] = _text(f"{text}\n\n{balrog_instruction(agent)}")
        return messages

    def _balrog_demonstrations(self, instructions: str) -> list[Message]:
        """BALROG's ``FewShotAgent.get_icl_prompt``: the demonstrations before the episode."""

        def user(text: str) -> Message:
            return {"role": "user", "content": [_text(text)]}

        messages = [user(instructions.replace("PLAY", "First, observe the demonstrations provided and learn from them!"))]
        shown = [d for d in self.demos if d.observations[0] != self._first][: self.icl_episodes]
        used = 0
        for n, demo in enumerate(shown, 1):
            episode = [user(f"****** START OF DEMONSTRATION EPISODE {n} ******"), user(f"Obesrvation:\n{demo.observations[0]}")]
            for action, text in zip(demo.actions, demo.observations[1:], strict=True):
                episode += [{"role": "assistant", "content": [_text(action)]}, user(f"Obesrvation:\n{text}")]
            episode.append(user(f"****** END OF DEMONSTRATION EPISODE {n} ******"))
            events = len(episode) - 2
            if used + events > self.max_icl_history:  # cut to the events left, keep the END marker
                messages += [*episode[: self.max_icl_history - used + 1], episode[-1]]
                break
            messages += episode
            used += events
        messages.append(user("****** Now it's your turn to play the game! ******"))
        return messages

    def _single_turn(self, obs: Mapping[str, Any], text: str, frames: bool = False) -> list[Message]:
        """RL4VLM and VL-DAC send one user message, images first (VL-DAC: the last frames)."""
        parts: list[dict[str, Any]] = []
        if self.attach_images:
            past = [p for p, _ in self._past] if frames else []
            shown = (past + [obs])[-self.config.images :]
            parts = [_image(o["image"]) for o in shown]
        return [{"role": "user", "content": [*parts, _text(text)]}]

    def _image_budget(self, n_past: int) -> list[bool]:
        """Which of the past observations and the current one (last) carry their image."""
        if not self.attach_images:
            return [False] * (n_past + 1)
        keep = self.config.images
        return [n_past - i < keep for i in range(n_past + 1)]

    def _image_parts(self, obs: Mapping[str, Any], attach: bool) -> list[dict[str, Any]]:
        return [_image(obs["image"])] if attach else []


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(image: np.ndarray) -> dict[str, Any]:
    return {"type": "image", "image": image}
