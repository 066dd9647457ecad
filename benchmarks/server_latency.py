"""Step round-trip latency and throughput of served envs: in-process vs HTTP vs WebSocket, PNG vs raw
images, 1 vs 16 concurrent sessions.

    .venv/bin/python benchmarks/server_latency.py [--ids rl4vlm/NumberLine-v0 rl4vlm/MiniWorld-OneRoom-v1]
                                                  [--size 224] [--steps 300] [--sessions 1 16]

The server is `rl4vlm-gym serve` in its own process (port 0); clients are openenv-core's
WebSocket client (rl4vlm_gym.server.remote.VLMEnvClient, image decoded to an array) and plain HTTP
(requests). Actions are random admissible ones (the same in every mode), episodes reset as they
end. Over HTTP a step is OpenEnv's stateless call (a fresh env, reset, one step), so it is compared
with an in-process reset + step. The WebSocket overhead is the p50 step latency over the wire minus
the p50 in-process step. Medians over steps; this machine is shared, so run it alone.
"""

from __future__ import annotations

import argparse
import json
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


def _in_process(env_id: str, size: int, steps: int) -> dict[str, float]:
    env = gym.make(env_id, image_size=(size, size))
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    times, episode = [], 0
    for _ in range(steps):
        action = obs["actions"][int(rng.integers(len(obs["actions"])))]
        start = time.perf_counter()
        obs, _, terminated, truncated, _ = env.step(action)
        times.append(time.perf_counter() - start)
        if terminated or truncated:
            episode += 1
            obs, _ = env.reset(seed=episode)
    resets = []
    for seed in range(min(steps, 100)):
        start = time.perf_counter()
        env.reset(seed=seed)
        env.step(obs["actions"][0])
        resets.append(time.perf_counter() - start)
    env.close()
    return {"step": _p50(times), "reset+step": _p50(resets), "steps/s": 1 / statistics.mean(times)}


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
                result = client.reset(seed=seed * 10_000 + episode)


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


def _http(url: str, env_id: str, size: int, fmt: str, steps: int) -> dict[str, float]:
    session = requests.Session()
    body: dict[str, Any] = {"env_id": env_id, "make_kwargs": {"image_size": [size, size]}, "image_format": fmt}
    times = []
    for seed in range(min(steps, 100)):
        start = time.perf_counter()
        got = session.post(f"{url}/step", json={"action": {"text": "<action>noop</action>"}, "seed": seed, **body})
        got.raise_for_status()
        json.loads(got.content)
        times.append(time.perf_counter() - start)
    return {"reset+step": _p50(times)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", default=["rl4vlm/NumberLine-v0", "rl4vlm/MiniWorld-OneRoom-v1"])
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--steps", type=int, default=300, help="steps per session")
    parser.add_argument("--sessions", nargs="*", type=int, default=[1, 16])
    args = parser.parse_args()
    for env_id in args.ids:
        proc, owned = processes.popen(
            [sys.executable, "-m", "rl4vlm_gym.cli", "serve", env_id, "--port", "0", "--max-sessions", str(max(args.sessions))],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = proc.stdout.readline().split(" on ")[1].split()[0]  # type: ignore[union-attr]
            print(f"\n{env_id} at {args.size}x{args.size} (p50 ms per step; throughput in steps/s)")
            for fmt in ("raw", "png"):
                local = _in_process(env_id, args.size, args.steps)
                http = _http(url, env_id, args.size, fmt, args.steps)
                print(
                    f"  HTTP {fmt:3s}            stateless reset+step {http['reset+step']:7.2f}   "
                    f"in-process {local['reset+step']:7.2f}   overhead {http['reset+step'] - local['reset+step']:+7.2f}"
                )
                for n in args.sessions:
                    _ws(url, env_id, args.size, fmt, 20, n)  # warm up
                    # in-process measured again right before: the machine is shared and its load drifts
                    local = _in_process(env_id, args.size, args.steps)
                    ws = _ws(url, env_id, args.size, fmt, args.steps, n)
                    print(
                        f"  WebSocket {fmt:3s} x{n:<3d}  step {ws['step']:7.2f}   in-process {local['step']:7.2f} "
                        f"({local['steps/s']:6.0f} steps/s)   overhead {ws['step'] - local['step']:+7.2f}   "
                        f"{ws['steps/s']:6.0f} steps/s"
                    )
        finally:
            processes.kill_group(proc.pid)
            proc.wait()
            owned.release()


if __name__ == "__main__":
    main()
