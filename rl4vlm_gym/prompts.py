r"""Chat prompts from observations: one builder for evaluation and training.

A :class:`PromptBuilder` turns each observation ``{"image", "text", "mission", "actions"}`` into
chat messages, so a policy is evaluated with exactly the prompt it was trained on. Messages are
kept in one neutral form, a list of ``{"role": ..., "content": [parts]}`` whose parts are
``{"type": "text", "text": str}`` or ``{"type": "image", "image": uint8[H, W, 3]}``, and exported
to the two forms models take:

- :func:`to_openai`: OpenAI chat format, images as base64 PNG ``image_url`` parts (vLLM, hosted
  APIs);
- :func:`to_hf`: Hugging Face processor style, ``{"type": "image"}`` placeholders in the messages
  and the images in a separate list, in order, for ``processor(text=..., images=...)``.

Templates (``PromptConfig.template``):

- ``"default"``: the mission, the observation text, the admissible actions and the output format
  of the parser (``json``, ``tags`` or ``plain``), for any env.
- ``"rl4vlm"``: RL4VLM's ``get_prompt`` / ``get_alfworld_prompt`` strings, character for
  character (typos and literal backslashes included), for NumberLine, EZPoints, Points24,
  Blackjack and the household envs. The formula of EZPoints and Points24 is read from the
  ``Formula:`` line of ``text``, as RL4VLM read it from ``info``: use ``obs_mode="image+text"``.
- ``"vl-dac"``: VL-DAC's instruction prompt (``# Instructions`` ... ``# Available actions``),
  after the last frames as images, for any env; actions are numbered and the answer is
  ``{"thoughts": ..., "action": <action_number>}`` as in VL-DAC's MiniWorld prompt.

- ``"balrog"``: BALROG's protocol, message for message as BALROG af7d1f1 builds it
  (``balrog/prompt_builder/history.py``, ``balrog/agents/*.py``, ``balrog/evaluator.py``; checked
  against recordings of BALROG's own code, ``tests/envs/balrog/golden/protocol``). ``output_format``
  picks BALROG's agent: ``balrog-naive``, ``balrog-cot``, ``balrog-robust-naive``,
  ``balrog-robust-cot`` or ``balrog-few-shot`` (the env's ``action_format`` of the same name parses
  the reply as that agent does). Use :class:`~rl4vlm_gym.wrappers.BalrogActions` for its handling of
  invalid outputs, and pass each step's ``info`` to :meth:`PromptBuilder.messages` and
  :meth:`PromptBuilder.record`. Details below.

Other templates replay history as user observation / assistant answer turns: the last ``history``
steps, and the last ``images`` observations (the current one included) carry their image.
``images=0`` gives a text-only prompt (an LLM track).

The ``balrog`` template
-----------------------

- The first message (role user) is the env's instruction prompt
  (:meth:`~rl4vlm_gym.core.VLMEnv.instruction_prompt`, BALROG's ``get_instruction_prompt``); envs
  without one get generic instructions from the mission, and their admissible actions are listed
  with the current observation.
- Each observation is read from ``info["balrog"]`` (``long_term_context``, ``short_term_context``:
  BALROG's observation text) when the env gives it, else ``obs["text"]`` is the long-term context.
  ``info["balrog"]["image"] = None`` says BALROG has no image for it (TextWorld).
- History is BALROG's deque of ``2 * max(history, images)`` events (observations and the agent's
  outputs), so with ``history=16`` the prompt holds 16 observations and, from the 17th step on,
  opens with an assistant turn. Past observations read ``"Observation:\n" + long_term``; the newest
  ``"Current Observation:\n" + short_term + "\n" + long_term`` (an empty short-term left out);
  ``history`` counts the newest observations that keep their text and ``images`` those that keep
  their image (then ``"\nImage observation provided."``, and the image after the text).
- An assistant turn holds what the agent extracted from its reply (BALROG's history keeps that,
  not the action the env played; an empty extraction adds no turn); for the CoT agent the newest
  turn is ``"Previous plan:\n" + reply`` instead.
- The agent's own instruction follows the last user message after a blank line, verbatim.
- ``balrog-few-shot`` opens with BALROG's in-context demonstrations (``balrog/agents/few_shot.py``):
  the instruction prompt with "PLAY" replaced by "First, observe the demonstrations provided and
  learn from them!", each demonstration between START / END markers as ``"Obesrvation:\n" +
  long_term`` (BALROG's spelling) and action turns, at most ``max_icl_history`` events in all, then
  "Now it's your turn to play the game!" and the history without the instruction prompt. The
  demonstrations come with the builder (``demos``; the model agents make them from the env's
  oracle: :mod:`rl4vlm_gym.agents.demos`).
- BALROG's sampling settings (temperature 1.0, 8192 new tokens) are :data:`BALROG_SAMPLING`; the
  model agents take them by default under this template.
"""

from __future__ import annotations

import base64
import io
import json
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rl4vlm_gym.parsing import balrog_extract, balrog_reasoning

__all__ = [
    "BALROG_AGENTS",
    "BALROG_SAMPLING",
    "TEMPLATES",
    "BalrogDemo",
    "Message",
    "PromptBuilder",
    "PromptConfig",
    "to_hf",
    "to_openai",
]

Message = dict[str, Any]
"""``{"role": "system" | "user" | "assistant", "content": [{"type": "text" | "image", ...}]}``"""

TEMPLATES: tuple[str, ...] = ("default", "rl4vlm", "vl-dac", "balrog")
BALROG_AGENTS: tuple[str, ...] = ("balrog-naive", "balrog-cot", "balrog-robust-naive", "balrog-robust-cot", "balrog-few-shot")
"""BALROG's agents (``naive``, ``cot``, ``robust_naive``, ``robust_cot``, ``few_shot``): the
``balrog`` template's output formats, and the env's ``action_format`` that parses their replies."""
BALROG_SAMPLING: dict[str, Any] = {"temperature": 1.0, "max_tokens": 8192}
"""BALROG's ``client.generate_kwargs`` (``balrog/config/config.yaml``): the model agents' defaults
under the ``balrog`` template."""
OUTPUT_FORMATS: tuple[str, ...] = ("json", "tags", "plain", *BALROG_AGENTS)


@dataclass(frozen=True)
class PromptConfig:
    """How observations become prompts; part of an evaluation's protocol hash.

    Attributes:
        template: one of :data:`TEMPLATES`.
        output_format: what the model is asked to write: ``"json"``, ``"tags"`` or ``"plain"``
            (the ``rl4vlm`` and ``vl-dac`` templates fix their own JSON format).
        history: past steps replayed before the current observation; under the ``balrog``
            template BALROG's ``max_text_history``: the observations, the current one included,
            that keep their text (its history holds ``max(history, images)`` observations).
        images: observations that carry their image, the current one included (0: text only;
            ``balrog``: BALROG's ``max_image_history``, 0 for its LLM mode).
        show_actions: list the admissible actions in the prompt.
    """

    template: str = "default"
    output_format: str = "json"
    history: int = 0
    images: int = 1
    show_actions: bool = True

    def __post_init__(self) -> None:
        if self.template not in TEMPLATES:
            raise ValueError(f"prompt template {self.template!r} is unknown; choose one of {TEMPLATES}")
        if self.output_format not in OUTPUT_FORMATS:
            raise ValueError(f"prompt output_format {self.output_format!r} is unknown; choose one of {OUTPUT_FORMATS}")
        if (self.template == "balrog") != (self.output_format in BALROG_AGENTS):
            raise ValueError(
                f"prompt output_format {self.output_format!r} does not go with template {self.template!r}: "
                f"the balrog template takes one of BALROG's agents {BALROG_AGENTS}, and only it does"
            )
        for name in ("history", "images"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 64:
                raise ValueError(f"prompt {name}={value!r} must be an int in 0..64")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BalrogDemo:
    """One demonstration episode for BALROG's few-shot agent, as BALROG's ``InContextDataset``
    feeds it (``balrog/dataset.py``): the ``long_term_context`` of each observation (at reset and
    after each action, up to the end of the episode) and the actions in between.

    Attributes:
        observations: ``len(actions) + 1`` texts.
        actions: the actions, as the env's action strings.
        source: where it came from (env id and seed), for the run's records.
    """

    observations: tuple[str, ...]
    actions: tuple[str, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.observations) != len(self.actions) + 1:
            raise ValueError(f"a demonstration has one more observation than actions, not {len(self.observations)} and {len(self.actions)}")


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
            _rl4vlm_game(env_id)  # fail at construction, not at the first step
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
            return self._single_turn(obs, _rl4vlm_text(self.env_id, obs))
        if self.config.template == "vl-dac":
            return self._single_turn(obs, _vldac_text(obs, self._steps), frames=True)
        if self.config.template == "balrog":
            return self._balrog(obs, info)
        return self._default(obs)

    # Templates ------------------------------------------------------------------------------------

    def _default(self, obs: Mapping[str, Any]) -> list[Message]:
        system = _default_system(obs["mission"], self.config.output_format)
        messages: list[Message] = [{"role": "system", "content": [_text(system)]}]
        history = list(self._past)[-self.config.history :] if self.config.history else []
        image_budget = self._image_budget(len(history))
        for i, (past, answer) in enumerate(history):
            parts = self._image_parts(past, image_budget[i])
            parts.append(_text(_observation_text(past, self.config.show_actions, current=False)))
            messages.append({"role": "user", "content": parts})
            messages.append({"role": "assistant", "content": [_text(answer)]})
        parts = self._image_parts(obs, image_budget[-1])
        parts.append(_text(_observation_text(obs, self.config.show_actions, current=True)))
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
        instructions = self.instructions or _balrog_generic_instructions(obs)
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
            last["content"][0] = _text(f"{text}\n\n{_BALROG_AGENT_INSTRUCTIONS[agent]}")
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


_FORMAT_INSTRUCTIONS = {
    "json": 'Answer with a JSON object: {"thoughts": "<your reasoning>", "action": "<one admissible action>"}.',
    "tags": "Think inside <think> </think>, then give one admissible action inside <action> </action>.",
    "plain": "Answer with one admissible action and nothing else.",
}


def _default_system(mission: str, output_format: str) -> str:
    return (
        "You are an agent acting in an environment. Each turn you get an observation and choose one "
        "action; the episode ends when the task is done or the step budget runs out.\n"
        f"Task: {mission}\n{_FORMAT_INSTRUCTIONS[output_format]}"
    )


def _observation_text(obs: Mapping[str, Any], show_actions: bool, current: bool) -> str:
    lines = ["Current observation:" if current else "Observation:"]
    if obs["text"]:
        lines.append(obs["text"])
    if show_actions and current:
        lines.append("Admissible actions: " + ", ".join(obs["actions"]))
    return "\n".join(lines)


# BALROG's protocol (BALROG af7d1f1: balrog/agents/{naive,chain_of_thought,robust_naive,robust_cot,
# few_shot}.py, the instruction each agent appends to the last message; verbatim) -------------------

_BALROG_NAIVE = (
    "You always have to output one of the above actions at a time and no other text. "
    "You always have to output an action until the episode terminates."
)
_BALROG_AGENT_INSTRUCTIONS = {
    "balrog-naive": _BALROG_NAIVE,
    "balrog-few-shot": _BALROG_NAIVE,
    "balrog-cot": "First think about what's the best course of action step by step.\n"
    "Finally, provide a single output action at the end of the message in the form of: ACTION: <action>",
    "balrog-robust-naive": "You must choose exactly one of the listed actions and output it strictly in the following "
    "format:\n\n<|ACTION|>YOUR_CHOSEN_ACTION<|END|>\n\nReplace YOUR_CHOSEN_ACTION with the chosen action. "
    "Output no other text, explanation, or reasoning.",
    "balrog-robust-cot": "First, think about the best course of action.\nThen, you must choose exactly one of the "
    "listed actions and output it strictly in the following format:\n\n<|ACTION|>YOUR_CHOSEN_ACTION<|END|>\n\n"
    "Replace YOUR_CHOSEN_ACTION with the chosen action.",
}


def _balrog_generic_instructions(obs: Mapping[str, Any]) -> str:
    """Instructions in the shape of BALROG's, for envs that write none."""
    mission = obs["mission"].rstrip(".")
    return (
        f"You are an agent playing a game. Your goal is to {mission}.\n\n"
        "Each turn you see an observation and answer with one of the admissible actions listed with it.\n\n"
        "In a moment I will present you an observation.\n\nPLAY!"
    )


# RL4VLM's prompts (VLM_PPO/a2c_ppo_acktr/rl_utils.py::get_prompt), verbatim ------------------------

_RL4VLM_NUMBERLINE = (
    'You are playing a game called number line. You will see a target number and a current number in the image. '
    'And your goal is to move the current number closer to the target by choosing either adding or subtracting one '
    'to the current number. Your response should be a valid json file in the following format: \n{\n '
    '"current number": "x", \n"target number": "x", \n"thoughts": "{first read out the current and target number, '
    'then think carefully about which action to choose}", \n"action": "-" or "+" \n}'
)
_RL4VLM_BLACKJACK = (
    "You are a blackjack player. You are observing the current game state, you can choose between ['stand', 'hit']. "
    'Your response should be a valid json file in the following format: \n{\n "thoughts": "{first describe your total '
    "points and the dealer's total points then think about which action to choose}\", \n\"action\": \"stand\" or "
    '"hit" \n}'
)
# The backslashes before the braces are in RL4VLM's strings ("\{" is not an escape in Python).
_RL4VLM_POINTS = (
    "You are an expert card game player. You are observing {seeing}. You are observing the current formula: {F}. "
    "You can choose between {vocab}. The number or operator you choose will be appended to the current formula. "
    "Note that 'J', 'Q', and 'K' count as '10'. Your goal is to output a formula that evaluates to {target}, and each "
    "number can only be used once. Your response should be a valid json file in the following format: \\{{\n "
    '"cards": [{cards}], \n"current formula": {F}, \n"thoughts": {{First check whether the current formula \'z\' is '
    "complete. If the current formula 'z' is complete, output '='. Otherwise consider which number or operator should "
    "be appended to the current formula to make it equal {target}.}} \n\"action\": \"{{number}}\" or \"{{operator}}\" "
    "\n \\}}"
)
_RL4VLM_ALFWORLD = (
    "Your are an expert in the ALFRED Embodied Environment. You are also given the following text description of "
    "the current scene: {obs}. Your task is to {task}. Your admissible actions of the current situation are: "
    "[{actions}]. Your response should be a valid json file in the following format: \n\\{{\n\"thoughts\": \"{{first "
    "describe what do you see in the image using the text description, then carefully think about which action to "
    'complete the task. }}", \n"action": "{{an admissible action}}"\n\\}}'
)
_RL4VLM_GAMES = {
    "NumberLine": "numberline",
    "EZPoints": "ezpoints",
    "Points24": "points24",
    "Blackjack": "blackjack",
    "Household": "alfworld",
    "ALFWorld": "alfworld",
}


def _rl4vlm_game(env_id: str) -> str:
    name = env_id.rsplit("/", 1)[-1].split("-", 1)[0]
    if name not in _RL4VLM_GAMES:
        raise ValueError(
            f"the rl4vlm prompt template covers RL4VLM's envs ({', '.join(sorted(_RL4VLM_GAMES))}), not {env_id!r}; "
            "use the default or vl-dac template"
        )
    return _RL4VLM_GAMES[name]


def _rl4vlm_text(env_id: str, obs: Mapping[str, Any]) -> str:
    game = _rl4vlm_game(env_id)
    if game == "numberline":
        return _RL4VLM_NUMBERLINE
    if game == "blackjack":
        return _RL4VLM_BLACKJACK
    if game == "alfworld":
        # RL4VLM prints the numpy array of commands: quoted, newline-separated, no commas.
        actions = "\n ".join(f"'{a}'" for a in obs["actions"])
        task = obs["mission"].removesuffix(".")
        return _RL4VLM_ALFWORLD.format(obs=obs["text"], task=task, actions=actions)
    formula = _line_value(obs["text"], "Formula:")
    four = game == "points24"
    return _RL4VLM_POINTS.format(
        seeing="thee four cards in the image" if four else "two cards in the image",  # RL4VLM's typo
        F=formula,
        vocab=str(list(obs["actions"])),
        target=24 if four else 12,
        cards="x, y, z, w" if four else "x, y",
    )


def _line_value(text: str, key: str) -> str:
    for line in text.splitlines():
        if line.startswith(key):
            return line[len(key) :].strip()
    return ""


# VL-DAC's prompt (environments/miniworld_env.py::get_observation_prompt, v2/v3) ------------------


def _vldac_text(obs: Mapping[str, Any], steps: int) -> str:
    state = f"the state after {steps} previous actions" if steps else "starting state"
    actions = "\n".join(f"{i} : {a}" for i, a in enumerate(obs["actions"]))
    observation = f"\n{obs['text']}\n" if obs["text"] else ""
    return (
        "# Instructions\n"
        "You are operating in a simulator. Your objective is to complete the task. To complete the task, you need to "
        "take actions. Upon completing the task, the simulation will end, and you will receive a reward. If you will "
        "not solve the task, you will get reward 0.\n"
        f"TASK: {obs['mission']}\n"
        f"Take ONE action based on the current observation. Current observation is {state}. If you cannot determine "
        "how to solve the task, you may turn around or explore the environment to identify the appropriate action.\n"
        f"{observation}"
        f"# Available actions:\n{actions}\n\n"
        "Think through current observation and choose one action to take.\n\n"
        "# ADDITIONAL INSTRUCTIONS:\n"
        "- If you're stuck against a wall, try to turn around and explore the environment.\n"
        "- If you can't see the goal, try to explore the environment.\n\n"
        "The output format should be as follows:\n"
        '{"thoughts": <any thoughts that will lead you to the goal>, "action": <action_number>}'
    )


# Exports --------------------------------------------------------------------------------------------


def png_base64(image: np.ndarray, compress_level: int | None = 1) -> str:
    """``image`` as a base64 PNG string (lossless, so the model sees the env's exact pixels).

    ``compress_level`` 1 is fast; ``None`` is Pillow's default (6), what BALROG's clients send
    (``image.save(buffer, format="PNG")``), byte for byte with the same zlib."""
    from PIL import Image

    buffer = io.BytesIO()
    options = {} if compress_level is None else {"compress_level": compress_level}
    Image.fromarray(np.asarray(image, np.uint8)).save(buffer, format="PNG", **options)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def to_openai(messages: Sequence[Message], compress_level: int | None = 1) -> list[dict[str, Any]]:
    """OpenAI chat messages: text parts as ``text``, images as base64 PNG ``image_url`` parts, in
    the messages' order (under the ``balrog`` template, each image after its text, as BALROG's
    OpenAI client sends it; ``compress_level=None`` encodes the PNG as BALROG does)."""

    def image_url(image: np.ndarray) -> dict[str, Any]:
        return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + png_base64(image, compress_level)}}

    return _export(messages, image_url)


def to_hf(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[Any]]:
    """Hugging Face processor style: ``{"type": "image"}`` placeholders and the PIL images in order."""
    from PIL import Image

    images: list[Any] = []

    def placeholder(image: np.ndarray) -> dict[str, Any]:
        images.append(Image.fromarray(np.asarray(image, np.uint8)))
        return {"type": "image"}

    return _export(messages, placeholder), images


def _export(messages: Sequence[Message], image_part: Any) -> list[dict[str, Any]]:
    return [
        {
            "role": m["role"],
            "content": [{"type": "text", "text": p["text"]} if p["type"] == "text" else image_part(p["image"]) for p in m["content"]],
        }
        for m in messages
    ]


def prompt_fingerprint(config: PromptConfig) -> str:
    """What identifies a prompt in a protocol: the config and the template text it produces."""
    probe = {"image": np.zeros((1, 1, 3), np.uint8), "text": "<text>", "mission": "<mission>", "actions": ("<a>", "<b>")}
    if config.template == "balrog":  # the env's own instructions are versioned with the env
        return json.dumps({"config": config.as_dict(), "sample": _balrog_sample(config.output_format)}, sort_keys=True, default=str)
    builder = PromptBuilder(PromptConfig(template="default", output_format=config.output_format), attach_images=False)
    sample = {"default": builder.messages(probe), "vl-dac": _vldac_text(probe, 0)}
    if config.template == "rl4vlm":
        sample["rl4vlm"] = [_RL4VLM_NUMBERLINE, _RL4VLM_BLACKJACK, _RL4VLM_POINTS, _RL4VLM_ALFWORLD]
    return json.dumps({"config": config.as_dict(), "sample": sample[config.template]}, sort_keys=True, default=str)


def _balrog_sample(agent: str) -> list[list[Message]]:
    """The ``balrog`` template's messages over three probe steps (history, plans, feedback-free),
    with a probe demonstration for the few-shot agent."""
    demo = BalrogDemo(("<demo 0>", "<demo 1>"), ("<a>",))
    builder = PromptBuilder(
        PromptConfig(template="balrog", output_format=agent, history=2, images=1), instructions="<instructions> PLAY!", demos=[demo]
    )
    samples = []
    for t in range(3):
        obs = {"image": np.zeros((1, 1, 3), np.uint8), "text": f"<text {t}>", "mission": "<mission>", "actions": ("<a>", "<b>")}
        info = {"balrog": {"long_term_context": f"<long {t}>", "short_term_context": f"<short {t}>"}}
        samples.append(builder.messages(obs, info))
        builder.record(obs, f"<thoughts {t}> ACTION: <a>", info)
    return samples
