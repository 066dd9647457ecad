"""Step latency of served envs: ``rl4vlm/Remote-v0`` against the local env (PNG and raw images), openenv-core's
WebSocket client with 1 and 16 concurrent sessions, and the stateless HTTP ``/step``.

    .venv/bin/python benchmarks/server_latency.py [--ids rl4vlm/NumberLine-v0 rl4vlm/MiniWorld-OneRoom-v1]
                                                  [--size 224] [--steps 300] [--rounds 5] [--sessions 1 16]
                                                  [--remote-only]

The server is ``rl4vlm-gym serve`` in its own process (port 0). Actions are random admissible ones from a fixed
seed, the same in every mode; episodes reset as they end (resets are not timed).

- ``Remote-v0``: ``gym.make("rl4vlm/Remote-v0", ...)`` and ``gym.make(env_id, ...)`` play the same episodes in
  lockstep (same seeds, same actions), their steps timed alternately, one of each in turn, so the machine's load
  hits both alike (``--rounds`` x ``--steps`` steps). Printed: the p50 step of each and the overhead (p50 remote
  minus p50 local: the issue's figure, under 2 ms on an idle machine for NumberLine at 224x224), the remote p95,
  CPU per step: this process's during the remote step (the client: both its threads) and during the local one,
  and the server's (its threads' run time over the run, resets left out), and whether every
  remote result equalled the local one (image, text, actions, reward, flags, info).
- ``WebSocket xN``: openenv-core's client (``VLMEnvClient``) in N threads, p50 step and throughput.
- ``HTTP``: OpenEnv's stateless ``/step`` (a fresh env, reset, one step) against an in-process reset + step; a
  server that refuses it (stateless routes off, or over their cap) is reported as such.

Medians over steps. This machine is shared: the load average is printed before and after; run it alone. On a
loaded machine the wall times measure the scheduler (each step crosses two processes and four threads); the CPU
columns do not, and ``chrt -f 5 .venv/bin/python benchmarks/server_latency.py`` (the server inherits the
real-time priority; root only) comes close to an idle machine's wall times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import gymnasium as gym
import numpy as np
import requests

import rl4vlm_gym  # noqa: F401
from rl4vlm_gym import processes
from rl4vlm_gym.server.remote import VLMEnvClient


def _p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def _cpu_of(pid: int) -> float:
    """CPU seconds process ``pid``'s threads have run so far (the scheduler's nanoseconds: /proc's user and system
    ticks are 10 ms, coarser than a step)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total / 1e9


def _lockstep(url: str, env_id: str, size: int, fmt: str, steps: int, server_pid: int) -> dict[str, Any]:
    """``steps`` steps of the local env and of ``Remote-v0`` playing it, in lockstep: random admissible actions
    from a fixed seed, episodes reset as they end (untimed); the two steps of each pair are timed back to back,
    in alternating order."""
    kwargs: dict[str, Any] = {"image_size": (size, size)}
    local = gym.make(env_id, **kwargs)
    remote = gym.make("rl4vlm/Remote-v0", url=url, env_id=env_id, image_format=fmt, **kwargs)
    rng = np.random.default_rng(0)
    times: dict[str, list[float]] = {"local": [], "remote": []}
    cpu = {"local": 0.0, "remote": 0.0}
    equal, episode = True, 0
    try:
        for warm in (True, False):
            obs, _ = local.reset(seed=episode)
            equal &= _same(obs, remote.reset(seed=episode)[0])
            server_start, server_resets = _cpu_of(server_pid), 0.0
            for i in range(20 if warm else steps):
                action = obs["actions"][int(rng.integers(len(obs["actions"])))]
                results = {}
                for side in ("local", "remote") if i % 2 else ("remote", "local"):
                    env = local if side == "local" else remote
                    cpu_start, start = time.process_time(), time.perf_counter()
                    results[side] = env.step(action)
                    times[side].append(time.perf_counter() - start)
                    cpu[side] += time.process_time() - cpu_start
                obs = results["local"][0]
                equal &= _same(obs, results["remote"][0]) and results["local"][1:] == results["remote"][1:]
                if any(results["local"][2:4]):
                    episode += 1
                    reset_start = _cpu_of(server_pid)
                    obs, _ = local.reset(seed=episode)
                    equal &= _same(obs, remote.reset(seed=episode)[0])
                    server_resets += _cpu_of(server_pid) - reset_start
            if warm:
                times = {"local": [], "remote": []}
                cpu = {"local": 0.0, "remote": 0.0}
        server_cpu = _cpu_of(server_pid) - server_start - server_resets
    finally:
        local.close()
        remote.close()
    return {
        "local": _p50(times["local"]),
        "remote": _p50(times["remote"]),
        "remote_p95": float(np.percentile(times["remote"], 95)) * 1000,
        "local_cpu": cpu["local"] / steps * 1000,
        "client_cpu": cpu["remote"] / steps * 1000,
        "server_cpu": server_cpu / steps * 1000,
        "equal": equal,
    }


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(np.array_equal(a["image"], b["image"])) and all(a[k] == b[k] for k in ("text", "mission", "actions"))


def _in_process_reset_step(env_id: str, size: int, n: int) -> float:
    env = gym.make(env_id, image_size=(size, size))
    obs, _ = env.reset(seed=0)
    times = []
    for seed in range(n):
        start = time.perf_counter()
        env.reset(seed=seed)
        env.step(obs["actions"][0])
        times.append(time.perf_counter() - start)
    env.close()
    return _p50(times)


def _ws_session(url: str, env_id: str, size: int, fmt: str, steps: int, seed: int, out: list[float]) -> None:
    client = VLMEnvClient(base_url=url, message_timeout_s=300).sync()
    with client:
        rng = np.random.default_rng(seed)
        kwargs = {"env_id": env_id, "make_kwargs": {"image_size": [size, size]}, "image_format": fmt}
        result = client.reset(seed=seed, **kwargs)
        episode = 0
        for _ in range(steps):
            actions = result.observation["actions"]
            action = actions[int(rng.integers(len(actions)))]
            start = time.perf_counter()
            result = client.step(action)
            out.append(time.perf_counter() - start)
            if result.done:
                episode += 1
                result = client.reset(seed=seed * 10_000 + episode, **kwargs)


def _ws(url: str, env_id: str, size: int, fmt: str, steps: int, sessions: int) -> dict[str, float]:
    outs: list[list[float]] = [[] for _ in range(sessions)]
    threads = [threading.Thread(target=_ws_session, args=(url, env_id, size, fmt, steps, i, outs[i])) for i in range(sessions)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    times = [x for out in outs for x in out]
    return {"step": _p50(times), "steps/s": len(times) / elapsed}


def _http(url: str, env_id: str, size: int, fmt: str, n: int) -> float | str:
    """p50 of the stateless ``/step`` (reset keywords and an action), or why the server refused it."""
    session = requests.Session()
    body: dict[str, Any] = {"env_id": env_id, "make_kwargs": {"image_size": [size, size]}, "image_format": fmt}
    times = []
    for seed in range(n):
        start = time.perf_counter()
        got = session.post(f"{url}/step", json={"action": {"text": "<action>noop</action>"}, "seed": seed, **body})
        if got.status_code != 200:
            return f"refused: HTTP {got.status_code} {got.text[:120]}"
        got.json()
        times.append(time.perf_counter() - start)
    return _p50(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", default=["rl4vlm/NumberLine-v0", "rl4vlm/MiniWorld-OneRoom-v1"])
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument(
        "--steps", type=int, default=300, help="steps per round (Remote-v0: rounds x steps in all) or per session (WebSocket)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="Remote-v0 and local play rounds x steps steps")
    parser.add_argument("--sessions", nargs="*", type=int, default=[1, 16])
    parser.add_argument("--remote-only", action="store_true", help="only the Remote-v0 vs local figures")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    for env_id in args.ids:
        serve = ["serve", env_id, "--port", "0", "--max-sessions", str(max(args.sessions))]
        proc, owned = processes.popen([sys.executable, "-m", "rl4vlm_gym.cli", *serve], stdout=subprocess.PIPE, text=True)
        try:
            url = proc.stdout.readline().split(" on ")[1].split()[0]  # type: ignore[union-attr]
            print(f"\n{env_id} at {args.size}x{args.size} (p50 ms per step; CPU ms per step; throughput in steps/s)")
            for fmt in ("png", "raw"):
                r = _lockstep(url, env_id, args.size, fmt, args.steps * args.rounds, proc.pid)
                print(
                    f"  Remote-v0 {fmt:3s}       step {r['remote']:7.2f}   local {r['local']:7.2f}   overhead {r['remote'] - r['local']:+7.2f}"
                    f"   (p95 {r['remote_p95']:.2f})   CPU: client {r['client_cpu']:5.2f} (local env {r['local_cpu']:5.2f}),"
                    f" server {r['server_cpu']:5.2f}   equal to local: {'yes' if r['equal'] else 'NO'}"
                )
                if args.remote_only:
                    continue
                http = _http(url, env_id, args.size, fmt, min(args.steps, 100))
                local = _in_process_reset_step(env_id, args.size, min(args.steps, 100))
                shown = (
                    http if isinstance(http, str) else f"{http:7.2f}   in-process {local:7.2f}   overhead {http - local:+7.2f}"
                )
                print(f"  HTTP {fmt:3s}            stateless reset+step {shown}")
                for n in args.sessions:
                    _ws(url, env_id, args.size, fmt, 20, n)  # warm up
                    ws = _ws(url, env_id, args.size, fmt, args.steps, n)
                    print(f"  WebSocket {fmt:3s} x{n:<3d}  step {ws['step']:7.2f}   {ws['steps/s']:6.0f} steps/s")
        finally:
            processes.kill_group(proc.pid)
            proc.wait()
            owned.release()
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
