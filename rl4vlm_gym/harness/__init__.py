"""The evaluation harness: suites (:mod:`.suite`), the runner (:mod:`.runner`), scores
(:mod:`.metrics`), decision-level scores (:mod:`.decisions`: every step against the env's
solver), reports (:mod:`.report`, and :mod:`.decision_report`: where agents go wrong) and
leaderboards (:mod:`.leaderboard`, reading submissions only through :mod:`.untrusted`).

Nothing here is imported by ``import rl4vlm_gym``; ``rl4vlm-gym eval``, ``rl4vlm-gym
decisions`` and ``rl4vlm-gym leaderboard`` are its command-line faces.
"""
