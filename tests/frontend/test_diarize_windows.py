"""Which CAM++ windows of the diarizer are embedded and which borrow another chunk's vector."""

import numpy as np

from speechannotator.frontend.diarize import _shared

NO_TAIL = np.full(300, -1)


def _frames(a: float, b: float) -> np.ndarray:
    """fbank frames (10 ms) of [a, b) seconds."""
    return np.arange(int(round(a * 100)), int(round(b * 100)), dtype=np.int32)


def test_a_stretch_two_chunks_hear_is_embedded_once_by_the_chunk_that_hears_it_centrally():
    starts = np.array([0.0, 5.0])  # chunk centres at 5 and 10 s: 7.5 s is the border
    spans = [
        (0, 6.0, 7.5),  # chunk 0, centre 6.75: its own
        (1, 6.1, 7.6),  # chunk 1, the same stretch off-centre: 93 % of its frames in the first
        (1, 8.0, 9.5),  # chunk 1, centre 8.75: its own
        (0, 8.1, 8.6),  # chunk 0, off-centre: only 0.5 s of its 1 s inside chunk 1's window
        (0, 8.0, 9.0),  # chunk 0, off-centre, 1 s inside chunk 1's window
        (1, 3.0, 4.5),  # chunk 1, off-centre; chunk 0 has no window there: embedded
    ]
    chunk = np.array([c for c, _, _ in spans])
    centre = np.array([(a + b) / 2 for _, a, b in spans])
    sel = [_frames(a, b) for _, a, b in spans]
    sel[3] = np.concatenate([_frames(7.5, 8.0), _frames(8.1, 8.6)])
    src = _shared(starts, chunk, centre, sel, NO_TAIL[:6], 0.5)
    assert src.tolist() == [0, 0, 2, 2, 2, 5]
    # A stricter share embeds the half-covered window itself; None embeds every window.
    assert _shared(starts, chunk, centre, sel, NO_TAIL[:6], 0.9).tolist() == [0, 0, 2, 3, 2, 5]
    assert _shared(starts, chunk, centre, sel, NO_TAIL[:6], None).tolist() == list(range(6))


def test_no_vector_is_borrowed_from_a_window_that_borrows():
    rng = np.random.default_rng(0)
    starts = np.arange(0.0, 60.0, 5.0)
    chunk = rng.integers(0, len(starts), 300)
    a = starts[chunk] + rng.uniform(0, 8.5, 300)
    sel = [_frames(x, x + 1.5) for x in a]
    src = _shared(starts, chunk, a + 0.75, sel, NO_TAIL, 0.5)
    borrowed = src != np.arange(len(src))
    assert borrowed.any() and not borrowed[src].any()
    # The source is in another chunk and holds at least half of the window's frames.
    for i in np.flatnonzero(borrowed):
        assert chunk[src[i]] != chunk[i]
        assert np.isin(sel[i], sel[src[i]]).mean() >= 0.5


def test_a_runs_extra_last_window_borrows_the_one_before_it():
    # One run of 2.4 s in chunk 0: windows at 0, 0.75 and the extra one flush with its end at
    # 0.9 (1.35 s of its 1.5 s inside the one before). A run of one chunk 1 window, off-centre in
    # chunk 0's region, and its extra last window: both take chunk 0's vector.
    starts = np.array([0.0, 5.0])
    spans = [(0, 0.0, 1.5), (0, 0.75, 2.25), (0, 0.9, 2.4), (1, 5.0, 6.5), (1, 5.3, 6.8), (0, 5.1, 6.6)]
    chunk = np.array([c for c, _, _ in spans])
    centre = np.array([(a + b) / 2 for _, a, b in spans])
    sel = [_frames(a, b) for _, a, b in spans]
    tail_of = np.array([-1, -1, 1, -1, 3, -1])
    assert _shared(starts, chunk, centre, sel, tail_of, 0.5).tolist() == [0, 1, 1, 5, 5, 5]
    # Holding under `share` of its frames, it is embedded.
    assert _shared(starts, chunk, centre, sel, tail_of, 0.95).tolist() == [0, 1, 2, 3, 4, 5]
