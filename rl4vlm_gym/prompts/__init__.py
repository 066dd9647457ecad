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

The package, one module per job:

- :mod:`~rl4vlm_gym.prompts.config`: :class:`PromptConfig`, :class:`BalrogDemo` and the names of
  the templates, output formats and BALROG's agents;
- :mod:`~rl4vlm_gym.prompts.builder`: :class:`PromptBuilder`, the messages of an episode, step by
  step;
- :mod:`~rl4vlm_gym.prompts.templates`: the templates' words (ours, and RL4VLM's, VL-DAC's and
  BALROG's verbatim);
- :mod:`~rl4vlm_gym.prompts.exporters`: :func:`to_openai`, :func:`to_hf` and :func:`png_base64`;
- :mod:`~rl4vlm_gym.prompts.fingerprint`: :func:`prompt_fingerprint`, what identifies a prompt in
  an evaluation's protocol.

Import from ``rl4vlm_gym.prompts``: every name above is here.
"""

from __future__ import annotations

from rl4vlm_gym.prompts.builder import PromptBuilder
from rl4vlm_gym.prompts.config import BALROG_AGENTS, BALROG_SAMPLING, OUTPUT_FORMATS, TEMPLATES, BalrogDemo, Message, PromptConfig
from rl4vlm_gym.prompts.exporters import png_base64, to_hf, to_openai
from rl4vlm_gym.prompts.fingerprint import prompt_fingerprint

__all__ = [
    "BALROG_AGENTS",
    "BALROG_SAMPLING",
    "OUTPUT_FORMATS",
    "TEMPLATES",
    "BalrogDemo",
    "Message",
    "PromptBuilder",
    "PromptConfig",
    "png_base64",
    "prompt_fingerprint",
    "to_hf",
    "to_openai",
]
