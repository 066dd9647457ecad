"""The WebShop envs without a browser: oracle, rewards, actions, real-data files, the server's HTML."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rl4vlm_gym  # noqa: F401 - registers the envs
from rl4vlm_gym.core import MissingDataError
from rl4vlm_gym.envs.webshop.generator import write_files
from rl4vlm_gym.envs.webshop.levels import LEVELS
from rl4vlm_gym.testing import check_oracle

ENV = "rl4vlm/WebShop-v1"


@pytest.mark.slow
def test_oracle_solves_200_seeds_per_level_in_optimal_steps() -> None:
    # EVAL seeds 50..249 (the kit's own oracle check runs 0..49).
    report = check_oracle(ENV, episodes=200, first_seed=50)
    assert report.count("200/200 solvable solved") == len(LEVELS), report


def play(env: gym.Env, actions: list[str]) -> tuple[float, dict]:
    total, info = 0.0, {}
    for action in actions:
        _, reward, _, _, info = env.step(action)
        total += reward
    return total, info


def test_rewards_of_a_right_and_a_wrong_purchase() -> None:
    for variant, full in (("webshop", 1.0), ("verl-agent", 10.0)):
        env = gym.make(ENV, obs_mode="text", reward_variant=variant)
        env.reset(seed=3)
        base = env.unwrapped
        plan = []
        while base.route.page != "done":
            plan.append(base.oracle_action())
            env.step(plan[-1])
        assert base.reward_terms.total == 1.0
        env.reset(seed=3)
        total, info = play(env, plan)
        assert total == full and info["success"] and info["score"] == 1.0
        # Same product, but the other value of the first option: a partial score, paid only by "webshop".
        env.reset(seed=3)
        options = [a for a in plan if a not in (plan[0], plan[1], plan[-1])]
        play(env, plan[:2])
        item_actions = env.unwrapped.page.actions
        first = options[0]
        others = [a for a in item_actions if a.startswith("click[") and a != first and a not in options
                  and a not in ("click[back to search]", "click[< prev]", "click[description]", "click[features]",
                                "click[reviews]", "click[buy now]")]  # fmt: skip
        total, info = play(env, [others[0], *options[1:], "click[buy now]"])
        terms = env.unwrapped.reward_terms
        assert 0 < terms.total < 1 and not info["success"] and info["score"] == terms.total
        assert total == (terms.total if variant == "webshop" else 0.0)
        env.close()


def test_invalid_and_template_actions() -> None:
    env = gym.make(ENV, obs_mode="text")
    obs, info = env.reset(seed=0)
    assert obs["actions"] == ("search[...]",)
    obs, reward, terminated, _, info = env.step("click[buy now]")
    assert (
        not info["action"]["valid"]
        and "Invalid action" in obs["text"]
        and info["state_key"] == f"goal {env.unwrapped.goal_index} /"
    )
    obs, _, _, _, info = env.step('{"thoughts": "look", "action": "Search [Red  SHOES]"}')
    assert info["action"]["parsed"] == "search[Red  SHOES]" and env.unwrapped.route.query == "red shoes"
    assert obs["text"].count("[SEP]") > 5 and "search[...]" not in obs["actions"]
    obs, _, _, _, info = env.step("search[more shoes]")  # no search bar on a results page
    assert not info["action"]["valid"]
    strict = gym.make(ENV, obs_mode="text", action_match="strict")
    strict.reset(seed=0)
    assert not strict.step("Search[shoes]")[4]["action"]["valid"]
    assert strict.step("search[shoes]")[4]["action"]["valid"]


def test_text_rich_and_obs_modes() -> None:
    env = gym.make(ENV, text_format="text_rich")
    obs, _ = env.reset(seed=1)
    assert obs["text"].endswith("[button] Search [button_]")
    assert (obs["image"] == 255).all()  # renderer="none": a blank page before a product is opened
    base = env.unwrapped
    while base.route.page != "item":
        obs, *_ = env.step(base.oracle_action())
    assert obs["image"].shape == (512, 512, 3) and (obs["image"] != 255).any()  # the product's picture
    with pytest.raises(ValueError, match="obs_mode"):
        gym.make(ENV, obs_mode="image")
    for bad in ({"renderer": "chrome"}, {"text_format": "html"}, {"catalog_seed": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            gym.make(ENV, **bad)


def test_catalog_seed_changes_the_shop() -> None:
    a, b = gym.make(ENV, obs_mode="text"), gym.make(ENV, obs_mode="text", catalog_seed=1)
    assert a.reset(seed=0)[0]["mission"] != b.reset(seed=0)[0]["mission"]


# -- real WebShop files -------------------------------------------------------------------------------


def test_amazon_env_needs_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WEBSHOP_DATA", raising=False)
    with pytest.raises(MissingDataError, match="WEBSHOP_DATA"):
        gym.make("rl4vlm/WebShop-Amazon-v1")
    with pytest.raises(MissingDataError, match="items_shuffle_1000.json"):
        gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=tmp_path)
    (tmp_path / "items_shuffle_1000.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "items_ins_v2_1000.json").write_text("{}", encoding="utf-8")
    (tmp_path / "items_human_ins.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="items_shuffle_1000.json"):
        gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=tmp_path)


def test_amazon_env_plays_files_in_webshops_schema(tmp_path: Path) -> None:
    # A procedural catalog written as WebShop's three files, without our drawing hints.
    write_files(tmp_path, LEVELS[1], np.random.default_rng(7), hints=False)
    assert "product_type" not in json.loads((tmp_path / "items_shuffle_1000.json").read_text())[0]
    for goals in ("human", "synthetic"):
        env = gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=tmp_path, goals=goals, split="all", obs_mode="text")
        solved = 0
        for seed in range(15):
            obs, info = env.reset(seed=seed)
            assert not obs["mission"].endswith(".")
            base, done = env.unwrapped, False
            while not done:
                obs, reward, terminated, truncated, info = env.step(base.oracle_action())
                done = terminated or truncated
            solved += info["success"]
            if info["optimal_steps"] >= 0:
                assert info["success"] and base.elapsed_steps == info["optimal_steps"]
        assert solved >= 12, f"{goals}: the oracle solved only {solved}/15"
        env.close()
    with pytest.raises(ValueError, match="split"):
        gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=tmp_path, split="train")  # 40 goals: none past 1500


# -- the server's pages (Flask's test client: no browser needed) -----------------------------------


@pytest.mark.extra("webshop")  # the shop's Flask server
def test_server_escapes_catalog_text_and_refuses_unknown_pages(tmp_path: Path) -> None:
    write_files(tmp_path, LEVELS[0], np.random.default_rng(0))
    records = json.loads((tmp_path / "items_shuffle_1000.json").read_text())
    evil = '<script>alert(1)</script> & "quotes"'
    for rec in records:
        rec["name"] = f"{rec['name']} {evil}"
    (tmp_path / "items_shuffle_1000.json").write_text(json.dumps(records))
    env = gym.make("rl4vlm/WebShop-Amazon-v1", data_dir=tmp_path, goals="synthetic", split="all", obs_mode="text")
    env.reset(seed=0)
    base = env.unwrapped
    from rl4vlm_gym.envs.webshop.site import create_app

    client = create_app(base._server_page, base._server_image).test_client()
    base.step(base.oracle_action())
    html = client.get(base.route.path()).get_data(as_text=True)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'id="act-0" data-action="click[back to search]"' in html  # element ids follow obs["actions"]
    for path in ("/nowhere", "/item/NOPE?q=x&page=1", "/done/" + base.goal.asin, "/results?q=x&page=abc"):
        assert client.get(path).status_code == 404, path
    image = client.get(f"/image/{base.goal.asin}.png?size=64")
    assert image.status_code == 200 and image.data.startswith(b"\x89PNG")
    assert client.get(f"/image/{base.goal.asin}.png?size=99999").status_code == 400
    env.close()


def test_held_out_appearance_shows_the_same_shop_otherwise() -> None:
    from rl4vlm_gym.envs.webshop.site import create_app

    envs = [gym.make(ENV, image_size=(128, 128), appearance=look) for look in ("default", "held-out")]
    (a, _), (b, _) = (env.reset(seed=3) for env in envs)
    assert a["image"].min() == 255 and (b["image"] == (234, 223, 200)).all()  # the blank page, in kraft
    for _ in range(4):
        action = envs[0].unwrapped.oracle_action()
        a, b = envs[0].step(action)[0], envs[1].step(action)[0]
        assert a["text"] == b["text"] and a["actions"] == b["actions"] and not np.array_equal(a["image"], b["image"])
    base = envs[1].unwrapped
    route = base.route.path()
    held_out = create_app(base._server_page, base._server_image, "held-out").test_client()
    html = held_out.get(route).get_data(as_text=True)
    default = create_app(base._server_page, base._server_image).test_client().get(route).get_data(as_text=True)
    assert '<link rel="stylesheet" href="/static/held-out.css">' in html and "held-out" not in default
    assert held_out.get("/static/held-out.css").status_code == 200
    with pytest.raises(ValueError, match="stylesheet"):
        create_app(base._server_page, base._server_image, "neon")


@pytest.mark.slow  # every level's shop (5 s where test_oracle_solves_200_seeds_per_level_in_optimal_steps did not build them)
def test_the_browser_ids_oracle_check_plays_webshop_v1s_episodes_and_holds_the_two_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit's oracle check of WebShop-Browser-v2 leaves WebShop-v1's episodes to WebShop-v1's check (the
    two differ only in VIEW_ARGUMENTS) and plays the first of each level under both: a view argument that
    changed the state would part them."""
    from rl4vlm_gym.envs.webshop.webshop import WebShop
    from rl4vlm_gym.testing.oracle import _view_twin

    assert _view_twin("rl4vlm/WebShop-Browser-v2") == ("rl4vlm/WebShop-v1", ("renderer", "text_format"))
    assert _view_twin("rl4vlm/WebShop-v1") is None and _view_twin("rl4vlm/WebShop-Amazon-v1") is None
    assert "are rl4vlm/WebShop-v1's oracle check's" in check_oracle("rl4vlm/WebShop-Browser-v2")
    key = WebShop._state_key
    monkeypatch.setattr(WebShop, "_state_key", lambda self: key(self) + self.text_format)
    with pytest.raises(AssertionError, match="WebShop-Browser-v2 and its view twin rl4vlm/WebShop-v1 part"):
        check_oracle("rl4vlm/WebShop-Browser-v2")
