"""CDF reading checked against cdflib's own reading of real and generated files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cdflib
import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest
from cdflib import cdfepoch
from cdflib.cdfwrite import CDF as CdfWriter

from servers.cdas_server import CdfVariable, write_istp_cdf
from xhelio.errors import ServerError, UnknownParameterError, UserError
from xhelio.sources import cdf_reader
from xhelio.sources.cdf_reader import describe_cdf, epochs_to_utc, read_cdf_parameters

PSP = "psp_fld_l2_mag_rtn_1min_20200104_v02.cdf"
ACE = "ac_k2_mfi_20220101_v03.cdf"
DE2 = "de2_ion2s_rpa_19830213_v01.cdf"
TT2000_FILL = np.int64(-9223372036854775808)


def varget(cdf: cdflib.CDF, name: str) -> npt.NDArray[Any]:
    """A variable as cdflib reads it, typed as an array."""
    return np.asarray(cdf.varget(name))


def naive_times(frame: pd.DataFrame) -> npt.NDArray[np.datetime64]:
    """The frame's UTC index as naive datetime64, the form cdflib returns."""
    return pd.DatetimeIndex(frame.index).tz_convert(None).to_numpy()


def expected_values(path: Path, variable: str) -> npt.NDArray[np.float64]:
    """Values as cdflib reads them, NaN where they are FILLVAL (valid ranges are not applied)."""
    cdf = cdflib.CDF(path)
    raw = np.asarray(varget(cdf, variable))
    attrs = cdf.varattsget(variable)
    values = raw.astype(np.float64).reshape(raw.shape[0], -1)
    bad = (raw == attrs["FILLVAL"]).reshape(values.shape)
    values[bad] = np.nan
    return values


def expected_times(path: Path, variable: str) -> pd.DatetimeIndex:
    """The times cdflib itself gives for the variable's DEPEND_0 (fill times dropped)."""
    cdf = cdflib.CDF(path)
    epoch = str(cdf.varattsget(variable)["DEPEND_0"])
    times = cdfepoch.to_datetime(varget(cdf, epoch))
    return pd.DatetimeIndex(times[~np.isnat(times)]).tz_localize("UTC")


def test_psp_tt2000_vector_matches_cdflib(real_data: Path) -> None:
    path = real_data / PSP
    variable = "psp_fld_l2_mag_RTN_1min"
    data = read_cdf_parameters(path, "PSP_FLD_L2_MAG_RTN_1MIN", [variable])[variable]

    assert list(data.frame.columns) == ["B_R", "B_T", "B_N"]
    assert data.frame.index.equals(expected_times(path, variable))
    expected = expected_values(path, variable)
    np.testing.assert_array_equal(data.frame.to_numpy(), expected)
    assert np.isnan(expected).any(), "the PSP file has fill records; they must become NaN"
    assert data.units == "nT"
    assert data.description == "Magnetic field in RTN coordinates (1 minute cadence)"
    assert data.bins is None


def test_ace_cdf_epoch_reads_all_parameters_from_one_open(
    real_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = real_data / ACE
    opened: list[Path] = []
    real_cdf = cdflib.CDF

    def counting_cdf(target: Path, *args: Any, **kwargs: Any) -> cdflib.CDF:
        opened.append(Path(target))
        return real_cdf(target, *args, **kwargs)

    monkeypatch.setattr(cdf_reader.cdflib, "CDF", counting_cdf)
    data = read_cdf_parameters(path, "AC_K2_MFI", ["Magnitude", "BGSEc", "Weight"])
    assert opened == [path]
    monkeypatch.undo()

    for name in ("Magnitude", "BGSEc"):
        assert data[name].frame.index.equals(expected_times(path, name))
        np.testing.assert_array_equal(data[name].frame.to_numpy(), expected_values(path, name))
    assert list(data["BGSEc"].frame.columns) == ["Bx GSE", "By GSE", "Bz GSE"]
    assert data["Magnitude"].frame.index[0] == pd.Timestamp("2022-01-01T00:00:00Z")
    assert len(data["Weight"].frame) == 24


def test_de2_millisecond_epochs_match_cdflib(real_data: Path) -> None:
    path = real_data / DE2
    names = ["ionTemperature", "ionDensity", "x"]
    data = read_cdf_parameters(path, "DE2_ION2S_RPA", names)
    for name in names:
        assert data[name].frame.index.equals(expected_times(path, name))
        np.testing.assert_array_equal(data[name].frame.to_numpy(), expected_values(path, name))
    assert data["ionTemperature"].units == "K"
    assert data["ionDensity"].frame.index[0] == pd.Timestamp("1983-02-13T01:48:52.207Z")


def test_unknown_parameter_lists_data_variables_first(real_data: Path) -> None:
    with pytest.raises(UnknownParameterError) as caught:
        read_cdf_parameters(real_data / ACE, "AC_K2_MFI", ["Magnitude", "Bmag"])
    assert caught.value.available == ["Magnitude", "BGSEc", "Time_PB5", "Weight"]
    assert "'Bmag'" in caught.value.message
    assert "AC_K2_MFI" in caught.value.message
    assert "Magnitude, BGSEc" in caught.value.message


def test_parameter_names_match_case_insensitively(real_data: Path) -> None:
    data = read_cdf_parameters(real_data / ACE, "AC_K2_MFI", ["magnitude"])
    assert data["magnitude"].name == "Magnitude"


def leap_second_file(folder: Path) -> tuple[Path, npt.NDArray[np.int64]]:
    """TT2000 samples every 0.5 s through the leap second at the end of 2016."""
    start = int(cdfepoch.compute_tt2000([2016, 12, 31, 23, 59, 58]))
    raw = start + np.arange(10, dtype=np.int64) * 500_000_000
    raw = np.append(raw, TT2000_FILL)
    values = np.arange(raw.size, dtype=np.float64)
    path = write_istp_cdf(
        folder / "leap.cdf",
        [
            CdfVariable(
                "Epoch",
                CdfWriter.CDF_TIME_TT2000,
                raw,
                {"FILLVAL": [TT2000_FILL, "CDF_TIME_TT2000"]},
            ),
            CdfVariable(
                "count", CdfWriter.CDF_REAL8, values, {"VAR_TYPE": "data", "DEPEND_0": "Epoch"}
            ),
        ],
    )
    return path, raw


def test_tt2000_leap_second_times(tmp_path: Path) -> None:
    path, raw = leap_second_file(tmp_path)
    frame = read_cdf_parameters(path, "LEAP", ["count"])["count"].frame
    breakdown = np.asarray(cdfepoch.breakdown_tt2000(raw[:-1]))
    in_leap = breakdown[:, 5] == 60
    assert in_leap.sum() == 2, "two samples fall inside 2016-12-31T23:59:60"

    cdflib_times = cdfepoch.to_datetime(raw[:-1])
    times = naive_times(frame)
    # Outside the leap second: exactly cdflib's conversion.
    np.testing.assert_array_equal(times[~in_leap], cdflib_times[~in_leap])
    # Inside it: the last representable instant of 2016, not a copy of 2017's first second.
    assert (times[in_leap] == np.datetime64("2016-12-31T23:59:59.999999999")).all()
    assert frame.index.is_monotonic_increasing
    # The fill epoch is dropped and the value column follows the kept rows.
    assert len(frame) == raw.size - 1
    np.testing.assert_array_equal(frame["count"].to_numpy(), np.arange(raw.size - 1))
    # Two SI seconds of TT2000 pass between 23:59:59 and 00:00:00 UTC: leap seconds applied.
    midnight = times[breakdown[:, 0] == 2017][0]
    assert midnight == np.datetime64("2017-01-01T00:00:00")
    one_before = times[(breakdown[:, 5] == 59) & (breakdown[:, 6] == 0)][0]
    assert midnight - one_before == np.timedelta64(1, "s")


def test_epoch_and_epoch16_times_match_cdflib(tmp_path: Path) -> None:
    epoch = np.array(
        [cdfepoch.compute_epoch([2001, 3, 4, 5, 6, s, 250]) for s in range(4)] + [-1e31]
    )
    epoch16 = np.array(
        [cdfepoch.compute_epoch16([2001, 3, 4, 5, 6, s, 1, 2, 3, 4]) for s in range(4)]
    )
    path = write_istp_cdf(
        tmp_path / "epochs.cdf",
        [
            CdfVariable("Epoch", CdfWriter.CDF_EPOCH, epoch, {"FILLVAL": [-1e31, "CDF_EPOCH"]}),
            CdfVariable("Epoch16", CdfWriter.CDF_EPOCH16, epoch16),
            CdfVariable(
                "a", CdfWriter.CDF_REAL8, np.arange(5.0), {"VAR_TYPE": "data", "DEPEND_0": "Epoch"}
            ),
            CdfVariable(
                "b",
                CdfWriter.CDF_REAL8,
                np.arange(4.0),
                {"VAR_TYPE": "data", "DEPEND_0": "Epoch16"},
            ),
        ],
    )
    data = read_cdf_parameters(path, "EPOCHS", ["a", "b"])
    cdf = cdflib.CDF(path)
    expected_a = cdfepoch.to_datetime(varget(cdf, "Epoch"))[:4]
    np.testing.assert_array_equal(naive_times(data["a"].frame), expected_a)
    expected_b = cdfepoch.to_datetime(varget(cdf, "Epoch16"))
    np.testing.assert_array_equal(naive_times(data["b"].frame), expected_b)
    assert data["a"].frame.index[1] == pd.Timestamp("2001-03-04T05:06:01.250Z")
    assert data["b"].frame.index[2] == pd.Timestamp("2001-03-04T05:06:02.001002003Z")


def test_epoch_and_epoch16_conversion_equals_cdflib_on_random_values() -> None:
    rng = np.random.default_rng(20240601)
    low = cdfepoch.compute_epoch([1850, 1, 1])
    high = cdfepoch.compute_epoch([2300, 1, 1])
    epoch = rng.uniform(low, high, 4000)
    epoch[:1000] = np.round(epoch[:1000])  # whole milliseconds, as most files hold
    epoch[1000:1100] = np.floor(epoch[1000:1100] / 1000) * 1000 + 999.9999  # second edges
    epoch[1100:1103] = [-1e31, 0.0, np.nan]  # fill, pad, NaN
    np.testing.assert_array_equal(epochs_to_utc(epoch, "CDF_EPOCH"), cdfepoch.to_datetime(epoch))

    seconds = np.floor(rng.uniform(low / 1000, high / 1000, 4000))
    picoseconds = np.floor(rng.uniform(0, 1e12, 4000))
    picoseconds[:100] = 999_999_999_999.0
    epoch16 = seconds + 1j * picoseconds
    epoch16[100:102] = [complex(-1e31, -1e31), 0j]
    np.testing.assert_array_equal(
        epochs_to_utc(epoch16, "CDF_EPOCH16"), cdfepoch.to_datetime(epoch16)
    )


def test_epochs_to_utc_rejects_non_epoch_types() -> None:
    with pytest.raises(ValueError, match="CDF_DOUBLE"):
        epochs_to_utc(np.array([1.0]), "CDF_DOUBLE")


def fill_and_range_file(folder: Path) -> Path:
    """Scalar and vector with FILLVAL, scalar and per-component VALIDMIN/VALIDMAX."""
    t0 = int(cdfepoch.compute_tt2000([2020, 5, 1]))
    raw = t0 + np.arange(5, dtype=np.int64) * 60_000_000_000
    scalar = np.array([1.0, -1e31, 50.0, 150.0, -5.0], dtype=np.float32)
    vector = np.array(
        [[1, 2, 3], [-1e31, 2, 3], [1, 20, 3], [1, 2, -30], [0, 0, 0]], dtype=np.float32
    )
    counts = np.array([5, -1, 7, 1000, 3], dtype=np.int32)
    return write_istp_cdf(
        folder / "fill.cdf",
        [
            CdfVariable("Epoch", CdfWriter.CDF_TIME_TT2000, raw),
            CdfVariable(
                "temp",
                CdfWriter.CDF_REAL4,
                scalar,
                {
                    "VAR_TYPE": "data",
                    "DEPEND_0": "Epoch",
                    "FILLVAL": [-1e31, "CDF_REAL4"],
                    "VALIDMIN": [0.0, "CDF_REAL4"],
                    "VALIDMAX": [100.0, "CDF_REAL4"],
                    "UNITS": "eV",
                    "FIELDNAM": "Temperature",
                },
            ),
            CdfVariable(
                "vec",
                CdfWriter.CDF_REAL4,
                vector,
                {
                    "VAR_TYPE": "data",
                    "DEPEND_0": "Epoch",
                    # ISTP FILLVAL is stored as double here while the data is REAL4.
                    "FILLVAL": [-1e31, "CDF_REAL8"],
                    "VALIDMIN": [np.array([-10, -10, -10], dtype=np.float32), "CDF_REAL4"],
                    "VALIDMAX": [np.array([10, 10, 10], dtype=np.float32), "CDF_REAL4"],
                },
            ),
            CdfVariable(
                "counts",
                CdfWriter.CDF_INT4,
                counts,
                {
                    "VAR_TYPE": "support_data",
                    "DEPEND_0": "Epoch",
                    "FILLVAL": [-1, "CDF_INT4"],
                    "VALIDMAX": [999, "CDF_INT4"],
                },
            ),
        ],
    )


def test_fill_becomes_nan_and_valid_range_is_kept_as_metadata(tmp_path: Path) -> None:
    path = fill_and_range_file(tmp_path)
    data = read_cdf_parameters(path, "FILL", ["temp", "vec", "counts"])
    np.testing.assert_array_equal(
        data["temp"].frame["temp"].to_numpy(), [1.0, np.nan, 50.0, 150.0, -5.0]
    )
    assert data["temp"].description == "Temperature"
    assert data["temp"].units == "eV"
    assert data["temp"].meta["valid_min"] == 0.0
    assert data["temp"].meta["valid_max"] == 100.0
    np.testing.assert_array_equal(
        data["vec"].frame.to_numpy(),
        [[1, 2, 3], [np.nan, 2, 3], [1, 20, 3], [1, 2, -30], [0, 0, 0]],
    )
    assert data["vec"].meta["valid_min"] == [-10.0, -10.0, -10.0]
    assert list(data["vec"].frame.columns) == ["vec_0", "vec_1", "vec_2"]
    np.testing.assert_array_equal(
        data["counts"].frame["counts"].to_numpy(), [5, np.nan, 7, 1000, 3]
    )


def spectrogram_file(folder: Path, time_varying_bins: bool) -> Path:
    """A 2-D variable with DEPEND_1 energy bins, optionally one bin set per record."""
    t0 = int(cdfepoch.compute_tt2000([2021, 7, 1]))
    raw = t0 + np.arange(4, dtype=np.int64) * 10_000_000_000
    flux = np.arange(16, dtype=np.float32).reshape(4, 4) * 10
    bins = np.array([10, 20, 40, 80], dtype=np.float32)
    if time_varying_bins:
        bins_var = CdfVariable(
            "energy",
            CdfWriter.CDF_REAL4,
            np.stack([bins, bins * 2, bins * 3, np.full(4, -1e31, dtype=np.float32)]),
            {"UNITS": "eV", "FILLVAL": [-1e31, "CDF_REAL4"], "DEPEND_0": "Epoch"},
        )
    else:
        bins_var = CdfVariable(
            "energy", CdfWriter.CDF_REAL4, bins, {"UNITS": "eV"}, record_varying=False
        )
    return write_istp_cdf(
        folder / f"spec_{time_varying_bins}.cdf",
        [
            CdfVariable("Epoch", CdfWriter.CDF_TIME_TT2000, raw),
            bins_var,
            CdfVariable(
                "flux",
                CdfWriter.CDF_REAL4,
                flux,
                {
                    "VAR_TYPE": "data",
                    "DEPEND_0": "Epoch",
                    "DEPEND_1": "energy",
                    "DISPLAY_TYPE": "spectrogram",
                    "UNITS": "1/(cm2 s sr eV)",
                    "CATDESC": "Differential energy flux",
                },
            ),
        ],
    )


def test_spectrogram_keeps_bins(tmp_path: Path) -> None:
    path = spectrogram_file(tmp_path, time_varying_bins=False)
    data = read_cdf_parameters(path, "SPEC", ["flux"])["flux"]
    assert data.is_2d
    assert data.bins is not None
    np.testing.assert_array_equal(data.bins, [10, 20, 40, 80])
    assert data.bins_name == "energy"
    assert data.bins_units == "eV"
    assert list(data.frame.columns) == ["flux_0", "flux_1", "flux_2", "flux_3"]
    np.testing.assert_array_equal(
        data.frame.to_numpy(), np.asarray(cdflib.CDF(path).varget("flux"), dtype=np.float64)
    )
    assert data.description == "Differential energy flux"


def test_time_varying_bins_are_kept_per_record(tmp_path: Path) -> None:
    path = spectrogram_file(tmp_path, time_varying_bins=True)
    data = read_cdf_parameters(path, "SPEC", ["flux"])["flux"]
    # Records hold bins x1, x2, x3 and one all-fill record: never one median set.
    assert data.bins is None
    dim = data.meta["dims"][0]
    assert dim["name"] == "energy" and dim["is_bins"] and "centers" not in dim
    names = [f"{dim['centers_column']}{i}" for i in range(4)]
    per_record = data.frame[names].to_numpy()
    np.testing.assert_array_equal(per_record[0], [10, 20, 40, 80])
    np.testing.assert_array_equal(per_record[2], [30, 60, 120, 240])
    assert np.isnan(per_record[3]).all()


def test_describe_cdf_reports_labels_bins_and_time(real_data: Path, tmp_path: Path) -> None:
    psp = describe_cdf(real_data / PSP, "PSP")
    assert [p.name for p in psp if p.is_time] == ["epoch_mag_RTN_1min", "epoch_quality_flags"]
    vector = next(p for p in psp if p.name == "psp_fld_l2_mag_RTN_1min")
    assert vector.labels == ("B_R", "B_T", "B_N")
    assert vector.size == (3,)
    assert vector.units == "nT"
    assert vector.type == "double"
    spectrum = describe_cdf(spectrogram_file(tmp_path, False), "SPEC")
    flux = next(p for p in spectrum if p.name == "flux")
    assert flux.bins == (10.0, 20.0, 40.0, 80.0)
    assert flux.bins_units == "eV"


def test_corrupt_file_is_a_server_error(real_data: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.cdf"
    broken.write_bytes((real_data / ACE).read_bytes()[:3000])
    with pytest.raises(ServerError, match=r"broken\.cdf"):
        read_cdf_parameters(broken, "AC_K2_MFI", ["Magnitude"])
    not_cdf = tmp_path / "page.cdf"
    not_cdf.write_text("<html>Service unavailable</html>")
    with pytest.raises(ServerError, match=r"page\.cdf is HTML, not CDF") as caught:
        read_cdf_parameters(not_cdf, "AC_K2_MFI", ["Magnitude"])
    assert "corrupt" not in str(caught.value)


def test_netcdf_file_is_named_not_corrupt(real_data: Path, tmp_path: Path) -> None:
    netcdf = tmp_path / "goes.cdf"
    netcdf.write_bytes((real_data / "goes16_xrsf_l2_avg1m_20210101_truncated.nc").read_bytes())
    named = r"goes\.cdf is (netCDF|HDF5/netCDF-4), not CDF"
    with pytest.raises(ServerError, match=named) as caught:
        read_cdf_parameters(netcdf, "GOES", ["xrsa_flux"])
    assert "corrupt" not in str(caught.value)


def test_variable_without_time_axis_is_explained(tmp_path: Path) -> None:
    path = spectrogram_file(tmp_path, time_varying_bins=False)
    with pytest.raises(UserError, match=r"energy in spec_False\.cdf has no time axis") as caught:
        read_cdf_parameters(path, "SPEC", ["energy"])
    assert "bins or labels of flux" in str(caught.value)
    assert not isinstance(caught.value, ServerError)  # the file stays in the file store
