"""CPU seconds of WebShop's browser by operation, Chromium's processes included (wall clock is meaningless
on a shared machine; Chromium's work is mostly outside the Python process).

    .venv/bin/python benchmarks/webshop_browser_cpu.py [--repeats 20] [--starts 3]

Each figure is the CPU (user + system) of this process and of every process of the Chromium it drives
(psutil, read before and after), per operation: the mean over ``--repeats`` calls, the median of
``--starts`` starts:

- start: a Chromium and its driver, and the first window sized (``browser._Chromium`` + ``open_window``);
- open: ``Browser.open`` of the results page (chromedriver's get, then one readiness poll);
- click: a step that clicks a product on the results page and returns (two navigations, two clicks);
- screenshot: ``Browser.screenshot`` (CDP capture, PNG decoded to an array);
- command: one chromedriver ``execute_script`` and one CDP ``Runtime.evaluate`` (what a lookup costs).

At 2026-11-29 (2 loaded cores, nice 10): start 1.7-1.9 s (2.2-3.2 s while the first window was a new
one); open of a results page 140-150 ms (about:blank 60 ms); click 300-310 ms (two steps, each a
navigation and a screenshot); screenshot 26 ms; a command 8-25 ms by execute_script (the larger the
script, the more), 5-6 ms by Runtime.evaluate. Chromium flags (no back-forward cache, in-process GPU,
incognito, ...) changed an open by less than the noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable

import gymnasium as gym
import psutil

import rl4vlm_gym  # noqa: F401 - registers the ids
from rl4vlm_gym.envs.webshop import browser


def _cpu(chromium: browser._Chromium) -> float:
    """CPU seconds so far of this process and of ``chromium``'s live processes."""
    total = sum(os.times()[:2])
    for process in chromium.processes():
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def _per_call(chromium: browser._Chromium, call: Callable[[], object], repeats: int) -> float:
    """Mean CPU seconds of ``call`` over ``repeats`` calls (the OS counts CPU in 10 ms ticks: one call is below them)."""
    call()  # warm: caches, first-time code
    start = _cpu(chromium)
    for _ in range(repeats):
        call()
    return (_cpu(chromium) - start) / repeats


def _start_cpu() -> float:
    """One start, measured from a baseline of this process alone (the Chromium does not exist yet)."""
    before = sum(os.times()[:2])
    chromium = browser._Chromium()
    chromium.open_window((512, 512))
    spent = _cpu(chromium) - before
    chromium.kill()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    import selenium.webdriver  # noqa: F401 - imported before the starts are timed

    print(f"start       {statistics.median(_start_cpu() for _ in range(args.starts)) * 1e3:7.0f} ms CPU")
    env = gym.make("rl4vlm/WebShop-Browser-v2")
    base = env.unwrapped
    env.reset(seed=0)
    env.step(base.oracle_action())  # the results page
    shown, server = base._site.browser, base._site.server
    chromium = shown._chromium
    results = server.url(base.route)

    def click_and_back() -> None:
        env.step(base.oracle_action())  # opens the product
        env.step("click[< prev]")

    figures = {
        "open": lambda: shown.open(results),
        "click": click_and_back,
        "screenshot": shown.screenshot,
    }
    for name, call in figures.items():
        print(f"{name:<11} {_per_call(chromium, call, args.repeats) * 1e3:7.1f} ms CPU")
    with shown._window() as driver:
        script = _per_call(chromium, lambda: driver.execute_script("return 1"), args.repeats)
        evaluate = _per_call(chromium, lambda: browser._evaluate(driver, "1"), args.repeats)
    print(f"command     {script * 1e3:7.1f} ms CPU (execute_script), {evaluate * 1e3:.1f} ms (Runtime.evaluate)")
    env.close()


if __name__ == "__main__":
    main()
