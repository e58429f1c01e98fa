"""Legitimate analysis code runs in the sandbox and returns exactly what pandas would."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd
import pytest
import pywt
import scipy.signal
import xarray as xr

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor, SandboxResult


def _frame(outcome: SandboxResult) -> pd.DataFrame:
    assert isinstance(outcome.value, pd.DataFrame)
    return outcome.value


def _scalar(outcome: SandboxResult) -> float | int | str | bool | None:
    assert outcome.kind == "scalar"
    assert not isinstance(outcome.value, pd.DataFrame | xr.DataArray)
    return outcome.value


def _total(frame: pd.DataFrame, column: str) -> float:
    return float(np.sum(frame[column].to_numpy()))


@pytest.fixture(scope="module")
def executor() -> Iterator[SandboxExecutor]:
    settings = replace(Settings(), sandbox_timeout_s=60.0)
    with SandboxExecutor(settings, max_stdout_chars=1_000) as sandbox:
        yield sandbox


@pytest.fixture
def field() -> pd.DataFrame:
    """Three field components at 1-minute cadence, tz-aware UTC, with a NaN gap."""
    index = pd.date_range("2024-01-01", periods=240, freq="1min", tz="UTC")
    rng = np.random.default_rng(42)
    frame = pd.DataFrame(rng.normal(5, 2, size=(240, 3)), index=index, columns=["bx", "by", "bz"])
    frame.iloc[17, 1] = np.nan
    return frame


def test_magnitude(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    outcome = executor.run("result = np.sqrt((df ** 2).sum(axis=1, skipna=False))", {"b": field})
    assert outcome.kind == "series"
    assert isinstance(outcome.value, pd.DataFrame)
    expected = pd.DataFrame(
        {"value": np.sqrt((field.to_numpy() ** 2).sum(axis=1))}, index=field.index
    )
    pd.testing.assert_frame_equal(outcome.value, expected)
    assert np.isnan(outcome.value.iloc[17, 0])


def test_rolling_mean_with_time_window(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    outcome = executor.run("result = df.rolling('10min').mean()", {"b": field})
    expected = cast(pd.DataFrame, field.rolling("10min").mean())
    pd.testing.assert_frame_equal(_frame(outcome), expected)


def test_resample(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    outcome = executor.run("result = df.resample('1h').mean()", {"b": field})
    pd.testing.assert_frame_equal(_frame(outcome), cast(pd.DataFrame, field.resample("1h").mean()))


def test_derivative_over_seconds(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    code = (
        "seconds = (df.index - df.index[0]).total_seconds().to_numpy()\n"
        "result = pd.Series(np.gradient(df['bx'].to_numpy(), seconds), index=df.index,"
        " name='dbx_dt')"
    )
    outcome = executor.run(code, {"b": field})
    seconds = (field.index - field.index[0]).total_seconds().to_numpy()
    expected = np.gradient(field["bx"].to_numpy(), seconds)
    assert list(outcome.value.columns) == ["dbx_dt"]  # type: ignore[union-attr]
    np.testing.assert_allclose(outcome.value["dbx_dt"].to_numpy(), expected)  # type: ignore[index]


def test_ratio_of_two_sources_aligned_in_time(
    executor: SandboxExecutor, field: pd.DataFrame
) -> None:
    other_index = pd.date_range("2024-01-01 00:00:30", periods=120, freq="2min", tz="UTC")
    other = pd.DataFrame({"n": np.linspace(1, 10, 120)}, index=other_index)
    code = (
        "aligned = sources['wind'].reindex(df.index, method='nearest')\n"
        "result = df['bx'] / aligned['n']"
    )
    outcome = executor.run(code, {"ace": field, "wind": other})
    aligned = other.reindex(field.index, method="nearest")
    expected = (field["bx"] / aligned["n"]).to_frame("value")
    pd.testing.assert_frame_equal(outcome.value, expected)  # type: ignore[arg-type]


def test_butterworth_filtfilt(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    code = (
        "b, a = scipy.signal.butter(4, 0.1)\n"
        "clean = df.interpolate()\n"
        "result = pd.DataFrame(scipy.signal.filtfilt(b, a, clean.to_numpy(), axis=0),"
        " index=df.index, columns=df.columns)"
    )
    outcome = executor.run(code, {"b": field})
    b, a = cast(tuple[np.ndarray, np.ndarray], scipy.signal.butter(4, 0.1))
    clean = field.interpolate()
    expected = scipy.signal.filtfilt(b, a, clean.to_numpy(), axis=0)
    np.testing.assert_allclose(outcome.value.to_numpy(), expected)  # type: ignore[union-attr]


def test_wavelet_decomposition(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    code = (
        "coeffs = pywt.wavedec(df['bz'].to_numpy(copy=True), 'db4', level=3)\n"
        "result = pd.Series([float((c ** 2).sum()) for c in coeffs],"
        " index=['a3', 'd3', 'd2', 'd1'], name='energy')"
    )
    outcome = executor.run(code, {"b": field})
    coeffs = pywt.wavedec(field["bz"].to_numpy(copy=True), "db4", level=3)
    expected = [float((c**2).sum()) for c in coeffs]
    np.testing.assert_allclose(outcome.value["energy"].to_numpy(), expected)  # type: ignore[index]
    assert list(outcome.value.index) == ["a3", "d3", "d2", "d1"]  # type: ignore[union-attr]


def test_two_dimensional_dataarray_in_and_out(executor: SandboxExecutor) -> None:
    times = pd.date_range("2024-01-01", periods=30, freq="10s")
    energies = np.array([10.0, 20.0, 40.0, 80.0])
    flux = xr.DataArray(
        np.arange(120.0).reshape(30, 4) + 1,
        dims=("time", "energy"),
        coords={"time": times, "energy": energies},
        name="flux",
        attrs={"units": "1/(cm2 s sr keV)"},
    )
    flux.coords["energy"].attrs["units"] = "keV"
    outcome = executor.run("result = np.log10(df) * 2", {"flux": flux})
    assert outcome.kind == "dataarray"
    expected = np.log10(flux) * 2
    assert isinstance(outcome.value, xr.DataArray)
    xr.testing.assert_allclose(outcome.value, expected)
    assert outcome.value.dims == ("time", "energy")
    assert outcome.value.dtype == np.float64
    # Bin units (DEPEND_1) survive the trip in and out, and units set inside do too.
    assert outcome.value.coords["energy"].attrs["units"] == "keV"
    made = executor.run(
        "result = df.mean('energy').expand_dims(f=[1.0, 2.0], axis=1)\n"
        "result.coords['f'].attrs['units'] = 'Hz'",
        {"flux": flux},
    )
    assert isinstance(made.value, xr.DataArray)
    assert made.value.coords["f"].attrs["units"] == "Hz"


def test_scalar_results(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    outcome = executor.run("result = df['bx'].max()", {"b": field})
    assert outcome.kind == "scalar"
    assert _scalar(outcome) == pytest.approx(float(np.max(field["bx"].to_numpy())))
    assert _scalar(executor.run("result = len(df)", {"b": field})) == 240
    assert _scalar(executor.run("result = 'quiet'", {"b": field})) == "quiet"
    peak = executor.run("result = df['bx'].idxmax()", {"b": field}).value
    assert peak == field.index[int(np.argmax(field["bx"].to_numpy()))].isoformat()


def test_tz_aware_index_and_nan_preserved_exactly(
    executor: SandboxExecutor, field: pd.DataFrame
) -> None:
    outcome = executor.run("result = df", {"b": field})
    assert isinstance(outcome.value, pd.DataFrame)
    pd.testing.assert_frame_equal(outcome.value, field)
    returned_index = outcome.value.index
    assert isinstance(returned_index, pd.DatetimeIndex)
    assert isinstance(field.index, pd.DatetimeIndex)
    assert str(returned_index.tz) == "UTC"
    assert returned_index.freq == field.index.freq
    assert outcome.value.isna().to_numpy().sum() == 1


def test_stdout_is_captured_and_truncated(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    outcome = executor.run("print('hello')\nresult = 1", {"b": field})
    assert outcome.stdout == "hello\n"
    assert not outcome.stdout_truncated
    flood = executor.run("print('y' * 5000)\nresult = 1", {"b": field})
    assert flood.stdout_truncated
    assert len(flood.stdout) == 1_000


def test_warnings_are_reported(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    outcome = executor.run("result = float(np.log(-1.0))", {"b": field})
    assert np.isnan(outcome.value)  # type: ignore[arg-type]
    assert any("invalid value" in w for w in outcome.warnings)


def test_warm_worker_is_reused(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    executor.run("result = 1", {"b": field})
    pid = executor.worker_pid
    for _ in range(3):
        executor.run("result = df * 2", {"b": field})
    assert executor.worker_pid == pid


def test_runtime_error_names_line_and_type(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run("x = 1\ny = 2\nresult = df['nope']", {"b": field})
    assert info.value.category == "runtime"
    assert "line 3" in info.value.message
    assert "KeyError" in info.value.message


def test_unsupported_result_types_are_explained(
    executor: SandboxExecutor, field: pd.DataFrame
) -> None:
    with pytest.raises(SandboxError, match="wrap arrays") as info:
        executor.run("result = df.to_numpy()", {"b": field})
    assert info.value.category == "output"
    with pytest.raises(SandboxError, match="Dataset") as info:
        executor.run("result = df.to_xarray()", {"b": field})
    with pytest.raises(SandboxError, match="without assigning") as info:
        executor.run_without_validation("x = 1", {"b": field})
    assert info.value.category == "output"


def test_result_size_cap(field: pd.DataFrame) -> None:
    with SandboxExecutor(Settings(), max_result_bytes=100_000) as sandbox:
        with pytest.raises(SandboxError) as info:
            sandbox.run("result = pd.DataFrame({'a': np.zeros(10 ** 6)})", {"b": field})
        assert info.value.category == "output"
        assert _scalar(sandbox.run("result = len(df)", {"b": field})) == 240


def test_library_tampering_never_reaches_the_next_call(
    executor: SandboxExecutor, field: pd.DataFrame
) -> None:
    tamper = "cls = type(df)\ncls.sum = lambda self, *a, **k: 0\nresult = 1"
    assert _scalar(executor.run(tamper, {"b": field})) == 1
    outcome = executor.run("result = float(df['bx'].sum())", {"b": field})
    assert _scalar(outcome) == pytest.approx(_total(field, "bx"))


def test_bad_sources_are_rejected_before_running(executor: SandboxExecutor) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run("result = 1", {"x": [1, 2, 3]})  # type: ignore[dict-item]
    assert info.value.category == "input"


def test_concurrent_calls_are_serialised(executor: SandboxExecutor, field: pd.DataFrame) -> None:
    results: list[object] = []

    def call(k: int) -> None:
        results.append(executor.run(f"result = float(df['bx'].sum() * {k})", {"b": field}).value)

    threads = [threading.Thread(target=call, args=(k,)) for k in range(1, 5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = _total(field, "bx")
    assert sorted(results) == pytest.approx(sorted(total * k for k in range(1, 5)))  # type: ignore[arg-type]


def test_closed_executor_refuses(field: pd.DataFrame) -> None:
    sandbox = SandboxExecutor(Settings())
    sandbox.close()
    with pytest.raises(SandboxError, match="closed"):
        sandbox.run("result = 1", {"b": field})


def test_real_omni_data(executor: SandboxExecutor, real_data: Path) -> None:
    """Real hourly OMNI solar wind: a 1-day rolling mean and dynamic pressure match pandas."""
    frame = pd.read_csv(real_data / "omni_hourly_1999-07_2001-10.csv", index_col="Time")
    frame.index = pd.to_datetime(frame.index, utc=True)
    code = (
        "pdyn = 1.6726e-6 * df['dens'] * df['velo'] ** 2\n"
        "result = pd.DataFrame({'pdyn': pdyn, 'v_1d': df['velo'].rolling('1D').mean()})"
    )
    outcome = executor.run(code, {"omni": frame})
    expected = pd.DataFrame(
        {
            "pdyn": 1.6726e-6 * frame["dens"] * frame["velo"] ** 2,
            "v_1d": frame["velo"].rolling("1D").mean(),
        }
    )
    pd.testing.assert_frame_equal(outcome.value, expected)  # type: ignore[arg-type]
    assert len(expected) == 20_002
