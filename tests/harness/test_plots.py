"""The heat maps' labels are readable: full-size fonts, no label over another, none cut off, and a figure that
a laptop's window shows unscaled (the leaderboard site's transfer matrix; a report's too)."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.extra("eval")

SUITES = [f"{name} ({axis})" for name, axis in [
    ("balrog-smoke", "smoke"), ("smoke", "smoke"), ("cards", "in-distribution"), ("games", "in-distribution"),
    ("grid-puzzles", "in-distribution"), ("household", "in-distribution"), ("navigation", "in-distribution"),
    ("webshop", "in-distribution"), ("transfer-seeds", "seeds"), ("transfer-levels", "levels"), ("transfer-visual", "visual"),
    ("transfer-wording", "wording"), ("transfer-modality", "modality"), ("balrog", "family"), ("balrog-vlm", "family"),
    ("transfer-family", "family"),
]]  # fmt: skip
NAMES = ["Always raise (prefer raise, bet, call)", "Oracle (upper bound)", "Random over admissible actions",
         "tiny random-init Qwen2-VL + RL4VLM, CPU (pipeline check, not a result)", "Zed", "x" * 40]  # fmt: skip
LAPTOP_PX = 1233  # the site's content width in a 1280 px window (CSS px, 96 an inch)


def _labels(fig: Any) -> list[tuple[str, float, Any]]:
    """Every tick label and axis label drawn: (text, font size in pt, extent in display pixels)."""
    renderer = fig.canvas.get_renderer()
    texts = []
    for ax in fig.axes:
        for label in [*ax.get_xticklabels(), *ax.get_yticklabels(), ax.xaxis.label, ax.yaxis.label]:
            if label.get_visible() and label.get_text():
                texts.append((label.get_text(), label.get_fontsize(), label.get_window_extent(renderer)))
    return texts


@pytest.mark.parametrize("shape", ["suites down", "suites across"])
def test_transfer_matrix_labels_are_readable(shape: str) -> None:
    """16 suites by 6 names, either way round: every label at 9 pt or more, inside the figure, overlapping no
    other (the extents of rotated labels are their bounding boxes), and the figure at most a laptop's width."""
    from rl4vlm_gym.harness import plots

    rows, columns = (SUITES, NAMES) if shape == "suites down" else (NAMES, SUITES)
    values = [[(i * 7 + j * 3) % 11 / 10 if (i + j) % 3 else None for j in range(len(columns))] for i in range(len(rows))]
    fig = plots.transfer_matrix(rows, columns, values)
    fig.canvas.draw()
    width, height = fig.get_figwidth() * 96, fig.get_figheight() * 96
    assert width <= LAPTOP_PX, f"{width:.0f} px wide: scaled to fit, its 9 pt labels shrink below 9 px"
    labels = _labels(fig)
    assert len(labels) >= len(rows) + len(columns)
    frame = fig.bbox
    for text, size, box in labels:
        assert size >= 9, (text, size)
        assert box.x0 >= frame.x0 - 1 and box.y0 >= frame.y0 - 1 and box.x1 <= frame.x1 + 1 and box.y1 <= frame.y1 + 1, text
    for i, (a, _, box_a) in enumerate(labels):
        for b, _, box_b in labels[i + 1 :]:
            assert not box_a.overlaps(box_b), f"{a!r} overlaps {b!r}"
    assert height <= 96 * (1.5 + 0.5 * len(rows) + 2.5)  # sized from its rows, not stretched
