"""Extrema-preserving downsampling: spikes, gaps, budgets, spectrogram averaging."""

from __future__ import annotations

import numpy as np
import pytest

from xhelio.render.downsample import bucket_mean_columns, downsample_line, minmax_indices


def _gaps_between_kept(values: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Reference (slow, obvious) answer: is there a non-finite sample between kept pairs."""
    bad = ~np.isfinite(values)
    flags = np.zeros(indices.size, dtype=bool)
    for k in range(indices.size - 1):
        flags[k] = bool(bad[indices[k] + 1 : indices[k + 1]].any())
    return flags


def test_single_sample_spike_survives_heavy_reduction() -> None:
    rng = np.random.default_rng(1)
    values = rng.normal(0.0, 1.0, 1_000_000)
    values[654_321] = 40.0
    values[12_345] = -40.0
    sample = downsample_line(values, 1_000)
    kept = values[sample.indices]
    assert kept.max() == 40.0
    assert kept.min() == -40.0
    assert 654_321 in sample.indices
    assert sample.points <= 1_000


def test_every_bucket_keeps_its_extremes() -> None:
    rng = np.random.default_rng(2)
    values = rng.normal(size=10_000)
    indices = minmax_indices(values, 100)
    for bucket in values.reshape(100, 100):
        assert bucket.max() in values[indices]
        assert bucket.min() in values[indices]


def test_first_and_last_samples_are_kept_for_full_span() -> None:
    values = np.sin(np.linspace(0, 50, 100_001))
    sample = downsample_line(values, 500)
    assert sample.indices[0] == 0
    assert sample.indices[-1] == values.size - 1
    assert np.all(np.diff(sample.indices) > 0)


def test_nan_gap_stays_a_gap_exactly_where_data_is_missing() -> None:
    values = np.cos(np.linspace(0, 20, 200_000))
    values[50_000:50_010] = np.nan
    values[150_000:170_000] = np.nan
    values[199_000:] = np.nan
    sample = downsample_line(values, 2_000)
    assert np.isfinite(values[sample.indices]).all()
    expected = _gaps_between_kept(values, sample.indices)
    np.testing.assert_array_equal(sample.gap_after, expected)
    assert sample.gap_after.sum() == 2  # the trailing NaNs come after the last kept sample


def test_short_series_keeps_every_finite_sample_and_marks_gaps() -> None:
    values = np.array([1.0, 2.0, np.nan, np.nan, 5.0, np.inf, 7.0])
    sample = downsample_line(values, 100)
    np.testing.assert_array_equal(sample.indices, [0, 1, 4, 6])
    np.testing.assert_array_equal(sample.gap_after, [False, True, True, False])
    assert sample.points == 6


@pytest.mark.parametrize("n", [10, 9_999, 100_003, 1_000_000])
@pytest.mark.parametrize("budget", [50, 1_001, 25_000])
def test_never_exceeds_budget(n: int, budget: int) -> None:
    rng = np.random.default_rng(n + budget)
    values = rng.normal(size=n)
    values[rng.random(n) < 0.01] = np.nan
    sample = downsample_line(values, budget)
    assert sample.points <= max(budget, 4)
    np.testing.assert_array_equal(sample.gap_after, _gaps_between_kept(values, sample.indices))


def test_budget_holds_even_when_gaps_are_everywhere() -> None:
    values = np.arange(100_000, dtype=float)
    values[::2] = np.nan  # every other sample missing: a worst case for gap markers
    sample = downsample_line(values, 1_000)
    assert sample.points <= 1_000
    assert values[sample.indices].max() == np.nanmax(values)


def test_all_nan_series_sends_nothing() -> None:
    sample = downsample_line(np.full(100_000, np.nan), 1_000)
    assert sample.indices.size == 0
    assert sample.points == 0


def test_integer_input_is_accepted() -> None:
    values = np.arange(1_000_000, dtype=np.int64) % 977
    sample = downsample_line(values.astype(float), 3_000)
    assert values[sample.indices].max() == 976
    assert values[sample.indices].min() == 0


def test_bucket_mean_columns_averages_and_ignores_nan() -> None:
    values = np.arange(20, dtype=float).reshape(10, 2)
    values[2, 0] = np.nan
    values[8:, 1] = np.nan
    means, starts, stops = bucket_mean_columns(values, 3)
    np.testing.assert_array_equal(starts, [0, 4, 8])
    np.testing.assert_array_equal(stops, [3, 7, 9])
    assert means[0, 0] == pytest.approx((0 + 2 + 6) / 3)
    assert means[1, 1] == pytest.approx((9 + 11 + 13 + 15) / 4)
    assert np.isnan(means[2, 1])  # a bucket with no finite value is NaN, without warnings
    assert means[2, 0] == pytest.approx((16 + 18) / 2)
