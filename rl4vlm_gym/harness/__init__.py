"""The evaluation harness: suites (:mod:`.suite`), the runner (:mod:`.runner`), scores
(:mod:`.metrics`), reports (:mod:`.report`) and leaderboards (:mod:`.leaderboard`, reading
submissions only through :mod:`.untrusted`).

Nothing here is imported by ``import rl4vlm_gym``; ``rl4vlm-gym eval`` and ``rl4vlm-gym
leaderboard`` are its command-line faces.
"""
