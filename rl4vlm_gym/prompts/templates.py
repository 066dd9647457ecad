"""The templates' words: our default prompt, and RL4VLM's, VL-DAC's and BALROG's, verbatim.

Each template's text as functions of an observation; :class:`~rl4vlm_gym.prompts.builder.PromptBuilder`
puts them into messages (which turns, which images). The papers' strings are copied character for
character, typos and literal backslashes included, from the sources named above each; a changed
character changes the prompt a policy was trained or evaluated on (and its protocol's fingerprint,
:func:`~rl4vlm_gym.prompts.fingerprint.prompt_fingerprint`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "RL4VLM_ALFWORLD",
    "RL4VLM_BLACKJACK",
    "RL4VLM_NUMBERLINE",
    "RL4VLM_POINTS",
    "balrog_generic_instructions",
    "balrog_instruction",
    "default_system",
    "observation_text",
    "rl4vlm_game",
    "rl4vlm_text",
    "vldac_text",
]

# Our default template ---------------------------------------------------------------------------------

_FORMAT_INSTRUCTIONS = {
    "json": 'Answer with a JSON object: {"thoughts": "<your reasoning>", "action": "<one admissible action>"}.',
    "tags": "Think inside <think> </think>, then give one admissible action inside <action> </action>.",
    "plain": "Answer with one admissible action and nothing else.",
}


def default_system(mission: str, output_format: str) -> str:
    """The default template's system message: the task and what to write (``output_format``)."""
    return (
        "You are an agent acting in an environment. Each turn you get an observation and choose one "
        "action; the episode ends when the task is done or the step budget runs out.\n"
        f"Task: {mission}\n{_FORMAT_INSTRUCTIONS[output_format]}"
    )


def observation_text(obs: Mapping[str, Any], show_actions: bool, current: bool) -> str:
    """The default template's user turn for ``obs``; the current one lists the admissible actions (``show_actions``)."""
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


def balrog_instruction(agent: str) -> str:
    """The instruction BALROG's ``agent`` (one of :data:`~rl4vlm_gym.prompts.config.BALROG_AGENTS`)
    appends to the last message."""
    return _BALROG_AGENT_INSTRUCTIONS[agent]


def balrog_generic_instructions(obs: Mapping[str, Any]) -> str:
    """Instructions in the shape of BALROG's, for envs that write none."""
    mission = obs["mission"].rstrip(".")
    return (
        f"You are an agent playing a game. Your goal is to {mission}.\n\n"
        "Each turn you see an observation and answer with one of the admissible actions listed with it.\n\n"
        "In a moment I will present you an observation.\n\nPLAY!"
    )


# RL4VLM's prompts (VLM_PPO/a2c_ppo_acktr/rl_utils.py::get_prompt), verbatim ------------------------

RL4VLM_NUMBERLINE = (
    'You are playing a game called number line. You will see a target number and a current number in the image. '
    'And your goal is to move the current number closer to the target by choosing either adding or subtracting one '
    'to the current number. Your response should be a valid json file in the following format: \n{\n '
    '"current number": "x", \n"target number": "x", \n"thoughts": "{first read out the current and target number, '
    'then think carefully about which action to choose}", \n"action": "-" or "+" \n}'
)
RL4VLM_BLACKJACK = (
    "You are a blackjack player. You are observing the current game state, you can choose between ['stand', 'hit']. "
    'Your response should be a valid json file in the following format: \n{\n "thoughts": "{first describe your total '
    "points and the dealer's total points then think about which action to choose}\", \n\"action\": \"stand\" or "
    '"hit" \n}'
)
# The backslashes before the braces are in RL4VLM's strings ("\{" is not an escape in Python).
RL4VLM_POINTS = (
    "You are an expert card game player. You are observing {seeing}. You are observing the current formula: {F}. "
    "You can choose between {vocab}. The number or operator you choose will be appended to the current formula. "
    "Note that 'J', 'Q', and 'K' count as '10'. Your goal is to output a formula that evaluates to {target}, and each "
    "number can only be used once. Your response should be a valid json file in the following format: \\{{\n "
    '"cards": [{cards}], \n"current formula": {F}, \n"thoughts": {{First check whether the current formula \'z\' is '
    "complete. If the current formula 'z' is complete, output '='. Otherwise consider which number or operator should "
    "be appended to the current formula to make it equal {target}.}} \n\"action\": \"{{number}}\" or \"{{operator}}\" "
    "\n \\}}"
)
RL4VLM_ALFWORLD = (
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


def rl4vlm_game(env_id: str) -> str:
    """The RL4VLM game whose prompt ``env_id`` takes; raises ``ValueError`` for an env RL4VLM did not have."""
    name = env_id.rsplit("/", 1)[-1].split("-", 1)[0]
    if name not in _RL4VLM_GAMES:
        raise ValueError(
            f"the rl4vlm prompt template covers RL4VLM's envs ({', '.join(sorted(_RL4VLM_GAMES))}), not {env_id!r}; "
            "use the default or vl-dac template"
        )
    return _RL4VLM_GAMES[name]


def rl4vlm_text(env_id: str, obs: Mapping[str, Any]) -> str:
    """RL4VLM's prompt for ``obs`` of ``env_id`` (the points games read the formula from ``obs["text"]``)."""
    game = rl4vlm_game(env_id)
    if game == "numberline":
        return RL4VLM_NUMBERLINE
    if game == "blackjack":
        return RL4VLM_BLACKJACK
    if game == "alfworld":
        # RL4VLM prints the numpy array of commands: quoted, newline-separated, no commas.
        actions = "\n ".join(f"'{a}'" for a in obs["actions"])
        task = obs["mission"].removesuffix(".")
        return RL4VLM_ALFWORLD.format(obs=obs["text"], task=task, actions=actions)
    formula = _line_value(obs["text"], "Formula:")
    four = game == "points24"
    return RL4VLM_POINTS.format(
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


def vldac_text(obs: Mapping[str, Any], steps: int) -> str:
    """VL-DAC's instruction prompt for ``obs`` after ``steps`` actions, the actions numbered."""
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
