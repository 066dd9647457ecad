"""``mutmut run``, with ``requeue.py sample`` applied right after mutmut's stats are collected and before it
reads which mutants to check (benchmarks/mutation/run.sh, MUTATION_SAMPLE_BUDGET_S=seconds of one child):
no mutant runs before the sample is drawn, and the run needs no second start (its clean tests take minutes).

Usage (in the staging tree): MUTATION_SAMPLE_BUDGET_S=6000 python _mutmut_sampled.py run --max-children 2
"""

from __future__ import annotations

import os
import pathlib
import sys

import mutmut.__main__ as mutmut_main

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import requeue  # noqa: E402

_collect = mutmut_main.collect_source_file_mutation_data


def _sampled(*args, **kwargs):
    budget = os.environ.get("MUTATION_SAMPLE_BUDGET_S")
    if budget:
        requeue.sample(float(budget), os.environ.get("MUTATION_SAMPLE_SEED", "36"))
    return _collect(*args, **kwargs)


mutmut_main.collect_source_file_mutation_data = _sampled

if __name__ == "__main__":
    sys.exit(mutmut_main.cli())
