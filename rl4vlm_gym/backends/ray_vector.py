"""A Gymnasium vector env whose sub-envs live in Ray actors, several per actor, stepped in batches.

Each actor holds a contiguous slice of the envs and is called once per ``reset``/``step`` for its
whole slice, with a remote call. A result over Ray's default 100 KB (one 224x224 image) goes through
Ray's object store, 2 ms a call instead of 0.5 ms; the local Ray that ``RayVectorEnv`` starts when
none runs returns results up to 4 MiB with the reply (:data:`LOCAL_RAY_CONFIG`; give a cluster the
same setting when it starts). ``compiled=True`` calls the actors through Ray Compiled Graphs instead
(shared-memory channels, about 0.2 ms a call; not under Ray Client), but their actors busy-wait for their next call, a
core each even while idle (while a trainer's model generates), and so does the driver for their
results: worth it only with a core to spare for each actor and for the driver. The API and
results are those of ``SyncVectorEnv`` and
``AsyncVectorEnv``: ``reset(seed=...)`` (an int seeds env ``i`` with ``seed + i``), ``step``,
``autoreset_mode`` (next-step, same-step, disabled, and ``options["reset_mask"]``), ``call``,
``get_attr``, ``set_attr``, ``render``, ``close``; observations are batched with Gymnasium's
``batch_space``/``concatenate``, so rl4vlm's ``Unicode`` spaces batch as they do locally.

Faults: by default an actor that dies (killed, out of memory, its node lost) is *not* restarted:
the next call raises :class:`ActorDiedError` naming the actor and its envs. With
``max_actor_restarts=k`` the vector env replaces a dead actor (at most ``k`` times in its life) by a
new one whose envs are made again and reset (unseeded), and repeats the call that failed on it.
Their episodes are lost, and say so: the next ``step`` returns for each of them its new first
observation, reward 0, ``truncated=True`` and ``info["actor_restarted"] = True`` (the action is not
used), so a trainer ends those episodes as cut by a time limit and goes on; a ``reset`` (its seeds
are replayed) or ``call`` is simply repeated. Nothing of the lost episodes can be replayed from a
vector env (it does not keep their actions); the evaluation harness replays interrupted episodes
from their seeds (:mod:`rl4vlm_gym.harness.ray_runner`).

Example::

    import gymnasium as gym
    from rl4vlm_gym.backends.ray_vector import RayVectorEnv
    # a local Ray is started; for a cluster, ray.init(address=...) first
    envs = RayVectorEnv([lambda: gym.make("rl4vlm/NumberLine-v0")] * 8, num_actors=2)
    obs, infos = envs.reset(seed=0)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
import ray
import ray.util.client
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate
from ray.dag import InputNode

from rl4vlm_gym.backends.ray_init import init_ray

__all__ = ["LOCAL_RAY_CONFIG", "ActorDiedError", "RayVectorEnv"]

logger = logging.getLogger(__name__)

_WEEK = 7 * 24 * 3600.0

# Ray's system config for a local Ray started here: results up to 4 MiB (a batch of 25 224x224
# images) travel with the call's reply rather than through the object store.
LOCAL_RAY_CONFIG = {"max_direct_call_object_size": 4 * 2**20}


class ActorDiedError(RuntimeError):
    """A Ray actor holding some of the envs died; the vector env cannot go on (close it)."""


class _Runner:
    """The envs of one actor, with the per-env autoreset logic of ``SyncVectorEnv``."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], autoreset_mode: AutoresetMode, restarted: bool = False) -> None:
        self.env_fns, self.mode, self.restarted = list(env_fns), autoreset_mode, restarted
        self.envs: list[gym.Env] | None = None

    def run(self, command: tuple[str, tuple]) -> Any:
        """Run ``getattr(self, name)(*args)``: every call comes here, from a compiled graph or a remote call.
        The envs are made by the first call, on the thread that runs them all: a compiled graph runs
        its calls on its own thread, and an OpenGL context (MiniWorld) belongs to the thread that made it."""
        if self.envs is None and command[0] == "close":
            return None
        if self.envs is None:
            self.envs = [fn() for fn in self.env_fns]
            self.autoreset = [False] * len(self.envs)
            # A restarted actor's envs start new episodes at once; each reports its lost episode as
            # truncated at its next step (unless a reset comes first).
            self.lost: list[tuple[Any, dict] | None] = [env.reset() if self.restarted else None for env in self.envs]
        name, args = command
        return getattr(self, name)(*args)

    def describe(self) -> tuple[gym.Space, gym.Space, dict[str, Any], str | None]:
        env = self.envs[0]
        return env.observation_space, env.action_space, dict(env.metadata), env.render_mode

    def reset(self, seeds: Sequence[int | None], options: dict | None, mask: Sequence[bool] | None) -> list:
        out: list[tuple[Any, dict] | None] = []
        for i, env in enumerate(self.envs):
            if mask is not None and not mask[i]:
                out.append(None)
                continue
            self.autoreset[i] = False
            self.lost[i] = None
            out.append(env.reset(seed=seeds[i], options=options))
        return out

    def step(self, actions: Sequence[Any]) -> list:
        out = []
        for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            final = None
            lost = self.lost[i]
            if lost is not None:
                obs, info = lost[0], {**lost[1], "actor_restarted": True}
                self.lost[i] = None
                if self.mode == AutoresetMode.SAME_STEP:
                    final = {"final_obs": obs, "final_info": info}
                self.autoreset[i] = self.mode != AutoresetMode.SAME_STEP
                out.append((obs, 0.0, False, True, info, final))
                continue
            if self.mode == AutoresetMode.NEXT_STEP and self.autoreset[i]:
                obs, info = env.reset()
                reward, terminated, truncated = 0.0, False, False
            else:
                if self.mode == AutoresetMode.DISABLED and self.autoreset[i]:
                    raise RuntimeError(f"env {i} of this actor must be reset (autoreset_mode=disabled)")
                obs, reward, terminated, truncated, info = env.step(action)
                if self.mode == AutoresetMode.SAME_STEP and (terminated or truncated):
                    final = {"final_obs": obs, "final_info": info}
                    obs, info = env.reset()
            self.autoreset[i] = bool(terminated or truncated)
            out.append((obs, float(reward), bool(terminated), bool(truncated), info, final))
        return out

    def call(self, name: str, args: tuple, kwargs: dict) -> list:
        results = []
        for env in self.envs:
            attr = env.get_wrapper_attr(name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        for env, value in zip(self.envs, values, strict=True):
            env.set_wrapper_attr(name, value)

    def close(self) -> None:
        for env in self.envs or ():
            env.close()


class RayVectorEnv(VectorEnv):
    """``num_envs = len(env_fns)`` envs in ``num_actors`` Ray actors (default: one per env, at most 8).

    Arguments:
        env_fns: functions that make the sub-envs, called inside the actors (Ray pickles them).
        num_actors: how many actors share the envs; env ``i`` lives in actor ``i * num_actors // num_envs``.
        autoreset_mode: Gymnasium's ``AutoresetMode`` (or its string), next-step by default.
        actor_options: passed to ``ray.remote(...).options``, e.g. ``{"num_cpus": 1, "memory": 2**30}``
            (default one CPU per actor, as Ray does for tasks).
        copy: return copies of the batched observations, as ``SyncVectorEnv`` does.
        max_actor_restarts: dead actors replaced over this vector env's life (see Faults above);
            0 (default) raises :class:`ActorDiedError` instead.
        compiled: call the actors through Ray Compiled Graphs (shared-memory channels, one graph per
            actor) rather than remote calls: the same results, less overhead per call, but each
            actor and the driver busy-wait on their channels (see above).

    A local Ray is started if none is running (:func:`~rl4vlm_gym.backends.ray_init.init_ray`, with
    :data:`LOCAL_RAY_CONFIG`); connect to a cluster with ``ray.init(address=...)`` first.
    """

    def __init__(
        self,
        env_fns: Sequence[Callable[[], gym.Env]],
        num_actors: int | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        actor_options: dict[str, Any] | None = None,
        copy: bool = True,
        max_actor_restarts: int = 0,
        compiled: bool = False,
    ) -> None:
        self.num_envs = len(env_fns)
        if self.num_envs == 0:
            raise ValueError("RayVectorEnv needs at least one env function")
        num_actors = min(self.num_envs, 8) if num_actors is None else num_actors
        if not 1 <= num_actors <= self.num_envs:
            raise ValueError(f"num_actors must be in 1..num_envs={self.num_envs}, got {num_actors}")
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.copy = copy
        if not ray.is_initialized():
            logger.info("starting a local Ray")
            init_ray(_system_config=LOCAL_RAY_CONFIG)  # lives as long as this process: its handle is never released
        self._cls = ray.remote(_Runner).options(**{"num_cpus": 1, "max_restarts": 0, **(actor_options or {})})
        self._env_fns = list(env_fns)
        self.restarts_left = max_actor_restarts
        bounds = [i * self.num_envs // num_actors for i in range(num_actors + 1)]
        self._slices = [range(bounds[k], bounds[k + 1]) for k in range(num_actors)]
        self._actors = [self._cls.remote([env_fns[i] for i in s], self.autoreset_mode) for s in self._slices]
        self.compiled = compiled and not ray.util.client.ray.is_connected()
        self._dags: list[Any] = [None] * num_actors
        for k in range(num_actors):
            self._compile(k)
        self.single_observation_space, self.single_action_space, metadata, self.render_mode = self._run(
            lambda k: ("describe", ()), actors=[0]
        )[0]
        self.metadata = {**metadata, "autoreset_mode": self.autoreset_mode}
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._observations = create_empty_array(self.single_observation_space, self.num_envs, fn=np.zeros)
        self._env_obs: list[Any] = [None] * self.num_envs
        self._autoreset_envs = np.zeros(self.num_envs, dtype=np.bool_)
        self.closed = False

    def _compile(self, k: int) -> None:
        """A compiled graph for actor ``k``: Ray Compiled Graphs pass a call and its result through
        shared memory (about 0.2 ms a step with a 224x224 image, vs 2 ms for a remote call whose
        result goes through the object store, on this machine). Without them (Ray Client, or a
        compile error), remote calls."""
        self._dags[k] = None
        if not self.compiled:
            return
        try:
            ray.get(self._actors[k].__ray_ready__.remote())  # started (compiling would time out on a slow start)
            with InputNode() as command:
                dag = self._actors[k].run.bind(command)
            self._dags[k] = dag.experimental_compile()
        except Exception as err:  # noqa: BLE001 - any reason not to compile leaves the plain remote calls
            logger.warning("Ray Compiled Graphs unavailable (%s: %s); using remote calls", type(err).__name__, err)
            self.compiled = False

    def _submit(self, k: int, command: tuple[str, tuple]) -> Any:
        """A reference to the result of ``command`` on actor ``k``, or the error that prevented the call
        (a compiled graph whose actor died is torn down by Ray: ``execute`` fails at once)."""
        dag = self._dags[k]
        try:
            return self._actors[k].run.remote(command) if dag is None else dag.execute(command)
        except (ray.exceptions.RayActorError, ray.exceptions.RayChannelError) as err:
            return err

    def _teardown(self, k: int) -> None:
        dag, self._dags[k] = self._dags[k], None
        if dag is not None:
            try:
                dag.teardown()
            except Exception:  # noqa: BLE001 - a graph whose actor died may fail to tear down; it is dropped anyway
                logger.debug("teardown of a compiled graph failed", exc_info=True)

    def _run(self, command: Callable[[int], tuple[str, tuple]], actors: Sequence[int] | None = None) -> list[Any]:
        """``command(k)`` (a method name and its arguments) on each actor ``k`` (all by default), in
        parallel; their results. A dead actor is replaced and the call repeated on the new one while
        restarts are left."""
        ks = range(len(self._actors)) if actors is None else actors
        refs = [self._submit(k, command(k)) for k in ks]
        results = []
        for k, ref in zip(ks, refs, strict=True):
            while True:
                try:
                    if isinstance(ref, Exception):
                        raise ref
                    # a compiled graph's get gives up after 10 s by default: a step may be longer
                    result = ray.get(ref) if self._dags[k] is None else ray.get(ref, timeout=_WEEK)
                    # A compiled graph's arrays are views of its channel, which stays locked while
                    # one lives (the next call hangs): keep copies (about 20 us for 150 KB).
                    results.append(result if self._dags[k] is None else deepcopy(result))
                    break
                except (ray.exceptions.RayActorError, ray.exceptions.RayChannelError) as err:
                    where = f"actor {k} (envs {self._slices[k].start}..{self._slices[k].stop - 1})"
                    self._teardown(k)
                    if self.restarts_left <= 0:
                        raise ActorDiedError(
                            f"the Ray {where} of this RayVectorEnv died ({type(err).__name__}); actors are not "
                            "restarted (max_actor_restarts): close this vector env and make a new one"
                        ) from err
                    self.restarts_left -= 1
                    logger.warning("the Ray %s died (%s); restarting it, its envs' episodes are lost", where, type(err).__name__)
                    ray.kill(self._actors[k])
                    self._actors[k] = self._cls.remote([self._env_fns[i] for i in self._slices[k]], self.autoreset_mode, True)
                    self._compile(k)
                    ref = self._submit(k, command(k))
        return results

    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int):
            seeds = [seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(
                f"If seeds are passed as a list the length must match num_envs={self.num_envs} but got length={len(seeds)}."
            )
        options = dict(options) if options is not None else None
        mask = None
        if options is not None and "reset_mask" in options:
            mask = options.pop("reset_mask")
            if not isinstance(mask, np.ndarray) or mask.shape != (self.num_envs,) or mask.dtype != np.bool_ or not mask.any():
                raise ValueError(
                    f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with a True, got {mask!r}"
                )

        def reset(k: int) -> tuple[str, tuple]:
            s = self._slices[k]
            return "reset", ([seeds[i] for i in s], options, None if mask is None else [bool(mask[i]) for i in s])

        infos: dict[str, Any] = {}
        for s, results in zip(self._slices, self._run(reset), strict=True):
            for i, result in zip(s, results, strict=True):
                if result is None:
                    continue
                self._env_obs[i], info = result
                self._autoreset_envs[i] = False
                infos = self._add_info(infos, info, i)
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        return (deepcopy(self._observations) if self.copy else self._observations), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = list(iterate(self.action_space, actions))
        batches = [[actions[i] for i in s] for s in self._slices]
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for s, results in zip(self._slices, self._run(lambda k: ("step", (batches[k],))), strict=True):
            for i, (obs, reward, terminated, truncated, info, final) in zip(s, results, strict=True):
                self._env_obs[i], rewards[i], terminations[i], truncations[i] = obs, reward, terminated, truncated
                if final is not None:
                    infos = self._add_info(infos, final, i)
                infos = self._add_info(infos, info, i)
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)
        self._autoreset_envs = terminations | truncations
        obs = deepcopy(self._observations) if self.copy else self._observations
        return obs, rewards, terminations, truncations, infos

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """``getattr(env, name)(*args, **kwargs)`` in every sub-env (or the attribute, if not callable)."""
        results = self._run(lambda k: ("call", (name, args, kwargs)))
        return tuple(result for batch in results for result in batch)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | object) -> None:
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"values must have one value per env ({self.num_envs}), got {len(values)}")
        self._run(lambda k: ("set_attr", (name, [values[i] for i in self._slices[k]])))

    def render(self) -> tuple[Any, ...] | None:
        return self.call("render")

    def close_extras(self, **kwargs: Any) -> None:
        """Close the sub-envs, then end the actors (a dead actor is skipped)."""
        for k, actor in enumerate(self._actors):
            try:
                ref = self._submit(k, ("close", ()))
                if isinstance(ref, Exception):
                    raise ref
                ray.get(ref, timeout=60)
            except (ray.exceptions.RayActorError, ray.exceptions.RayChannelError, ray.exceptions.GetTimeoutError):
                logger.warning("a Ray actor of this RayVectorEnv could not close its envs (dead or stuck)")
            self._teardown(k)
            ray.kill(actor)
        self._actors = []
