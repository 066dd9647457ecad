"""Tests for the playing-card artwork and compositing in ``rl4vlm_gym.envs.cards.renderer``."""

from __future__ import annotations

import hashlib
import itertools
import subprocess
import sys

import numpy as np
import pytest

from rl4vlm_gym.envs.cards import renderer

SIZES = [(135, 189), (67, 93), (70, 98), (40, 56), (101, 141), (16, 16), (270, 378)]
ALL_CARDS = list(itertools.product(renderer.RANKS, renderer.SUITS))
SAMPLE = [("A", "S"), ("10", "H"), ("Q", "D"), ("7", "C"), ("K", "S")]


def _interior(card: np.ndarray) -> np.ndarray:
    """RGB of the card without its outer 4 px (the dark border and rounded corners)."""
    return card[4:-4, 4:-4, :3].astype(int)


def _red_pixels(card: np.ndarray) -> int:
    rgb = _interior(card)
    return int(np.count_nonzero((rgb[..., 0] > 150) & (rgb[..., 1] < 90) & (rgb[..., 2] < 90)))


def _dark_pixels(card: np.ndarray) -> int:
    return int(np.count_nonzero(_interior(card).max(axis=-1) < 90))


def _gold_pixels(card: np.ndarray) -> int:
    rgb = _interior(card)
    return int(np.count_nonzero((np.abs(rgb - np.array((250, 233, 178))) <= 6).all(axis=-1)))


def _digest(cards: list[tuple[str, str]], size: tuple[int, int]) -> str:
    sha = hashlib.sha256()
    for rank, suit in cards:
        sha.update(renderer.card_face(rank, suit, size).tobytes())
    sha.update(renderer.card_back(size).tobytes())
    return sha.hexdigest()


def _reference_paste(frame: np.ndarray, card: np.ndarray, xy: tuple[int, int]) -> np.ndarray:
    """Straightforward float compositing on a padded frame, used as the oracle for ``paste``."""
    height, width = card.shape[:2]
    pad = max(height, width) + abs(xy[0]) + abs(xy[1])
    big = np.pad(frame, ((pad, pad), (pad, pad), (0, 0))).astype(np.float64)
    x, y = xy[0] + pad, xy[1] + pad
    alpha = card[..., 3:].astype(np.float64) / 255
    region = big[y : y + height, x : x + width]
    big[y : y + height, x : x + width] = card[..., :3] * alpha + region * (1 - alpha)
    return np.rint(big[pad:-pad, pad:-pad]).astype(np.uint8)


# --- constants -----------------------------------------------------------------------------------


def test_constants() -> None:
    assert renderer.RANKS == ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    assert renderer.SUITS == ("C", "D", "H", "S")
    assert renderer.FELT == (0x35, 0x65, 0x4D)


# --- shapes, dtypes, transparency ----------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES)
def test_face_and_back_shapes(size: tuple[int, int]) -> None:
    width, height = size
    for card in (renderer.card_face("10", "H", size), renderer.card_face("K", "C", size),
                 renderer.card_back(size)):
        assert card.shape == (height, width, 4)
        assert card.dtype == np.uint8
        # Rounded corners are transparent, the body is opaque.
        assert card[0, 0, 3] == card[0, -1, 3] == card[-1, 0, 3] == card[-1, -1, 3] == 0
        assert card[height // 2, width // 2, 3] == 255
        assert card[height // 2, :, 3].min() == 255  # straight sides are fully opaque


def test_non_square_and_odd_sizes() -> None:
    assert renderer.card_face("5", "D", (37, 91)).shape == (91, 37, 4)
    assert renderer.card_face("5", "D", (91, 37)).shape == (37, 91, 4)


@pytest.mark.parametrize("size", [(300, 300), (224, 224), (448, 300)])
def test_table(size: tuple[int, int]) -> None:
    frame = renderer.table(size)
    assert frame.shape == (size[1], size[0], 3) and frame.dtype == np.uint8
    assert (frame == np.array(renderer.FELT, dtype=np.uint8)).all()
    assert frame.flags.writeable
    frame[0, 0] = 0  # callers own the frame: editing it must not leak into the next one
    assert (renderer.table(size)[0, 0] == renderer.FELT).all()


# --- determinism ---------------------------------------------------------------------------------


def test_rendering_is_deterministic_in_process() -> None:
    size = (67, 93)
    first = {card: renderer.card_face(*card, size).tobytes() for card in SAMPLE}
    back = renderer.card_back(size).tobytes()
    renderer.card_face.cache_clear()
    renderer.card_back.cache_clear()
    assert {card: renderer.card_face(*card, size).tobytes() for card in SAMPLE} == first
    assert renderer.card_back(size).tobytes() == back


def test_rendering_is_deterministic_across_processes() -> None:
    code = (
        "import hashlib\n"
        "from rl4vlm_gym.envs.cards import renderer\n"
        "sha = hashlib.sha256()\n"
        f"for rank, suit in {SAMPLE!r}:\n"
        "    sha.update(renderer.card_face(rank, suit, (135, 189)).tobytes())\n"
        "sha.update(renderer.card_back((135, 189)).tobytes())\n"
        "print(sha.hexdigest())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.strip() == _digest(SAMPLE, (135, 189))


# --- content -------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(67, 93), (40, 56), (135, 189)])
def test_every_card_is_distinct(size: tuple[int, int]) -> None:
    images = {renderer.card_face(rank, suit, size).tobytes() for rank, suit in ALL_CARDS}
    assert len(images) == 52
    assert renderer.card_back(size).tobytes() not in images


@pytest.mark.parametrize("size", [(135, 189), (67, 93), (40, 56)])
@pytest.mark.parametrize("rank", renderer.RANKS)
def test_red_and_black_ink(rank: str, size: tuple[int, int]) -> None:
    for suit in ("D", "H"):
        card = renderer.card_face(rank, suit, size)
        assert _red_pixels(card) > 20, f"{rank}{suit} should be drawn in red ink"
        assert _dark_pixels(card) == 0, f"{rank}{suit} should have no black ink"
    for suit in ("C", "S"):
        card = renderer.card_face(rank, suit, size)
        assert _dark_pixels(card) > 20, f"{rank}{suit} should be drawn in black ink"
        assert _red_pixels(card) == 0, f"{rank}{suit} should have no red ink"


@pytest.mark.parametrize("size", [(135, 189), (67, 93), (40, 56)])
@pytest.mark.parametrize("suit", renderer.SUITS)
def test_ten_is_not_a_court_card(suit: str, size: tuple[int, int]) -> None:
    ten = renderer.card_face("10", suit, size)
    assert _gold_pixels(ten) == 0  # number cards are plain white
    # The top-left quarter holds the index (or the big centred rank on small cards).
    corner = (slice(0, size[1] // 2), slice(0, size[0] // 2))
    for court in ("J", "Q", "K"):
        face = renderer.card_face(court, suit, size)
        assert _gold_pixels(face) > 0.05 * size[0] * size[1], f"{court}{suit} lacks its panel"
        assert not np.array_equal(ten[corner], face[corner])


def test_pip_count_matches_rank() -> None:
    # The middle band between the corner indices holds only pips: its ink is proportional to
    # the pip count, so each of 2..10 shows exactly as many (same-sized) pips as its rank.
    size = (135, 189)
    band = (slice(4, -4), slice(round(0.25 * size[0]), round(0.75 * size[0])), slice(0, 3))
    per_pip = [
        np.count_nonzero(renderer.card_face(rank, "S", size)[band].max(axis=-1) < 90) / int(rank)
        for rank in renderer.RANKS[1:10]
    ]
    assert max(per_pip) / min(per_pip) < 1.1, per_pip


def test_index_is_point_symmetric_on_number_cards() -> None:
    # The bottom-right index is the top-left one rotated 180 degrees; pips of a 4 are symmetric.
    card = renderer.card_face("4", "H", (135, 189)).astype(int)
    assert np.abs(card - card[::-1, ::-1]).max() <= 64  # only sub-pixel rounding differs


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("rank", ["T", "1", "11", "a", "", 10, None])
def test_bad_rank(rank: object) -> None:
    with pytest.raises(ValueError, match=r"rank must be one of A, 2, .*10, J, Q, K"):
        renderer.card_face(rank, "H", (67, 93))  # type: ignore[arg-type]


@pytest.mark.parametrize("suit", ["X", "h", "hearts", "", None])
def test_bad_suit(suit: object) -> None:
    with pytest.raises(ValueError, match=r"suit must be one of C, D, H, S"):
        renderer.card_face("A", suit, (67, 93))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "size", [(15, 40), (40, 15), (0, 0), (-67, 93), (67.5, 93), (67,), (67, 93, 1), "67x93"]
)
def test_bad_size(size: object) -> None:
    with pytest.raises(ValueError, match=r"size must be a \(width, height\) pair .*>= 16"):
        renderer.card_face("A", "S", size)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"size must be a \(width, height\) pair"):
        renderer.card_back(size)  # type: ignore[arg-type]


def test_smallest_size_renders() -> None:
    assert renderer.card_face("10", "D", (16, 16)).shape == (16, 16, 4)


@pytest.mark.parametrize("size", [(0, 10), (10, -1), "big", (3,)])
def test_bad_table_size(size: object) -> None:
    with pytest.raises(ValueError, match="size must be a"):
        renderer.table(size)  # type: ignore[arg-type]


def test_paste_rejects_bad_arrays() -> None:
    card = renderer.card_face("A", "S", (40, 56))
    with pytest.raises(ValueError, match=r"frame must be uint8\[H, W, 3\]"):
        renderer.paste(np.zeros((50, 50, 4), np.uint8), card, (0, 0))
    with pytest.raises(ValueError, match=r"frame must be uint8\[H, W, 3\]"):
        renderer.paste(np.zeros((50, 50, 3), np.float32), card, (0, 0))
    with pytest.raises(ValueError, match=r"card_rgba must be uint8\[h, w, 4\]"):
        renderer.paste(renderer.table((50, 50)), card[..., :3], (0, 0))


# --- paste ---------------------------------------------------------------------------------------


def _textured_frame(width: int, height: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    "xy",
    [(10, 10), (0, 0), (-20, -30), (250, 240), (-60, 150), (200, -100), (165, 111), (300, 0),
     (0, 300), (-135, 0), (-500, -500)],
)
def test_paste_matches_reference_with_clipping(xy: tuple[int, int]) -> None:
    card = renderer.card_face("Q", "H", (135, 189))
    frame = _textured_frame(300, 300)
    expected = _reference_paste(frame, card, xy)
    renderer.paste(frame, card, xy)
    np.testing.assert_array_equal(frame, expected)


def test_paste_fully_outside_leaves_frame_untouched() -> None:
    frame = renderer.table((100, 100))
    for xy in [(100, 0), (0, 100), (-40, 0), (0, -56), (1000, 1000)]:
        renderer.paste(frame, renderer.card_face("2", "C", (40, 56)), xy)
    assert (frame == np.array(renderer.FELT, dtype=np.uint8)).all()


def test_paste_onto_frame_view_and_generic_cards() -> None:
    card = renderer.card_back((70, 98))
    fast, generic = _textured_frame(200, 150), _textured_frame(200, 150)
    renderer.paste(fast, card, (30, 20))
    # A writable copy or a non-contiguous array takes the generic path: same pixels.
    renderer.paste(generic, card.copy(), (30, 20))
    np.testing.assert_array_equal(fast, generic)
    view = _textured_frame(200, 150)
    renderer.paste(view[10:, 10:], np.asfortranarray(card), (20, 10))
    np.testing.assert_array_equal(view, fast)


def test_paste_keeps_transparent_corners_and_card_intact() -> None:
    card = renderer.card_face("9", "S", (67, 93))
    before = card.copy()
    frame = renderer.table((100, 120))
    renderer.paste(frame, card, (5, 5))
    assert tuple(frame[5, 5]) == renderer.FELT  # alpha 0 at the corner keeps the felt
    assert tuple(frame[5 + 46, 5 + 1]) != renderer.FELT  # the card's left edge is drawn
    np.testing.assert_array_equal(card, before)


# --- caching -------------------------------------------------------------------------------------


def test_cache_returns_shared_read_only_arrays() -> None:
    face = renderer.card_face("10", "S", (67, 93))
    assert renderer.card_face("10", "S", (67, 93)) is face
    assert renderer.card_back((67, 93)) is renderer.card_back((67, 93))
    for card in (face, renderer.card_back((67, 93))):
        assert not card.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            card[0, 0, 0] = 1
        with pytest.raises(ValueError):
            card.flags.writeable = True  # the cache cannot be unlocked and corrupted
    frame = renderer.table((80, 100))
    renderer.paste(frame, face, (5, 5))  # read-only cards paste fine
