"""The conformance kit: every check an RL4VLM Gym env must pass, as importable functions.

Our test suite runs every check for every registered id, and ``rl4vlm-gym check ID`` runs the
same functions, so a contributor sees exactly what CI checks. Each check takes an env id plus
``make`` keyword arguments (its own options are keyword-only parameters), raises
``AssertionError`` naming the defect on failure and returns a one-line summary on success.

Checks: ``api`` (Gymnasium's ``check_env`` in every obs mode, warnings included), ``arguments``
(bad ``make``/``reset`` arguments name themselves; ``image_size`` is obeyed; every level plays
its own game), ``seeding`` (seeds matter; ``reset()`` without a seed draws a new episode),
``determinism`` (byte-identical rollouts in separate processes), ``fuzz`` (hostile action strings
are clean invalid actions), ``rules`` (the step contract under every reward variant: refused moves
change nothing and pay the invalid reward, rewards come from ``REWARDS``, progress and success
keep their laws, ``state_key`` names one state, cached frames equal fresh ones, the episode's end
is final), ``observations`` (image and text carry the same information, ``image`` mode puts no
state in text, the mission does not give the state away), ``oracle`` (every solvable level solved
in exactly ``optimal_steps``, an int that no shorter solution beats), ``decisions`` (the decision facts,
``decision()``: the oracle's moves are optimal, exactly the valid moves that lower ``steps_to_go`` by one
are, and an env with an oracle computes them or says why not), ``vector`` (sync and async
with Gymnasium's default start method and with workers that inherit nothing of their owner, as
``spawn``'s), ``pickle``, ``render`` and ``docs``.

The kit checks any env registered with Gymnasium under an id that has an env card, test-only
envs included: register the card with :func:`rl4vlm_gym.registry.register` (its entry point a
``"module:Class"`` string importable from ``sys.path``), and the checks that start processes
(``determinism``, ``vector``) register it there too. ``tests/kit/`` does exactly that.

The kit reads an env through its public inspection API (``facts()``, ``describe()``,
``fresh_render()``, ``admissible_actions``, ``elapsed_steps``: :class:`~rl4vlm_gym.core.VLMEnv`), which
``rl4vlm/Remote-v0`` offers too, so one code path checks a local and a served env. Its only private
hook is ``_end_of_step``, traced locally to tie each reward to its event.

A remote env (``rl4vlm/Remote-v0``, ``KIT_PROXY``) is checked with its ``url`` and ``env_id`` as
``make`` arguments: the served id's card and facts come from the server's ``state``, and what
cannot be seen over the wire is said in the summary (``NOT CHECKED remotely: ...``) or, for a check
that cannot run at all, reported as not checked (:class:`NotCheckable`, ``CheckResult.not_checked``).

The kit is a package, one module per check family (``api``, ``arguments``, ``seeding``,
``determinism``, ``fuzz``, ``rules``, ``observations``, ``oracle``, ``decisions``, ``vector``, ``render``, ``docs``),
beside ``common`` (what every check shares), ``remote`` (cards and rules, local or served),
``rollouts`` (digests and traces), ``runner`` (``CHECKS`` and :func:`run_checks`), ``fresh`` (the
long-lived fork server whose children are the process checks' fresh processes), ``throughput`` and
``__main__`` (the rollout digest a fresh process computes). Every public name is importable from here.
"""

from __future__ import annotations

from rl4vlm_gym.testing.api import check_api, check_pickle
from rl4vlm_gym.testing.arguments import check_arguments
from rl4vlm_gym.testing.common import REMOTE, CheckResult, NotCheckable, is_remote
from rl4vlm_gym.testing.decisions import DECISION_EPISODES, check_decisions
from rl4vlm_gym.testing.determinism import check_determinism
from rl4vlm_gym.testing.docs import check_docs
from rl4vlm_gym.testing.fuzz import FUZZ_INPUTS, SURELY_INVALID, check_fuzz
from rl4vlm_gym.testing.observations import check_observations
from rl4vlm_gym.testing.oracle import ORACLE_EPISODES, ORACLE_EPISODES_EXPENSIVE, check_oracle
from rl4vlm_gym.testing.render import check_render
from rl4vlm_gym.testing.rollouts import rollout_digest
from rl4vlm_gym.testing.rules import check_rules
from rl4vlm_gym.testing.runner import CHECKS, run_checks
from rl4vlm_gym.testing.seeding import check_seeding
from rl4vlm_gym.testing.throughput import measure_throughput
from rl4vlm_gym.testing.vector import VECTOR_TIMEOUT_S, check_vector

__all__ = [
    "CHECKS",
    "DECISION_EPISODES",
    "FUZZ_INPUTS",
    "ORACLE_EPISODES",
    "ORACLE_EPISODES_EXPENSIVE",
    "REMOTE",
    "SURELY_INVALID",
    "VECTOR_TIMEOUT_S",
    "CheckResult",
    "NotCheckable",
    "check_api",
    "check_arguments",
    "check_decisions",
    "check_determinism",
    "check_docs",
    "check_fuzz",
    "check_observations",
    "check_oracle",
    "check_pickle",
    "check_render",
    "check_rules",
    "check_seeding",
    "check_vector",
    "is_remote",
    "measure_throughput",
    "rollout_digest",
    "run_checks",
]
