"""Prompts: the templates' text, history and images, and the OpenAI and Hugging Face exports."""

from __future__ import annotations

import base64
import io

import gymnasium as gym
import numpy as np
import pytest
from PIL import Image

import rl4vlm_gym  # noqa: F401
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig, png_base64, prompt_fingerprint, to_hf, to_openai
from rl4vlm_gym.wrappers import RewordMission

# RL4VLM's NumberLine and Blackjack prompts as rendered by running its get_prompt (RL4VLM/RL4VLM at b989b57, a2c_ppo_acktr/rl_utils.py).
RL4VLM_NUMBERLINE = (
    'You are playing a game called number line. You will see a target number and a current number in the image. And '
    "your goal is to move the current number closer to the target by choosing either adding or subtracting one to the "
    'current number. Your response should be a valid json file in the following format: \n{\n "current number": "x", '
    '\n"target number": "x", \n"thoughts": "{first read out the current and target number, then think carefully about '
    'which action to choose}", \n"action": "-" or "+" \n}'
)
RL4VLM_BLACKJACK = (
    "You are a blackjack player. You are observing the current game state, you can choose between ['stand', 'hit']. "
    'Your response should be a valid json file in the following format: \n{\n "thoughts": "{first describe your total '
    "points and the dealer's total points then think about which action to choose}\", \n\"action\": \"stand\" or \"hit\" \n}"
)


def _episode(env_id: str, obs_mode: str = "image+text", seed: int = 3, **kwargs):
    env = gym.make(env_id, obs_mode=obs_mode, **kwargs)
    obs, _ = env.reset(seed=seed)
    return env, obs


def _texts(message):
    return [p["text"] for p in message["content"] if p["type"] == "text"]


def _images(messages):
    return [p["image"] for m in messages for p in m["content"] if p["type"] == "image"]


def test_rl4vlm_template_is_verbatim():
    for env_id, expected in (("rl4vlm/NumberLine-v0", RL4VLM_NUMBERLINE), ("rl4vlm/Blackjack-v0", RL4VLM_BLACKJACK)):
        env, obs = _episode(env_id)
        messages = PromptBuilder(PromptConfig(template="rl4vlm"), env_id).messages(obs)
        assert len(messages) == 1 and messages[0]["role"] == "user"
        assert [p["type"] for p in messages[0]["content"]] == ["image", "text"]  # "<image>\n" + qs
        assert _texts(messages[0]) == [expected]


def test_rl4vlm_points_prompt_keeps_its_backslashes_and_reads_the_formula():
    env, obs = _episode("rl4vlm/Points24-v0", seed=5)
    for action in env.unwrapped.oracle_action(), :
        obs, *_ = env.step(action)
    text = _texts(PromptBuilder(PromptConfig(template="rl4vlm"), "rl4vlm/Points24-v0").messages(obs)[0])[0]
    formula = obs["text"].split("Formula:")[1].strip()
    assert formula and f"You are observing the current formula: {formula}. " in text
    assert "You are observing thee four cards in the image." in text  # RL4VLM's typo, kept
    assert text.endswith('"action": "{number}" or "{operator}" \n \\}')
    assert "format: \\{\n \"cards\": [x, y, z, w]," in text


def test_rl4vlm_template_refuses_other_envs():
    with pytest.raises(ValueError, match="the rl4vlm prompt template covers RL4VLM's envs"):
        PromptBuilder(PromptConfig(template="rl4vlm"), "rl4vlm/WebShop-v1")


def test_rl4vlm_household_prompt_lists_commands_like_numpy():
    env, obs = _episode("rl4vlm/Household-v0")
    text = _texts(PromptBuilder(PromptConfig(template="rl4vlm"), "rl4vlm/Household-v0").messages(obs)[0])[0]
    assert text.startswith("Your are an expert in the ALFRED Embodied Environment.")
    assert f"Your task is to {obs['mission'].removesuffix('.')}." in text
    assert "['go to cabinet 1'\n 'go to cabinet 2'" in text


@pytest.mark.extra("nav")
def test_vldac_template_numbers_actions_and_counts_steps():
    env, obs = _episode("rl4vlm/MiniWorld-OneRoom-v1", image_size=(64, 64))
    builder = PromptBuilder(PromptConfig(template="vl-dac", images=4), "rl4vlm/MiniWorld-OneRoom-v1")
    text = _texts(builder.messages(obs)[0])[0]
    assert "Current observation is starting state." in text
    assert "# Available actions:\n0 : turn left\n1 : turn right\n2 : move forward" in text
    assert text.endswith('{"thoughts": <any thoughts that will lead you to the goal>, "action": <action_number>}')
    for _ in range(5):
        builder.record(obs, '{"action": 2}')
        obs, *_ = env.step('{"thoughts": "", "action": 2}')
    messages = builder.messages(obs)
    assert "Current observation is the state after 5 previous actions." in _texts(messages[0])[0]
    assert len(_images(messages)) == 4  # VL-DAC's last four frames
    assert _images(messages)[-1] is obs["image"]


def test_default_template_history_and_image_budget():
    env, obs = _episode("rl4vlm/NumberLine-v0")
    builder = PromptBuilder(PromptConfig(history=2, images=2, output_format="tags"), "rl4vlm/NumberLine-v0")
    first = builder.messages(obs)
    assert [m["role"] for m in first] == ["system", "user"]
    assert obs["mission"] in _texts(first[0])[0] and "<action>" in _texts(first[0])[0]
    assert "Admissible actions: -, +" in _texts(first[1])[0]
    seen = [obs]
    for answer in ("<action>+</action>", "<action>-</action>", "<action>+</action>"):
        builder.record(obs, answer)
        obs, *_ = env.step(answer)
        seen.append(obs)
    messages = builder.messages(obs)
    # the last two steps replayed as user/assistant turns, then the current observation
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert _texts(messages[2]) == ["<action>-</action>"] and _texts(messages[4]) == ["<action>+</action>"]
    images = _images(messages)
    assert len(images) == 2 and images[-1] is obs["image"] and images[0] is seen[-2]["image"]
    builder.reset()
    assert len(builder.messages(obs)) == 2


def test_text_mode_and_zero_images_attach_nothing():
    env, obs = _episode("rl4vlm/NumberLine-v0", obs_mode="text")
    assert _images(PromptBuilder(PromptConfig(), attach_images=False).messages(obs)) == []
    assert _images(PromptBuilder(PromptConfig(images=0)).messages(obs)) == []


def test_exports():
    env, obs = _episode("rl4vlm/NumberLine-v0", image_size=(96, 128))
    messages = PromptBuilder(PromptConfig()).messages(obs)
    openai = to_openai(messages)
    part = openai[1]["content"][0]
    assert part["type"] == "image_url" and part["image_url"]["url"].startswith("data:image/png;base64,")
    png = base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))), obs["image"])  # lossless
    hf, images = to_hf(messages)
    assert hf[1]["content"][0] == {"type": "image"} and len(images) == 1 and images[0].size == (128, 96)
    assert all(isinstance(p.get("text", ""), str) for m in hf for p in m["content"])


def test_bad_configs_are_named():
    with pytest.raises(ValueError, match="prompt template 'cot' is unknown"):
        PromptConfig(template="cot")
    with pytest.raises(ValueError, match="prompt history=-1 must be an int"):
        PromptConfig(history=-1)
    with pytest.raises(ValueError, match="output_format 'xml' is unknown"):
        PromptConfig(output_format="xml")


def test_fingerprint_tracks_the_template_text():
    assert prompt_fingerprint(PromptConfig()) == prompt_fingerprint(PromptConfig())
    assert prompt_fingerprint(PromptConfig()) != prompt_fingerprint(PromptConfig(output_format="tags"))
    assert prompt_fingerprint(PromptConfig(template="rl4vlm")) != prompt_fingerprint(PromptConfig(template="vl-dac"))


def test_balrog_fingerprints_tell_its_agents_apart():
    agents = ("balrog-naive", "balrog-cot", "balrog-robust-naive", "balrog-robust-cot", "balrog-few-shot")
    prints = {prompt_fingerprint(PromptConfig(template="balrog", output_format=a, history=16, images=1)) for a in agents}
    assert len(prints) == len(agents)
    few_shot = prompt_fingerprint(PromptConfig(template="balrog", output_format="balrog-few-shot", history=16, images=1))
    assert "START OF DEMONSTRATION EPISODE 1" in few_shot and "Previous plan" not in few_shot
    assert "Previous plan:" in prompt_fingerprint(PromptConfig(template="balrog", output_format="balrog-cot", history=16, images=1))


def test_balrog_png_is_pillows_default_encoding():
    """BALROG's clients save images with Pillow's default PNG settings; compress_level=None does too,
    so the exported request is byte for byte BALROG's (the golden test compares whole requests)."""
    image = (np.arange(5 * 7 * 3).reshape(5, 7, 3) * 7 % 256).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    assert png_base64(image, None) == base64.b64encode(buffer.getvalue()).decode("ascii")
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(base64.b64decode(png_base64(image))))), image)  # level 1: same pixels
    message = [{"role": "user", "content": [{"type": "text", "text": "Current Observation:"}, {"type": "image", "image": image}]}]
    assert [p["type"] for p in to_openai(message, None)[0]["content"]] == ["text", "image_url"]  # order kept


def test_reword_mission_changes_only_the_mission():
    plain = gym.make("rl4vlm/Points24-v0")
    reworded = RewordMission(gym.make("rl4vlm/Points24-v0"))
    a, _ = plain.reset(seed=4)
    b, _ = reworded.reset(seed=4)
    assert b["mission"] != a["mission"] and b["mission"].startswith("Your objective: Build a formula")
    assert "each card once and only once" in b["mission"]
    assert b["text"] == a["text"] and b["actions"] == a["actions"] and np.array_equal(a["image"], b["image"])
    action = plain.unwrapped.oracle_action()
    assert plain.step(action)[1:4] == reworded.step(action)[1:4]
