"""RayVectorEnv on a Ray cluster on this machine: the same observations, rewards and infos as SyncVectorEnv."""

from __future__ import annotations

import os
import pickle
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

ray = pytest.importorskip("ray")

import rl4vlm_gym  # noqa: E402, F401 - registers the envs
from rl4vlm_gym.backends.ray_vector import ActorDiedError, RayVectorEnv  # noqa: E402

ENV = "rl4vlm/NumberLine-v0"


# The Ray tests run on the test process's cluster (conftest.py; shared with test_ray_eval.py): a
# head and a worker node on this machine, so RayVectorEnv's actors answer on their sockets.
on_ray = pytest.mark.usefixtures("ray_cluster")


def _fns(n: int) -> list:
    return [lambda: gym.make(ENV)] * n


@pytest.fixture(scope="module")
def four_envs(ray_cluster: Any) -> Iterator[Callable[..., RayVectorEnv]]:
    """``four_envs(direct, autoreset_mode="NextStep", max_actor_restarts=0)``: ``RayVectorEnv(_fns(4),
    num_actors=2)`` (actors of no CPU) made once per configuration for the tests that use it: each
    actor is a new Ray worker process (0.6-0.9 s of CPU), and two or three tests use each. Every test
    starts with a seeded reset, so what an earlier one left (an attribute, an episode under way) does
    not reach its results; one that kills an actor closes the env, and the next test gets a new one."""
    made: dict[tuple, RayVectorEnv] = {}

    def get(direct: bool, autoreset_mode: str = "NextStep", max_actor_restarts: int = 0) -> RayVectorEnv:
        key = (direct, autoreset_mode, max_actor_restarts)
        if key not in made or made[key].closed:
            made[key] = RayVectorEnv(_fns(4), num_actors=2, autoreset_mode=autoreset_mode, actor_options={"num_cpus": 0},
                                     direct=direct, max_actor_restarts=max_actor_restarts)  # fmt: skip
        return made[key]

    yield get
    for envs in made.values():
        envs.close()  # a closed one: nothing to do


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple | list):
        return isinstance(b, tuple | list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) and a.dtype == object:
        return isinstance(b, np.ndarray) and b.dtype == object and _same(list(a), list(b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def _actions(obs: dict, rng: np.random.Generator) -> tuple[str, ...]:
    # legal moves mostly, sometimes text the env must refuse
    return tuple("jump" if rng.random() < 0.1 else legal[rng.integers(len(legal))] for legal in obs["actions"])


@pytest.mark.parametrize(
    ("num_envs", "num_actors", "mode", "direct"),
    [(4, 2, "NextStep", True), (4, 2, "NextStep", False), (3, 2, "SameStep", True), (2, 1, "NextStep", False)],
)
@on_ray
def test_same_results_as_sync_vector_env(num_envs: int, num_actors: int, mode: str, direct: bool, four_envs) -> None:
    local = gym.vector.SyncVectorEnv(_fns(num_envs), autoreset_mode=mode)
    shared = (num_envs, num_actors, mode) == (4, 2, "NextStep")
    remote = four_envs(direct) if shared else RayVectorEnv(
        _fns(num_envs), num_actors=num_actors, autoreset_mode=mode, actor_options={"num_cpus": 0}, direct=direct
    )  # fmt: skip
    assert [c is not None for c in remote._channels] == [direct] * num_actors, "actors on this machine answer on sockets"
    assert remote.observation_space == local.observation_space and remote.action_space == local.action_space
    assert remote.metadata["autoreset_mode"] == local.metadata["autoreset_mode"]
    rng = np.random.default_rng(0)
    ends = 0
    for seed in (3, 11):
        expected, remote_out = local.reset(seed=seed), remote.reset(seed=seed)
        assert _same(expected, remote_out)
        for _ in range(40):
            actions = _actions(expected[0], rng)
            expected, remote_out = local.step(actions), remote.step(actions)
            assert _same(expected, remote_out), f"after {actions}"
            ends += int(expected[2].sum() + expected[3].sum())
    assert ends >= 2, "episodes ended, so autoreset was exercised"
    assert _same(local.call("oracle_action"), remote.call("oracle_action"))
    local.close()
    if not shared:
        remote.close()


@on_ray
def test_disabled_autoreset_with_a_reset_mask_and_attributes(four_envs) -> None:
    local = gym.vector.SyncVectorEnv(_fns(4), autoreset_mode="Disabled")
    # the configuration of test_a_dead_actor_is_restarted_and_its_episodes_end_truncated (no actor dies here)
    remote = four_envs(True, "Disabled", max_actor_restarts=1)
    assert _same(local.reset(seed=5), remote.reset(seed=5))
    mask = np.array([False, True, False, False])  # part of actor 0's envs, none of actor 1's
    assert _same(
        local.reset(seed=[None, 9, None, None], options={"reset_mask": mask}),
        remote.reset(seed=[None, 9, None, None], options={"reset_mask": mask}),
    )
    with pytest.raises(ValueError, match="reset_mask"):
        remote.reset(options={"reset_mask": np.zeros(4, dtype=np.bool_)})
    with pytest.raises(ValueError, match="num_envs=4"):
        remote.reset(seed=[1, 2])
    assert remote.get_attr("render_mode") == local.get_attr("render_mode")
    remote.set_attr("marker", [1, 2, 3, 4])
    assert remote.get_attr("marker") == (1, 2, 3, 4)
    local.close()


@on_ray
@pytest.mark.parametrize("direct", [True, False])
def test_errors_and_values_travel_as_ray_carries_them(direct: bool, four_envs) -> None:
    """An env's error is raised by the vector env's call and lambdas travel (cloudpickle), on the
    socket as with Ray's remote calls; after an error every actor's next reply is its own."""
    local = gym.vector.SyncVectorEnv(_fns(4))
    remote = four_envs(direct)
    assert _same(local.reset(seed=1), remote.reset(seed=1))
    with pytest.raises(AttributeError, match="no_such_attribute") as raised:
        remote.call("no_such_attribute")
    if direct:
        assert "raised in a RayVectorEnv actor" in "".join(raised.value.__notes__)
    remote.set_attr("marker", [lambda: 1, lambda: 2, lambda: 3, lambda: 4])
    assert remote.get_attr("marker") == (1, 2, 3, 4)
    if direct:
        remote.set_attr("marker", lambda: threading.Lock())
        with pytest.raises(TypeError, match="reply to 'call' cannot be pickled"):
            remote.get_attr("marker")
    assert _same(local.reset(seed=4), remote.reset(seed=4))
    actions = ("+",) * 4
    assert _same(local.step(actions), remote.step(actions))
    local.close()


def test_values_of_the_senders_main_module_travel_by_value() -> None:
    """The socket's pickles load on the other side as Ray's would: what lives in the sender's
    ``__main__`` (a driver script's functions) goes by value; anything else by the C pickler."""
    from rl4vlm_gym.backends.ray_vector import _dumps

    main = sys.modules["__main__"]

    def scripted() -> int:
        return 7

    class Scripted:
        value = 8

    scripted.__module__, scripted.__qualname__ = "__main__", "scripted_for_this_test"
    Scripted.__module__, Scripted.__qualname__ = "__main__", "ScriptedForThisTest"
    main.scripted_for_this_test, main.ScriptedForThisTest = scripted, Scripted
    try:
        assert b"__main__" in pickle.dumps(scripted) and b"__main__" in pickle.dumps(Scripted()), "by reference"
        data = _dumps({"step": [scripted, Scripted()]})
    finally:
        del main.scripted_for_this_test, main.ScriptedForThisTest
    function, instance = pickle.loads(data)["step"]  # where __main__ has neither
    assert function() == 7 and instance.value == 8
    step = ("step", (["go north", "+"],))
    assert _dumps(step) == pickle.dumps(step, protocol=pickle.HIGHEST_PROTOCOL)


def test_a_black_frame_travels_as_its_shape() -> None:
    """A text-mode observation's all-zero image is sent as its shape and dtype (a batch of them was
    mostly zeros); any other array in full, and every one arrives equal."""
    from rl4vlm_gym.backends.ray_vector import _dumps

    black = np.zeros((300, 300, 3), np.uint8)
    assert len(_dumps(black)) < 300 and len(_dumps(np.zeros(4096, np.uint8))) < 300  # 4095: in full, below
    almost = black.copy()
    almost[-1, -1, -1] = 1
    floats = np.zeros((64, 64), np.float32)
    floats[0, 0] = -0.0  # equal to 0.0, not the same bytes: floats go in full
    for array in (black, almost, floats, np.asfortranarray(np.zeros((64, 64), np.int16)), np.zeros(4095, np.uint8)):
        back = pickle.loads(_dumps({"image": array}))["image"]
        assert back.dtype == array.dtype and back.shape == array.shape and back.tobytes() == array.tobytes()
        assert back.flags.writeable
    assert len(_dumps(almost)) > almost.nbytes and len(_dumps(floats)) > floats.nbytes


def test_an_actor_answers_on_a_socket_only_on_the_drivers_machine_and_with_the_key() -> None:
    """The socket is opened for a driver on the same kernel and network namespace only, and refuses
    a client without the key (no Ray here: the actor's class alone)."""
    from multiprocessing.connection import AuthenticationError, Client

    from rl4vlm_gym.backends.ray_vector import _host, _Runner

    host = _host()
    assert host is not None and _Runner([], "NextStep").open_channel((host[0], host[1] + 1), b"k") is None
    assert _Runner([], "NextStep").open_channel(("another boot", host[1]), b"k") is None
    runner = _Runner([], "NextStep")
    address = runner.open_channel(host, b"the key")
    assert address.startswith(b"\0rl4vlm-ray-")  # abstract: no file
    refused: list[BaseException] = []

    def serve() -> None:
        try:
            runner.serve()
        except AuthenticationError as err:
            refused.append(err)

    server = threading.Thread(target=serve, daemon=True)  # a broken key check must fail, not hang the run
    server.start()
    with pytest.raises(AuthenticationError):
        Client(address, family="AF_UNIX", authkey=b"another key")
    server.join(10)
    assert refused and runner.listener is None, "the socket was closed after the refused client"


def _kill(actor: Any) -> None:
    """``ray.kill`` and wait for the actor's death as Ray reports it (a call raises ``ActorDiedError``)
    and for its process to end: the kill is asynchronous, and Ray calls an actor dead before its
    process has exited, which may still answer on its socket meanwhile."""
    import psutil

    pid = ray._private.state.actors(actor._actor_id.hex())["Pid"]  # the state API needs the dashboard
    ray.kill(actor)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            ray.get(actor.__ray_ready__.remote(), timeout=deadline - time.monotonic())
        except ray.exceptions.ActorDiedError:
            break
        time.sleep(0.05)
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.05)
    raise AssertionError("the killed actor was still alive 30 s later")


@on_ray
@pytest.mark.parametrize("direct", [True, False])
def test_a_killed_actor_raises_a_clear_error(direct: bool, four_envs) -> None:
    remote = four_envs(direct)
    obs, _ = remote.reset(seed=0)
    _kill(remote._actors[1])
    with pytest.raises(ActorDiedError, match=r"actor 1 \(envs 2\.\.3\).*not restarted"):
        remote.step(_actions(obs, np.random.default_rng(0)))
    remote.close()  # closing with a dead actor works


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="num_actors"):
        RayVectorEnv(_fns(2), num_actors=3)
    with pytest.raises(ValueError, match="at least one"):
        RayVectorEnv([])


class _RenderThreads(gym.Wrapper):
    """A MiniWorld env that tells its process's LP_NUM_THREADS and how many llvmpipe threads run."""

    def render_threads(self) -> tuple[str | None, int]:
        names = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/comm") as comm:
                names.append(comm.read())
        return os.environ.get("LP_NUM_THREADS"), sum(name.startswith("llvmpipe") for name in names)


@pytest.mark.extra("nav")
@pytest.mark.parametrize(
    "options, value, threads",
    [
        ({}, "0", 0),  # one CPU: Mesa draws on the actor's own thread
        # Each case starts a Ray worker that imports MiniWorld (2-6 s): the inner loop keeps the first.
        pytest.param({"num_cpus": 2}, "2", 2, marks=pytest.mark.slow),
        pytest.param(
            {"num_cpus": 1, "runtime_env": {"env_vars": {"LP_NUM_THREADS": "1"}}}, "1", 1, marks=pytest.mark.slow
        ),  # the user's value stays
    ],
)
@on_ray
def test_an_actor_renders_with_the_cpus_it_asked_for(options: dict, value: str, threads: int) -> None:
    """Like Ray's OMP_NUM_THREADS: llvmpipe's threads follow the actor's CPUs (ray_init.py)."""
    from functools import partial

    # GL in the actor's own process, whose threads this counts (a render process, the default, inherits
    # LP_NUM_THREADS from the actor's environment as every child does)
    make = partial(gym.make, "rl4vlm/MiniWorld-OneRoom-v1", image_size=(32, 32), render_process=False)
    # Only one 2-CPU node: an actor another test left alive there (an owner killed by a test, reaped late)
    # would keep this one waiting for ever in RayVectorEnv's start. Tests run one at a time in a process,
    # so every CPU must come free; a failure that says so beats a hung run.
    deadline = time.monotonic() + 60
    while ray.available_resources().get("CPU", 0) < ray.cluster_resources().get("CPU", 0):
        assert time.monotonic() < deadline, f"CPUs still held by actors left by an earlier test: {ray.available_resources()}"
        time.sleep(0.1)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray's workers cannot import the tests
    try:
        envs = RayVectorEnv([lambda: _RenderThreads(make())], actor_options=options)
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    try:
        envs.reset(seed=0)
        assert envs.call("render_threads") == ((value, threads),)
    finally:
        envs.close()  # a failure must not leave the actor holding CPUs the next test asks for


@on_ray
def test_an_eval_actor_renders_with_the_cpus_it_asked_for() -> None:
    """``eval --backend ray``'s actors size llvmpipe's threads as RayVectorEnv's do."""
    from rl4vlm_gym.harness.ray_runner import _EvalActor
    from rl4vlm_gym.harness.runner import AgentSpec
    from rl4vlm_gym.harness.suite import Suite
    from rl4vlm_gym.prompts import PromptConfig

    class Probe(_EvalActor):
        def render_threads(self) -> str | None:
            return os.environ.get("LP_NUM_THREADS")

    suite = Suite.from_dict({"name": "s", "axis": "smoke", "tasks": [{"name": "nl", "env": ENV, "seeds": [0]}]})
    actor = ray.remote(Probe).options(num_cpus=1, max_restarts=0).remote(suite, AgentSpec("random", {}), PromptConfig())
    try:
        assert ray.get(actor.render_threads.remote(), timeout=120) == "0"
    finally:
        ray.kill(actor)


@on_ray
def test_eval_on_ray_gives_the_local_records(tmp_path) -> None:
    """The quick check of ``eval --backend ray`` (tests/backends/test_ray_eval.py has the cluster and faults)."""
    from rl4vlm_gym.harness.runner import AgentSpec, load_episodes, run_suite
    from rl4vlm_gym.harness.suite import Suite

    suite = Suite.from_dict(
        {
            "name": "s",
            "axis": "smoke",
            "max_steps": 5,
            "tasks": [{"name": "nl", "env": ENV, "obs_mode": "text", "seeds": [1, 2, 3]}],
        }
    )
    untimed = [
        {**r, "steps": [{k: v for k, v in s.items() if k not in ("agent_ms", "env_ms")} for s in r["steps"]]}
        for r in run_suite(suite, AgentSpec("random", {"seed": 4}), tmp_path / "local")
    ]
    records = run_suite(suite, AgentSpec("random", {"seed": 4}), tmp_path / "ray", workers=2, backend="ray",
                        actor_options={"num_cpus": 0.5})  # fmt: skip
    assert [
        {**r, "steps": [{k: v for k, v in s.items() if k not in ("agent_ms", "env_ms")} for s in r["steps"]]} for r in records
    ] == untimed
    assert len(load_episodes(tmp_path / "ray" / "episodes.jsonl")) == 3


@on_ray
@pytest.mark.slow  # a new actor starts (a new Ray worker process: 10-20 s on a loaded machine)
def test_a_dead_actor_is_restarted_and_its_episodes_end_truncated(four_envs) -> None:
    """max_actor_restarts: the trainer's way (autoreset disabled, masked resets) goes on after a kill."""
    local = gym.vector.SyncVectorEnv(_fns(4), autoreset_mode="Disabled")
    remote = four_envs(True, "Disabled", max_actor_restarts=1)
    expected, got = local.reset(seed=3), remote.reset(seed=3)
    assert _same(expected, got)
    _kill(remote._actors[1])
    actions = ("+",) * 4
    expected, (obs, rewards, terminated, truncated, infos) = local.step(actions), remote.step(actions)
    assert list(truncated[2:]) == [True, True] and list(rewards[2:]) == [0.0, 0.0] and not terminated[2:].any()
    assert list(infos["actor_restarted"]) == [False, False, True, True] and infos["_actor_restarted"][2:].all()
    for k in range(2):  # the other actor's envs went on as if nothing happened
        assert _same(expected[0]["text"][k], obs["text"][k]) and expected[1][k] == rewards[k]
    with pytest.raises(RuntimeError, match="must be reset"):  # a truncated env waits for its reset, as any
        remote.step(actions)
    mask = np.array([False, False, True, True])
    expected = local.reset(seed=[None, None, 8, 9], options={"reset_mask": mask})
    assert _same(expected[0]["text"][2:], remote.reset(seed=[None, None, 8, 9], options={"reset_mask": mask})[0]["text"][2:])
    assert remote.restarts_left == 0
    _kill(remote._actors[0])
    with pytest.raises(ActorDiedError, match=r"actor 0 \(envs 0\.\.1\).*not restarted"):
        remote.step(actions)
    local.close(), remote.close()


@on_ray
@pytest.mark.extra("train")
@pytest.mark.slow  # a tiny model and its rollouts (30-50 s on a loaded 2-core machine)
def test_trainer_rollouts_on_ray_actors_equal_local_ones(tmp_path, one_torch_thread) -> None:
    """``rollout.vectorization: ray``: the model stays here, the envs are RayVectorEnv's; the same
    rollouts as local envs (same seeds)."""
    from rl4vlm_gym.baselines.common.rollout import GenerationSettings, RolloutCollector
    from rl4vlm_gym.baselines.config import default_config_path, load_config
    from rl4vlm_gym.baselines.trainer import Trainer

    overrides = {
        "updates": 1, "env.max_steps": 2, "generation.max_new_tokens": 6, "rollout.num_envs": 2, "rollout.steps": 4,
        "optim.minibatch_size": 2, "model.value_head": [8], "model.lora": None, "tensorboard": False,
        "env.kwargs": {"level": 0, "obs_mode": "text"}, "rollout.vectorization": "ray",
        "rollout.ray": {"num_actors": 2, "actor_options": {"num_cpus": 0}},
    }  # fmt: skip
    config = load_config(default_config_path("vl-dac", None, "cpu"), overrides)
    trainer = Trainer(config, tmp_path)
    assert isinstance(trainer.collector.envs, RayVectorEnv) and len(trainer.collector.envs._actors) == 2
    local = RolloutCollector(
        trainer._make_env, 2, trainer.policy, trainer.prompt, GenerationSettings(**config.generation.model_dump()),
        env_id=trainer.env_id, attach_images=False, seed=config.seed, values=True,
    )  # fmt: skip
    expected = local.collect_steps(4)
    got = trainer.collector.collect_steps(4)
    local.close()
    assert [(s.env, s.text, s.reward, s.done) for s in got.steps] == [(s.env, s.text, s.reward, s.done) for s in expected.steps]
    assert len(got.steps) == 4 and any(s.done for s in got.steps)
    trainer.collector.close()


class _Holder:
    """A Ray actor holding one browser WebShop env after a reset."""

    def __init__(self) -> None:
        import gymnasium as gym

        import rl4vlm_gym as registers  # noqa: F401 - registers the ids in the actor

        self.env = gym.make("rl4vlm/WebShop-Browser-v2", image_size=(128, 128))
        self.env.reset(seed=0)

    def groups(self) -> tuple[int, list[int]]:
        """This process's pid and the process groups of its descendants (chromedriver's holds Chromium)."""
        import psutil

        me = psutil.Process()
        return me.pid, sorted({os.getpgid(p.pid) for p in me.children(recursive=True)} - {os.getpgid(me.pid)})


def _members(groups: list[int]) -> list[int]:
    import psutil

    found = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) in groups and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc.pid)
        except (psutil.Error, ProcessLookupError):
            pass
    return found


@on_ray
@pytest.mark.slow  # a browser
@pytest.mark.extra("webshop")
@pytest.mark.skipif(shutil.which("chromedriver") is None and not os.environ.get("CHROMEDRIVER"), reason="no chromedriver")
def test_an_actor_killed_by_ray_leaves_no_chromium() -> None:
    """Nothing outlives its owner under Ray: an actor holding a browser WebShop env, killed by Ray
    (as when a job ends or a node is drained), leaves no Chromium (rl4vlm_gym/processes.py)."""
    import psutil

    # the actor's class travels by value: Ray's workers cannot import the test modules
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        holder = ray.remote(_Holder).options(num_cpus=0, max_restarts=0).remote()
        pid, groups = ray.get(holder.groups.remote(), timeout=100)  # a browser starting on a loaded machine
        browser = _members(groups)
        assert groups and len(browser) >= 3, f"the actor runs no browser: {browser}"
        assert any("chrom" in psutil.Process(p).name().lower() for p in browser)
        ray.kill(holder)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (psutil.pid_exists(pid) or _members(groups)):
            time.sleep(0.1)
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, "the actor lives"
        assert _members(groups) == [], "Chromium outlived its Ray actor"
    finally:
        ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
