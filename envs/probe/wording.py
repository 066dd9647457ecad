"""ColourNaming's held-out wording: its mission in sentences training never reads (it gives no
feedback besides the base class's invalid-action one, which the core rewords).

Three independent phrasings; the seed picks one per episode (:mod:`rl4vlm_gym.wording`).
"""

from __future__ import annotations

from rl4vlm_gym.wording import HELD_OUT, TRAIN

__all__ = ["PHRASES", "WORDINGS"]

WORDINGS = (TRAIN, HELD_OUT)

PHRASES = {
    HELD_OUT: {
        "mission": (
            "Which colour is shown in the picture? Reply with its name.",
            "Say what colour you see in the image.",
            "The picture shows one colour; answer with that colour's name.",
        ),
    }
}
