"""A Gymnasium vector env whose sub-envs live in Ray actors, several per actor, stepped in batches.

Each actor holds a contiguous slice of the envs and is called once per ``reset``/``step`` for its
whole slice. Ray places the actors, gives them their resources and reports their deaths; the calls
themselves take one of two ways:

- **an actor on the driver's machine** (same kernel and network namespace) answers over a Unix
  socket of its own, authenticated with a key sent through Ray (``multiprocessing.connection``, as
  ``AsyncVectorEnv``'s pipes): 0.4 ms a step with a 224x224 image on our machine (pipes: 0.36 ms),
  where a Ray remote call costs 2.2-3 ms, a third of a MiniWorld step. ``direct=False`` turns it off;
- **an actor on another machine** (or any, with ``direct=False``) gets Ray remote calls. A result
  over Ray's default 100 KB (one 224x224 image) would go through Ray's object store; the local Ray
  that ``RayVectorEnv`` starts when none runs returns results up to 4 MiB with the reply
  (:data:`LOCAL_RAY_CONFIG`; give a cluster the same setting when it starts).

The API and results are those of ``SyncVectorEnv`` and ``AsyncVectorEnv``: ``reset(seed=...)`` (an
int seeds env ``i`` with ``seed + i``), ``step``, ``autoreset_mode`` (next-step, same-step, disabled,
and ``options["reset_mask"]``), ``call``, ``get_attr``, ``set_attr``, ``render``, ``close``;
observations are batched with Gymnasium's ``batch_space``/``concatenate``, so rl4vlm's ``Unicode``
spaces batch as they do locally. An error raised by an env is raised by the vector env's call.

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

import io
import logging
import os
import pickle
import secrets
import traceback
import types
from collections.abc import Callable, Sequence
from copy import deepcopy
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener
from typing import Any

import gymnasium as gym
import numpy as np
import ray
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from rl4vlm_gym.backends.ray_init import init_ray, set_render_threads_if_unset

__all__ = ["LOCAL_RAY_CONFIG", "ActorDiedError", "RayVectorEnv"]

logger = logging.getLogger(__name__)

# Ray's system config for a local Ray started here: results up to 4 MiB (a batch of 25 224x224
# images) travel with the call's reply rather than through the object store.
LOCAL_RAY_CONFIG = {"max_direct_call_object_size": 4 * 2**20}


class ActorDiedError(RuntimeError):
    """A Ray actor holding some of the envs died; the vector env cannot go on (close it)."""


class _ChannelLost(Exception):
    """The socket to an actor closed under a call: the actor died (or its process ended)."""


class _FromMain(Exception):
    """Raised by :class:`_Pickler` on a function or class of ``__main__``."""


class _Pickler(pickle.Pickler):
    """The C pickler, refusing what lives in ``__main__`` (pickled by reference, it would not load in
    a process whose ``__main__`` differs) and sending an all-zero integer array (a text-mode env's
    black frame, 270 KB at 300x300) as its shape and dtype."""

    def reducer_override(self, obj: Any) -> Any:  # not called for str, int, list, dict... (the C pickler's fast path)
        if type(obj) is np.ndarray:
            if obj.size >= 4096 and obj.dtype.kind in "biu" and obj.flags.c_contiguous and not obj.any():
                return np.zeros, (obj.shape, obj.dtype)
            return NotImplemented
        named = obj if isinstance(obj, type | types.FunctionType) else type(obj)
        if getattr(named, "__module__", None) == "__main__":
            raise _FromMain
        return NotImplemented


def _dumps(value: Any) -> bytes:
    """``value`` pickled for the socket so that it loads as Ray's remote calls would carry it: with
    :class:`_Pickler`, or cloudpickle where that fails (lambdas, local classes, ``__main__``)."""
    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
        return buffer.getvalue()
    except (_FromMain, pickle.PicklingError, TypeError, AttributeError):
        return ray.cloudpickle.dumps(value)


def _host() -> tuple[str, int] | None:
    """What two processes share when each can reach the other's abstract Unix sockets: the running
    kernel (its boot id) and the network namespace. None off Linux (no abstract sockets)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            return boot.read().strip(), os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return None


class _Runner:
    """The envs of one actor, with the per-env autoreset logic of ``SyncVectorEnv``."""

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], autoreset_mode: AutoresetMode, restarted: bool = False) -> None:
        set_render_threads_if_unset()
        self.env_fns, self.mode, self.restarted = list(env_fns), autoreset_mode, restarted
        self.envs: list[gym.Env] | None = None
        self.listener: Listener | None = None

    def run(self, command: tuple[str, tuple]) -> Any:
        """Run ``getattr(self, name)(*args)``: every call comes here, from the socket or a remote call.
        The envs are made by the first call."""
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

    def open_channel(self, host: tuple[str, int] | None, authkey: bytes) -> bytes | None:
        """A socket for :meth:`serve`, if the driver runs on this machine (``host``); its address."""
        if host is None or host != _host():
            return None
        # An abstract socket (Linux): no file to leak if the actor is killed; the key keeps others out.
        self.listener = Listener("\0rl4vlm-ray-" + secrets.token_hex(16), family="AF_UNIX", authkey=authkey)
        return self.listener.address

    def serve(self) -> None:
        """Answer the driver's commands on the socket of :meth:`open_channel` until ``close`` or the
        driver hangs up. Each reply is ``("ok", result)`` or ``("error", exception)``."""
        listener, self.listener = self.listener, None
        if listener is None:
            raise RuntimeError("serve() needs open_channel() first")
        try:
            conn = listener.accept()
        finally:
            listener.close()  # one driver only
        with conn:
            while True:
                try:
                    command = pickle.loads(conn.recv_bytes())
                except EOFError:
                    return
                try:
                    reply = ("ok", self.run(command))
                except Exception as err:  # noqa: BLE001 - raised in the driver, as a remote call's would be
                    err.add_note(f"raised in a RayVectorEnv actor (pid {os.getpid()}):\n{traceback.format_exc()}")
                    reply = ("error", err)
                try:
                    data = _dumps(reply)
                except Exception as err:  # noqa: BLE001 - said to the driver instead
                    data = _dumps(("error", TypeError(f"the reply to {command[0]!r} cannot be pickled: {err}")))
                conn.send_bytes(data)
                if command[0] == "close":
                    return

    def _made(self) -> list[gym.Env]:
        """The envs: the first command makes them, before any method runs."""
        if self.envs is None:
            raise RuntimeError("the actor's envs are not made yet")
        return self.envs

    def describe(self) -> tuple[gym.Space, gym.Space, dict[str, Any], str | None]:
        env = self._made()[0]
        return env.observation_space, env.action_space, dict(env.metadata), env.render_mode

    def reset(self, seeds: Sequence[int | None], options: dict | None, mask: Sequence[bool] | None) -> list:
        out: list[tuple[Any, dict] | None] = []
        for i, env in enumerate(self._made()):
            if mask is not None and not mask[i]:
                out.append(None)
                continue
            self.autoreset[i] = False
            self.lost[i] = None
            out.append(env.reset(seed=seeds[i], options=options))
        return out

    def step(self, actions: Sequence[Any]) -> list:
        out = []
        for i, (env, action) in enumerate(zip(self._made(), actions, strict=True)):
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
                obs, raw_reward, terminated, truncated, info = env.step(action)
                reward = float(raw_reward)
                if self.mode == AutoresetMode.SAME_STEP and (terminated or truncated):
                    final = {"final_obs": obs, "final_info": info}
                    obs, info = env.reset()
            self.autoreset[i] = bool(terminated or truncated)
            out.append((obs, float(reward), bool(terminated), bool(truncated), info, final))
        return out

    def call(self, name: str, args: tuple, kwargs: dict) -> list:
        results = []
        for env in self._made():
            attr = env.get_wrapper_attr(name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        for env, value in zip(self._made(), values, strict=True):
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
            (default one CPU per actor, as Ray does for tasks). Mesa's software OpenGL (MiniWorld)
            renders with that many threads (:func:`~rl4vlm_gym.backends.ray_init.set_render_threads_if_unset`).
        copy: return copies of the batched observations, as ``SyncVectorEnv`` does.
        max_actor_restarts: dead actors replaced over this vector env's life (see Faults above);
            0 (default) raises :class:`ActorDiedError` instead.
        direct: call the actors on this machine over a socket of their own (see above) rather than
            with Ray remote calls; the same results either way.

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
        direct: bool = True,
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
        self.direct = direct
        bounds = [i * self.num_envs // num_actors for i in range(num_actors + 1)]
        self._slices = [range(bounds[k], bounds[k + 1]) for k in range(num_actors)]
        self._actors = [self._cls.remote([env_fns[i] for i in s], self.autoreset_mode) for s in self._slices]
        self._channels: list[Connection | None] = [None] * num_actors
        self._connect(range(num_actors))
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

    def _connect(self, ks: Sequence[int]) -> None:
        """Open the sockets of actors ``ks`` that run on this machine (``direct``); the others keep
        remote calls. An actor that dies meanwhile is found dead by its first call; one whose socket
        cannot be reached is killed, so that it is too (and replaced like any dead actor)."""
        if not self.direct:
            return
        keys = {k: secrets.token_bytes(32) for k in ks}
        addresses = {k: self._actors[k].open_channel.remote(_host(), keys[k]) for k in ks}
        for k in ks:
            try:
                address = ray.get(addresses[k])
            except ray.exceptions.RayActorError:
                continue
            if address is None:  # another machine
                continue
            self._actors[k].serve.remote()
            try:
                self._channels[k] = Client(address, family="AF_UNIX", authkey=keys[k])
            except (OSError, EOFError, AuthenticationError) as err:
                logger.warning("cannot reach Ray actor %d over its socket (%s: %s); it is replaced", k, type(err).__name__, err)
                ray.kill(self._actors[k])

    def _submit(self, k: int, command: tuple[str, tuple]) -> Any:
        """Send ``command`` to actor ``k``: the reference to its result for a remote call, None for the
        socket (the reply is read by :meth:`_result`), or the error that prevented the call."""
        conn = self._channels[k]
        try:
            if conn is None:
                return self._actors[k].run.remote(command)
            conn.send_bytes(_dumps(command))
            return None
        except ray.exceptions.RayActorError as err:
            return err
        except OSError as err:
            return _ChannelLost(err)
        except Exception as err:  # noqa: BLE001 - arguments that cannot be pickled: raised by _result
            return err

    def _result(self, k: int, ref: Any, timeout: float | None = None) -> Any:
        """The result of the call :meth:`_submit` made on actor ``k`` (an env's error is raised;
        ``TimeoutError`` after ``timeout`` seconds, if given)."""
        if isinstance(ref, Exception):
            raise ref
        conn = self._channels[k]
        if conn is None:
            return ray.get(ref, timeout=timeout)
        if timeout is not None and not conn.poll(timeout):
            raise TimeoutError(f"actor {k} did not answer within {timeout} s")
        try:
            status, value = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError) as err:
            raise _ChannelLost(err) from err
        if status == "error":
            raise value
        return value

    def _drop_channel(self, k: int) -> None:
        """Close actor ``k``'s socket, if it has one (its calls then go through Ray, or nowhere)."""
        channel, self._channels[k] = self._channels[k], None
        if channel is not None:
            channel.close()

    def _replace(self, k: int, err: Exception) -> None:
        """Actor ``k`` died (``err``): replace it if restarts are left, else raise :class:`ActorDiedError`."""
        where = f"actor {k} (envs {self._slices[k].start}..{self._slices[k].stop - 1})"
        self._drop_channel(k)
        cause = type(err.__cause__ if isinstance(err, _ChannelLost) else err).__name__
        if self.restarts_left <= 0:
            raise ActorDiedError(
                f"the Ray {where} of this RayVectorEnv died ({cause}); actors are not "
                "restarted (max_actor_restarts): close this vector env and make a new one"
            ) from err
        self.restarts_left -= 1
        logger.warning("the Ray %s died (%s); restarting it, its envs' episodes are lost", where, cause)
        ray.kill(self._actors[k])
        self._actors[k] = self._cls.remote([self._env_fns[i] for i in self._slices[k]], self.autoreset_mode, True)
        self._connect([k])

    def _run(self, command: Callable[[int], tuple[str, tuple]], actors: Sequence[int] | None = None) -> list[Any]:
        """``command(k)`` (a method name and its arguments) on each actor ``k`` (all by default), in
        parallel; their results. A dead actor is replaced and the call repeated on the new one while
        restarts are left. An env's error is raised once every actor has answered (so that no reply
        is left unread on a socket)."""
        ks = range(len(self._actors)) if actors is None else actors
        refs = [self._submit(k, command(k)) for k in ks]
        results, error = [], None
        for k, ref in zip(ks, refs, strict=True):
            while True:
                try:
                    results.append(self._result(k, ref))
                    break
                except (ray.exceptions.RayActorError, _ChannelLost) as lost:
                    try:
                        self._replace(k, lost)
                        ref = self._submit(k, command(k))
                        continue
                    except ActorDiedError as died:
                        failure: Exception = died
                except Exception as err:  # noqa: BLE001 - an env's error, raised below
                    failure = err
                error = error or failure
                results.append(None)
                break
        if error is not None:
            raise error
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
        # gymnasium's concatenate takes out=None for a space it cannot batch (its _concatenate_custom);
        # its signature leaves None out.
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)  # type: ignore[arg-type]
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
        # gymnasium's concatenate takes out=None for a space it cannot batch (its _concatenate_custom);
        # its signature leaves None out.
        self._observations = concatenate(self.single_observation_space, self._env_obs, self._observations)  # type: ignore[arg-type]
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
        """Close the sub-envs (every actor at once, each given a minute), then end the actors (a dead
        or stuck actor is only ended)."""
        refs = [self._submit(k, ("close", ())) for k in range(len(self._actors))]
        for k, ref in enumerate(refs):
            try:
                self._result(k, ref, timeout=60)
            except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError, _ChannelLost, TimeoutError):
                logger.warning("a Ray actor of this RayVectorEnv could not close its envs (dead or stuck)")
            except Exception:  # noqa: BLE001 - an env failing to close: the actor ends anyway
                logger.warning("an env of a Ray actor of this RayVectorEnv failed to close", exc_info=True)
            self._drop_channel(k)
            ray.kill(self._actors[k])
        self._actors = []
