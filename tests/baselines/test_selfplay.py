"""Self-play: the snapshot pool, the seat swap, the frozen opponent, a run end to end and its resume."""

from __future__ import annotations

import csv

import numpy as np
import pytest

# peft (and the transformers it imports) is loaded by the trainer when a test builds one, not at collection:
# every test worker imports this module to collect it, and importing peft takes seconds.
pytestmark = pytest.mark.extra("train", "games")  # Kuhn poker needs the games extra (open-spiel)
torch = pytest.importorskip("torch", reason="the baselines' trainer needs the train extra (torch, transformers, peft)")

from rl4vlm_gym.baselines.config import CONFIGS_DIR, load_config  # noqa: E402
from rl4vlm_gym.baselines.selfplay import SelfPlayCollector, SelfPlayEnv, SnapshotPool, make_game  # noqa: E402
from rl4vlm_gym.prompts import PromptBuilder, PromptConfig  # noqa: E402

KUHN = "rl4vlm/KuhnPoker-vs-Random-v0"


def weights(x):
    return {"model.w": torch.full((2,), float(x))}


def test_the_pool_keeps_the_newest_snapshots_and_pfsp_draws_those_the_learner_loses_to():
    pool = SnapshotPool(size=3, sampling="pfsp", pfsp_power=2.0)
    with pytest.raises(RuntimeError, match="empty"):
        pool.sample(np.random.default_rng(0))
    for update in (0, 2, 4, 6):
        pool.add(update, weights(update))
    assert pool.updates() == [2, 4, 6]  # the oldest left
    assert pool.probabilities() == pytest.approx([1 / 3] * 3)  # no games yet: p = 1/2 for each
    for _ in range(8):
        pool.record(2, 1.0)  # the learner beats snapshot 2 every time ...
    for _ in range(2):
        pool.record(6, 0.0)  # ... and loses to snapshot 6
    pool.record(0, 1.0)  # a snapshot no longer in the pool: ignored
    p = {2: 9 / 10, 4: 1 / 2, 6: 1 / 4}  # (score + 1) / (games + 2)
    w = {u: (1 - q) ** 2 for u, q in p.items()}
    expected = [w[u] / sum(w.values()) for u in (2, 4, 6)]
    assert pool.probabilities() == pytest.approx(expected)
    draws = [pool.sample(np.random.default_rng(s)) for s in range(2000)]
    assert [draws.count(u) / 2000 for u in (2, 4, 6)] == pytest.approx(expected, abs=0.03)
    assert pool.sample(np.random.default_rng(7)) == pool.sample(np.random.default_rng(7))  # the env's RNG decides
    uniform = SnapshotPool(size=3, sampling="uniform")
    uniform.load_state_dict(pool.state_dict())
    assert (
        uniform.updates() == [2, 4, 6]
        and uniform.get(2).games == 8
        and torch.equal(uniform.get(6).weights["model.w"], weights(6)["model.w"])
    )
    assert uniform.probabilities() == pytest.approx([1 / 3] * 3)
    with pytest.raises(ValueError, match="sampling"):
        SnapshotPool(sampling="elo")


class ScriptedManager:
    """Stands in for the trainer's SelfPlay in the env's mechanics test: the pool is real, the
    opponent's replies are scripted (invalid text first, then a fixed move), every call recorded."""

    def __init__(self, game="tictactoe"):
        self.game = game
        self.pool = SnapshotPool(size=2, sampling="uniform")
        self.pool.add(3, weights(3))
        self.pool.add(5, weights(5))
        self.calls, self.finished_games = [], []

    def make_game(self):
        return make_game(self.game, obs_mode="text")

    def builder(self):
        return PromptBuilder(
            PromptConfig(output_format="plain", images=0), env_id="rl4vlm/TicTacToe-vs-Random-v0", attach_images=False
        )

    def reply(self, snapshot, messages, seed):
        self.calls.append(snapshot.update)
        if len(self.calls) % 3 == 0:
            return "zz"  # invalid: the opponent keeps the turn and writes again
        return self.env.aec.legal_moves(self.env.rival)[-1]

    def finished(self, seed, seat, opponent, score, ret):
        self.finished_games.append((seed, seat, opponent, score, ret))


def first_free(obs):
    return obs["actions"][0]


def test_the_seed_picks_the_seat_and_the_opponent_plays_the_other_seat_from_the_pool():
    manager = ScriptedManager()
    env = manager.env = SelfPlayEnv(manager)
    seats = []
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        assert info["seat"] == seed % 2 and info["opponent"] in (3, 5) and info["seed"] == seed
        seats.append(info["seat"])
        # the learner moves first at seat 0 (an empty board), second at seat 1 (the opponent opened)
        board_marks = (
            sum(obs["text"].split("The board")[1].count(m) for m in ("X", "O")) - 2
        )  # the legend names X and O once each
        assert board_marks == info["seat"], f"seat {info['seat']}: {board_marks} marks on the learner's first board"
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(first_free(obs))
            done = terminated or truncated
        assert manager.finished_games[-1][:3] == (seed, seed % 2, info["opponent"])
        assert info["success"] == (manager.finished_games[-1][3] == 1.0) and reward == pytest.approx(
            {1.0: 1, 0.5: 0, 0.0: -1}[manager.finished_games[-1][3]]
        )
    assert seats == [0, 1] * 6
    assert set(manager.calls) == {3, 5}  # both snapshots played
    with pytest.raises(RuntimeError, match="over"):
        env.step("a1")


def test_the_self_play_collector_alternates_seats_and_resumes_the_alternation():
    collector = SelfPlayCollector.__new__(SelfPlayCollector)  # only the seed drawing is exercised
    collector.rng = np.random.default_rng(0)
    collector._drawn = 0
    seeds = [collector._draw_seed() for _ in range(6)]
    assert [s % 2 for s in seeds] == [1, 0, 1, 0, 1, 0] and all(0 <= s < 2**30 for s in seeds)
    state = {"rng": collector.rng.bit_generator.state, "drawn": collector._drawn}
    collector._drawn, collector.rng = 0, np.random.default_rng(5)
    collector.rng.bit_generator.state = state["rng"]
    collector._drawn = state["drawn"]
    assert collector._draw_seed() % 2 == 1


def test_the_opponent_moves_with_the_snapshot_weights_and_the_learner_keeps_its_own(tmp_path):
    from rl4vlm_gym.baselines.common.policy import Policy, PolicySettings
    from rl4vlm_gym.baselines.selfplay import SelfPlay, snapshot_weights, weights_of

    config = load_config(CONFIGS_DIR / "vl_dac" / "kuhn-selfplay-cpu.yaml", {"opponent.snapshot_every": 2})
    policy = Policy(PolicySettings(value_head=(8,)))
    selfplay = SelfPlay(config.opponent, policy, PromptConfig(**config.prompt), env_id=KUHN, obs_mode="text",
                        max_new_tokens=4, top_p=1.0, out=tmp_path)  # fmt: skip
    for update in range(5):
        if update:
            with torch.no_grad():
                for p in policy.model.parameters():
                    p.add_(0.01 * torch.randn_like(p))
        selfplay.after_update(update)
    assert selfplay.pool.updates() == [0, 2, 4]  # every snapshot_every updates, from the warm-up on
    learner = snapshot_weights(policy)
    assert not any(k.startswith("value_head") for k in learner)
    old = selfplay.pool.get(0).weights
    with weights_of(policy, old):
        assert all(torch.equal(p, old[f"model.{n}"]) for n, p in policy.model.named_parameters())
    assert all(torch.equal(p, learner[f"model.{n}"]) for n, p in policy.model.named_parameters())  # put back
    env = SelfPlayEnv(selfplay)
    env.reset(seed=0)  # seat 0: the learner opens (this random model's replies are rarely legal moves)
    messages = env.builder.messages(env.aec.observe(env.rival))
    reply = selfplay.reply(selfplay.pool.get(0), messages, seed=3)
    assert reply == selfplay.reply(selfplay.pool.get(0), messages, seed=3)  # the seed fixes the opponent's sampling
    with weights_of(policy, old):
        inputs = policy.encode([messages])
        expected = policy.decode(
            policy.generate(policy.prompts([messages], inputs), inputs=inputs, max_new_tokens=4, temperature=1.0, seed=3)[0]
        )
    assert reply == expected


SMALL = {
    "updates": 2, "warmup.steps": 2, "warmup.batch_size": 4, "eval.episodes": 2, "rollout.num_envs": 2, "rollout.steps": 4,
    "optim.minibatch_size": 2, "model.value_head": [8], "tensorboard": False, "opponent.snapshot_every": 1, "opponent.pool_size": 2,
}  # fmt: skip


class LegalMoves:
    """A generator (the policy's seam for inference engines) that writes "pass" or "bet", drawn from
    the call's seed: the random tiny model needs minutes of warm-up to write legal moves, and this
    test is about the run's mechanics (snapshots, pool, seats, log, resume); the real generation
    under snapshot weights is tested above. Scoring stays the model's."""

    def __call__(self, policy, prompts, *, inputs, max_new_tokens, temperature, top_p, seed):
        tokenizer, rng = policy.processor.tokenizer, np.random.default_rng(seed)
        return [
            tokenizer.encode(str(rng.choice(["pass", "bet"])), add_special_tokens=False) + [tokenizer.eos_token_id]
            for _ in prompts
        ]


def trainer(path, overrides, out):
    from rl4vlm_gym.baselines.trainer import Trainer

    made = Trainer(load_config(path, overrides), out)
    made.policy.generator = LegalMoves()
    return made


def read(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.slow
def test_a_self_play_run_snapshots_plays_its_pool_and_resumes_after_a_kill(tmp_path):
    path = CONFIGS_DIR / "vl_dac" / "kuhn-selfplay-cpu.yaml"
    first = trainer(path, {**SMALL, "updates": 1}, tmp_path)
    first.run()
    assert first.selfplay.pool.updates() == [0, 1]
    log = read(tmp_path / "selfplay_log.csv")
    assert (
        log and {r["update"] for r in log} == {"0"} and {r["opponent"] for r in log} == {"0"}
    )  # only the warmed-up policy existed
    assert {r["seat"] for r in log} <= {"0", "1"} and all(int(r["seed"]) % 2 == int(r["seat"]) for r in log)
    assert all(r["outcome"] in ("win", "loss") and abs(float(r["return"])) in (1.0, 2.0) for r in log)  # Kuhn has no draw
    pool = {u: first.selfplay.pool.get(u).weights for u in (0, 1)}
    # Killed after update 2's episodes were logged, before its checkpoint: the resumed run drops them
    with (tmp_path / "selfplay_log.csv").open("a") as f:
        f.write("1,8,0,1,win,1\n")
    second = trainer(path, {**SMALL, "updates": 3}, tmp_path)
    assert second._resume() and second.update == 1 and second.selfplay.update == 1
    assert second.selfplay.pool.updates() == [0, 1]
    assert all(torch.equal(pool[u][k], v) for u in (0, 1) for k, v in second.selfplay.pool.get(u).weights.items())
    assert [r["update"] for r in read(tmp_path / "selfplay_log.csv")] == ["0"] * len(log)
    second.run()
    assert second.selfplay.pool.updates() == [2, 3]  # pool_size 2: the newest two
    rows = read(tmp_path / "selfplay_log.csv")
    assert {r["update"] for r in rows} == {"0", "1", "2"}
    # an episode keeps the opponent it started with, even one that has left the pool since
    assert {r["opponent"] for r in rows if r["update"] == "2"} <= {"0", "1", "2"}
    assert {r["seat"] for r in rows} == {"0", "1"}
    assert [r["update"] for r in read(tmp_path / "eval_log.csv")] == ["0", "1", "3"]  # the first run's final, then the second's
    assert (tmp_path / "checkpoints" / "final" / "model" / "config.json").exists()


def test_self_play_config_errors_name_the_problem(tmp_path):
    from rl4vlm_gym.baselines.config import ConfigError
    from rl4vlm_gym.baselines.trainer import Trainer

    path = CONFIGS_DIR / "vl_dac" / "kuhn-selfplay-cpu.yaml"
    with pytest.raises(ConfigError, match="opponent.sampling"):
        load_config(path, {"opponent.sampling": "elo"})
    with pytest.raises(ValueError, match="vectorization"):
        Trainer(load_config(path, {**SMALL, "rollout.vectorization": "async"}), tmp_path / "a")
    with pytest.raises(ValueError, match="unknown"):
        Trainer(load_config(path, {**SMALL, "opponent.game": "chess"}), tmp_path / "b")
