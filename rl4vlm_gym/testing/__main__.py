"""``python -m rl4vlm_gym.testing digest|trace ...``: a rollout's digest in a new interpreter, to compare by hand
(``determinism`` itself plays its fresh rollout in a child of the kit's fork server, :mod:`rl4vlm_gym.testing.fresh`)."""

from __future__ import annotations

import json
import sys

from rl4vlm_gym.testing.common import _ensure_registered
from rl4vlm_gym.testing.rollouts import _rollout_trace


def _main(argv: list[str]) -> None:
    """``python -m rl4vlm_gym.testing digest|trace ID SEED STEPS KWARGS_JSON [WHERE_JSON]``: a rollout's
    digest, or (``trace``) its digest and per-step digests as JSON (see ``check_determinism``).
    ``WHERE_JSON`` holds the parent's ``sys.path`` and the id's spec, so test-only envs registered in
    the parent are found here too."""
    if len(argv) not in (5, 6) or argv[0] not in ("digest", "trace"):
        raise SystemExit("usage: python -m rl4vlm_gym.testing digest|trace ENV_ID SEED STEPS KWARGS_JSON [WHERE_JSON]")
    command, env_id, seed, steps, kwargs, *where = argv
    found = json.loads(where[0]) if where else {}
    sys.path.extend(p for p in found.get("path", ()) if p not in sys.path)
    _ensure_registered(env_id, found.get("spec"))
    digest, trace = _rollout_trace(env_id, int(seed), int(steps), json.loads(kwargs))
    sys.stdout.write((digest if command == "digest" else json.dumps({"digest": digest, "trace": trace})) + "\n")


if __name__ == "__main__":
    _main(sys.argv[1:])
