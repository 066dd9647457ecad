"""The registry of checks (``CHECKS``) and the runner that reports each as a :class:`CheckResult`."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rl4vlm_gym.testing.api import check_api, check_pickle
from rl4vlm_gym.testing.arguments import check_arguments
from rl4vlm_gym.testing.common import REMOTE, CheckResult, NotCheckable
from rl4vlm_gym.testing.decisions import check_decisions
from rl4vlm_gym.testing.determinism import check_determinism
from rl4vlm_gym.testing.docs import check_docs
from rl4vlm_gym.testing.fuzz import check_fuzz
from rl4vlm_gym.testing.observations import check_observations
from rl4vlm_gym.testing.oracle import check_oracle
from rl4vlm_gym.testing.remote import served_cards_kept
from rl4vlm_gym.testing.render import check_render
from rl4vlm_gym.testing.rules import check_rules
from rl4vlm_gym.testing.seeding import check_seeding
from rl4vlm_gym.testing.vector import check_vector

CHECKS: dict[str, Callable[..., str]] = {
    "api": check_api,
    "arguments": check_arguments,
    "seeding": check_seeding,
    "determinism": check_determinism,
    "fuzz": check_fuzz,
    "rules": check_rules,
    "observations": check_observations,
    "oracle": check_oracle,
    "decisions": check_decisions,
    "vector": check_vector,
    "pickle": check_pickle,
    "render": check_render,
    "docs": check_docs,
}


def run_checks(
    env_id: str,
    /,
    checks: Sequence[str] | None = None,
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    **make_kwargs: Any,
) -> list[CheckResult]:
    """Run the named checks (all by default) on ``env_id``; failures are results, not exceptions.

    ``make_kwargs`` go to ``gym.make`` in every check; ``options`` holds each check's own keyword
    arguments by check name, e.g. ``options={"oracle": {"episodes": 5}}``."""
    options = dict(options or {})
    unknown = sorted(set(options) - set(CHECKS))
    if unknown:
        raise ValueError(f"options for unknown checks {unknown}; the checks are {sorted(CHECKS)}")
    for name, opts in options.items():
        accepted = set(inspect.signature(CHECKS[name]).parameters) - {"env_id", "kwargs"}
        extra = sorted(set(opts) - accepted)
        if extra:
            raise ValueError(f"check {name!r} has no options {extra}; it takes {sorted(accepted)}")
    with served_cards_kept():  # a remote id's card: one session for all the checks
        return [_run(env_id, name, options.get(name, {}), make_kwargs) for name in checks or list(CHECKS)]


def _run(env_id: str, name: str, options: Mapping[str, Any], make_kwargs: Mapping[str, Any]) -> CheckResult:
    """One check as a result: passed, failed (its exception named) or not checked."""
    start = time.perf_counter()
    try:
        detail = CHECKS[name](env_id, **options, **make_kwargs)
    except NotCheckable as err:
        return CheckResult(env_id, name, False, f"{REMOTE}{err}", time.perf_counter() - start, not_checked=True)
    except Exception as err:  # noqa: BLE001 - a failing check is reported, not raised
        return CheckResult(env_id, name, False, f"{type(err).__name__}: {err}", time.perf_counter() - start)
    return CheckResult(env_id, name, True, detail, time.perf_counter() - start)
