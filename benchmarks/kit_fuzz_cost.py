"""What the kit's ``fuzz`` check costs per env id, and how much of it is parsing the hostile outputs.

The fuzz check runs for every registered id (tests/test_conformance.py, the remote kit, ``rl4vlm-gym
check``), and its 1 MB and 100,000-tag outputs are parsed by each env's :class:`~rl4vlm_gym.parsing.ActionParser`
(``auto`` format, ``lenient`` matching, the default): a parse that lists every match shows up here first.
For each id the script prints the median CPU time (``time.process_time``) of ``check_fuzz`` and of
parsing ``FUZZ_INPUTS`` with the default parser against the id's first admissible actions.

    .venv/bin/python benchmarks/kit_fuzz_cost.py [--repeats 3] [ID ...]   # default: a sample of ids
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

from rl4vlm_gym.parsing import ActionParser
from rl4vlm_gym.testing import FUZZ_INPUTS, check_fuzz

SAMPLE = ("rl4vlm/NumberLine-v0", "rl4vlm/FrozenLake-v0", "rl4vlm/Sokoban-v0", "rl4vlm/Blackjack-v0", "rl4vlm/Points24-v0")


def _cpu_ms(call: object, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        call()  # type: ignore[operator]
        times.append(time.process_time() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("ids", nargs="*", default=list(SAMPLE))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"median CPU of {args.repeats} runs; parse: the {len(FUZZ_INPUTS)} hostile outputs, default parser")
    print(f"{'id':40} {'check_fuzz ms':>14} {'parse ms':>10}")
    for env_id in args.ids:
        env = gym.make(env_id)
        obs, _ = env.reset(seed=0)
        env.close()
        actions, default = tuple(obs["actions"]), ActionParser()
        check_fuzz(env_id)  # warm: imports, caches
        fuzz = _cpu_ms(lambda: check_fuzz(env_id), args.repeats)  # noqa: B023 - called within the iteration
        parse = _cpu_ms(lambda: [default.parse(o, actions) for o in FUZZ_INPUTS.values()], args.repeats)  # noqa: B023
        print(f"{env_id:40} {fuzz:>14.1f} {parse:>10.1f}")


if __name__ == "__main__":
    main()
