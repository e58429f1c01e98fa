"""Extrema-preserving downsampling of long series and spectrograms for the browser.

Lines use min-max per bucket (vectorised numpy): the series is cut into equal-count
buckets and each bucket keeps its smallest and largest finite sample, plus the first and
last finite samples of the series. With the default budget a figure 1,100 px wide gets
more than twenty buckets per pixel column, so the drawn line is indistinguishable from
the full series, and every spike, the global minimum and the global maximum survive by
construction (a stride or an average would drop a one-sample spike). Non-finite samples
(NaN fill values, +-inf) are gaps: wherever the original series has a gap between two
kept samples, a gap marker is inserted so the line is never drawn across missing data.

Why not `tsdownsample` (a Rust MinMax/MinMaxLTTB library): it is faster, but its NaN
variant returns the NaN itself as a bucket's min and max, which drops the valid extrema
of any bucket touching a gap; gap-exact output needs the marker logic here anyway.
`plotly-resampler` needs a live Dash server per figure, which is not our architecture.

Spectrograms are averaged over equal-count time buckets (NaN-aware): a colour image
shows flux per time bin, where a bucket maximum would bias the whole image bright.

Imports nothing from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "LineSample",
    "bucket_mean_columns",
    "downsample_line",
    "minmax_indices",
]

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.int64]

# Each retry shrinks the bucket count so that inserted gap markers fit the budget too.
_MAX_GAP_RETRIES = 4


@dataclass(frozen=True)
class LineSample:
    """Which samples of a series to send, and where gap markers go.

    `indices` are sorted positions into the original arrays. `gap_after[k]` is True when
    the original series has non-finite samples between `indices[k]` and `indices[k+1]`:
    the renderer then inserts a null point there so the line breaks.
    """

    indices: IndexArray
    gap_after: npt.NDArray[np.bool_]

    @property
    def points(self) -> int:
        """Number of points sent, gap markers included."""
        return int(self.indices.size + np.count_nonzero(self.gap_after))

    def positions(self) -> tuple[IndexArray, npt.NDArray[np.bool_]]:
        """Source positions to send, gap markers included, and which ones are markers.

        A marker reuses the position right after its kept sample (inside the gap, so its
        x lies in the gap); the caller sends it with a null y, which breaks the line.
        """
        markers = np.flatnonzero(self.gap_after)
        positions = np.insert(self.indices, markers + 1, self.indices[markers] + 1)
        is_marker = np.zeros(positions.size, dtype=np.bool_)
        is_marker[markers + np.arange(1, markers.size + 1)] = True
        return positions.astype(np.int64, copy=False), is_marker


def minmax_indices(values: FloatArray, buckets: int) -> IndexArray:
    """Return sorted indices of each equal-count bucket's finite min and max.

    The first and last finite samples are always included so the line spans the full
    range. Non-finite samples are never selected.
    """
    finite = np.isfinite(values)
    return _minmax_indices(values, buckets, finite, np.flatnonzero(~finite))


def _minmax_indices(
    values: FloatArray, buckets: int, finite: npt.NDArray[np.bool_], gap_positions: IndexArray
) -> IndexArray:
    n = int(values.size)
    if n == 0 or not finite.any():
        return np.empty(0, dtype=np.int64)
    buckets = max(1, min(buckets, n))
    size = -(-n // buckets)  # ceil division
    full = n // size
    # Full buckets are rows of a reshaped view, so the common no-gap case never copies
    # the caller's array; only the short last bucket and rows with gaps are copied.
    grid = values[: full * size].reshape(full, size)
    lows = grid.argmin(axis=1).astype(np.int64)
    highs = grid.argmax(axis=1).astype(np.int64)
    gap_rows = np.unique(gap_positions // size)
    gap_rows = gap_rows[gap_rows < full]
    if gap_rows.size:
        lows[gap_rows], highs[gap_rows] = _finite_argext(grid[gap_rows])
    offsets = np.arange(full, dtype=np.int64) * size
    picks = [lows + offsets, highs + offsets, _first_last_finite(finite)]
    if full * size < n:
        tail_low, tail_high = _finite_argext(values[full * size :].reshape(1, -1))
        picks.append(np.concatenate([tail_low, tail_high]) + full * size)
    chosen = np.unique(np.concatenate(picks))
    # A bucket with no finite sample yields a non-finite pick; drop it.
    return chosen[finite[chosen]].astype(np.int64, copy=False)


def _finite_argext(block: FloatArray) -> tuple[IndexArray, IndexArray]:
    """Row-wise argmin and argmax of a (rows, size) block ignoring non-finite samples."""
    work = np.array(block, dtype=np.float64, copy=True)
    bad = ~np.isfinite(work)
    work[bad] = np.inf
    lows = work.argmin(axis=1).astype(np.int64)
    work[bad] = -np.inf
    highs = work.argmax(axis=1).astype(np.int64)
    return lows, highs


def _first_last_finite(finite: npt.NDArray[np.bool_]) -> IndexArray:
    """Positions of the first and last finite samples (argmax stops at the first True)."""
    first = int(finite.argmax())
    last = int(finite.size - 1 - finite[::-1].argmax())
    return np.array([first, last], dtype=np.int64)


def _gaps_between(indices: IndexArray, gap_positions: IndexArray) -> npt.NDArray[np.bool_]:
    """For each kept index, whether a non-finite sample lies before the next kept one."""
    if indices.size == 0:
        return np.zeros(0, dtype=np.bool_)
    if gap_positions.size == 0:
        return np.zeros(indices.size, dtype=np.bool_)
    gaps_before = np.searchsorted(gap_positions, indices)
    gap_after = np.zeros(indices.size, dtype=np.bool_)
    gap_after[:-1] = np.diff(gaps_before) > 0
    return gap_after


def downsample_line(values: FloatArray, max_points: int) -> LineSample:
    """Choose at most about `max_points` samples (gap markers included) of a series.

    A series already within budget keeps every sample; its non-finite samples become gap
    markers. Longer series are reduced with `minmax_indices`.
    """
    values = np.asarray(values, dtype=np.float64)
    max_points = max(4, int(max_points))
    finite = np.isfinite(values)
    gap_positions = np.flatnonzero(~finite).astype(np.int64)
    if values.size <= max_points:
        kept = np.flatnonzero(finite).astype(np.int64)
        return LineSample(kept, _gaps_between(kept, gap_positions))
    buckets = max(1, (max_points - 2) // 2)
    sample = LineSample(np.empty(0, dtype=np.int64), np.zeros(0, dtype=np.bool_))
    for _ in range(_MAX_GAP_RETRIES):
        kept = _minmax_indices(values, buckets, finite, gap_positions)
        sample = LineSample(kept, _gaps_between(kept, gap_positions))
        if sample.points <= max_points or buckets == 1:
            return sample
        buckets = max(1, int(buckets * max_points / sample.points * 0.95))
    return sample


def bucket_mean_columns(
    values: FloatArray, columns: int
) -> tuple[FloatArray, IndexArray, IndexArray]:
    """Average rows of a (time, bins) array into at most `columns` equal-count buckets.

    Returns the (buckets, bins) means (NaN where a bucket has no finite value) and each
    bucket's first and last row index, so callers can place the bucket in time.
    """
    values = np.asarray(values, dtype=np.float64)
    n = int(values.shape[0])
    columns = max(1, min(int(columns), n))
    size = -(-n // columns)
    starts = np.arange(0, n, size, dtype=np.int64)
    stops = np.minimum(starts + size, n) - 1
    finite = np.isfinite(values)
    sums = np.add.reduceat(np.where(finite, values, 0.0), starts, axis=0)
    counts = np.add.reduceat(finite.astype(np.int64), starts, axis=0)
    means = np.full(sums.shape, np.nan)
    np.divide(sums, counts, out=means, where=counts > 0)
    return means, starts, stops
