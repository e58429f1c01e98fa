"""Escape classes that pass the AST layer by design and must be contained after it.

* dunder protocols answered from data (`np.asarray` of a Series whose index label, a
  DataArray whose attr, or an OptimizeResult whose key is `__array_interface__`);
* poisoning a later call without any escape (aliased module attributes, pandas
  options, patched classes, constants, RNG state): every call runs in a fresh child;
* results that would break the saved session (netCDF-decoded attrs, huge labels and
  names, names netCDF refuses): attrs are allowlisted, labels and names limited, and
  what comes back saves and reloads with netCDF and parquet.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor

KEY = "k = '_' * 2 + 'array_interface' + '_' * 2\n"
STRUCT = "j = '_' * 2 + 'array_struct' + '_' * 2\n"
FORGED = "{'data': (8, False), 'typestr': '|O', 'shape': (4,), 'version': 3}"


@pytest.fixture(scope="module")
def executor() -> Iterator[SandboxExecutor]:
    settings = replace(Settings(), sandbox_timeout_s=20.0)
    with SandboxExecutor(settings) as sandbox:
        sandbox.warm_up()
        yield sandbox


@pytest.fixture
def frame() -> pd.DataFrame:
    index = pd.date_range("2024-01-01", periods=30, freq="1min", tz="UTC")
    return pd.DataFrame({"bx": np.linspace(0.0, 1.0, 30), "by": np.ones(30)}, index=index)


PROTOCOL_CASES = [
    (
        "series_index_label",
        KEY + f"s = pd.Series([{FORGED}], index=[k], dtype='O')\nresult = str(np.asarray(s))",
    ),
    (
        "series_array_struct",
        STRUCT + f"s = pd.Series([{FORGED}], index=[j], dtype='O')\nresult = str(np.array(s))",
    ),
    (
        "frame_column",
        KEY + f"d = pd.DataFrame({{k: [{FORGED}]}})\nresult = str(np.asarray(d))",
    ),
    (
        "dataarray_attrs",
        KEY + f"a = xr.DataArray([1.0])\na.attrs[k] = {FORGED}\nresult = str(np.asarray(a))",
    ),
    (
        "dataarray_coord",
        KEY + "a = xr.DataArray([1.0], dims='t', coords={k: ((), 0)})\nresult = str(np.asarray(a))",
    ),
    (
        "optimize_result",
        KEY + f"r = scipy.optimize.OptimizeResult()\nr[k] = {FORGED}\nresult = str(np.asarray(r))",
    ),
    (
        "ufunc_on_series",
        KEY + f"s = pd.Series([{FORGED}], index=[k], dtype='O')\nresult = str(np.add(s, 1))",
    ),
    (
        "write_through_forged_array",
        KEY + "s = pd.Series([{'data': (8, False), 'typestr': '<f8', 'shape': (1,), "
        "'version': 3}], index=[k], dtype='O')\nv = np.asarray(s)\nresult = str(v)",
    ),
]


@pytest.mark.parametrize("code", [c[1] for c in PROTOCOL_CASES], ids=[c[0] for c in PROTOCOL_CASES])
def test_protocol_lookups_are_never_answered_by_data(
    code: str, executor: SandboxExecutor, frame: pd.DataFrame
) -> None:
    try:
        outcome = executor.run(code, {"b": frame})
    except SandboxError as error:
        # A clear refusal or error is fine; a crash would mean raw memory was touched.
        assert error.category in {"runtime", "forbidden", "output"}, error.message
    else:
        # The dict itself or the real values, wrapped normally: never a forged array.
        assert isinstance(outcome.value, str)
    after: object = executor.run("result = np.pi", {"b": frame}).value
    assert after == pytest.approx(3.141592653589793)


POISON_THEN_CHECK = [
    (
        "module_alias",
        "s = scipy.signal\ns.butter = len\nresult = 1",
        "result = float(scipy.signal.butter(2, 0.1)[0][0])",
    ),
    (
        "pandas_option_via_alias",
        "p = pd\np.set_option('display.float_format', lambda x: 'PWNED')\nresult = 1",
        "print(df.head(2))\nresult = 1",
    ),
    (
        "patched_class",
        "T = type(df)\nT.sum = lambda self, *a, **k: 0\nresult = 1",
        "result = float(df.sum().sum())",
    ),
    ("constants", "c = scipy.constants\nc.c = 1.0\nresult = 1", "result = scipy.constants.c"),
    ("numpy_constant", "n = np\nn.pi = 3.0\nresult = 1", "result = np.pi"),
    (
        "rng_state",
        "np.random.seed(1)\nresult = float(np.random.random())",
        "result = float(np.random.random())",
    ),
    (
        "error_state",
        "e = np\ne.seterr(all='raise')\nresult = 1",
        "result = float(np.float64(1.0) / 0.0)",
    ),
]


@pytest.mark.parametrize(
    ("poison", "check"), [c[1:] for c in POISON_THEN_CHECK], ids=[c[0] for c in POISON_THEN_CHECK]
)
def test_no_call_reaches_the_next(
    poison: str, check: str, executor: SandboxExecutor, frame: pd.DataFrame
) -> None:
    clean = executor.run_without_validation(check, {"b": frame})
    try:
        executor.run(poison, {"b": frame})
    except SandboxError as error:
        assert error.category in {"validation", "runtime", "forbidden"}
    after = executor.run(check, {"b": frame})
    value: object = after.value
    expected: object = clean.value
    assert "PWNED" not in after.stdout
    if "random" in check:
        assert value != pytest.approx(0.417022004702574)  # seed(1)'s first draw
    else:
        assert value == expected
        assert after.stdout == clean.stdout


def test_attrs_are_allowlisted_and_the_result_saves_and_reloads(
    executor: SandboxExecutor, frame: pd.DataFrame, tmp_path: Path
) -> None:
    code = (
        "a = xr.DataArray(np.arange(4.0), dims='t', coords={'t': np.arange(4.0)}, name='flux')\n"
        "a.attrs.update(units='nT', scale_factor='abc', calendar='bogus', add_offset=[1])\n"
        "a.attrs['missing_value'] = 'x'\n"
        "a.coords['t'].attrs.update(units='days since 1-1-1', calendar='bogus', long_name='t')\n"
        "result = a"
    )
    outcome = executor.run(code, {"b": frame})
    value = outcome.value
    assert isinstance(value, xr.DataArray)
    assert value.attrs == {"units": "nT"}
    assert value.coords["t"].attrs == {"long_name": "t"}
    assert any("scale_factor" in note for note in outcome.warnings)
    path = tmp_path / "flux.nc"
    value.to_netcdf(path, engine="scipy")
    reloaded = xr.open_dataarray(path, engine="scipy")
    np.testing.assert_array_equal(reloaded.values, np.arange(4.0))
    reloaded.close()


@pytest.mark.parametrize(
    ("code", "fragment"),
    [
        ("result = df.rename(columns={'bx': 'x' * 300})", "column label"),
        ("result = df.rename(columns={'bx': 'x' * 30_000_000})", ""),
        ("result = xr.DataArray([1.0], dims='t', name='n' * 300)", "characters"),
        ("result = xr.DataArray([1.0], dims='t', name='a/b')", "'/'"),
        ("result = xr.DataArray([1.0], dims='t' * 200)", "characters"),
        ("result = xr.DataArray([1.0], dims='t', coords={'t': [0.0]}, name='t')", "coordinate"),
        ("d = df.copy()\nd.index.name = 'i' * 1000\nresult = d", "index name"),
    ],
)
def test_labels_and_names_are_limited(
    code: str, fragment: str, executor: SandboxExecutor, frame: pd.DataFrame
) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run(code, {"b": frame})
    assert info.value.category in {"output", "memory"}
    assert fragment in info.value.message
    assert len(info.value.message) < 5_000


def test_frame_attrs_are_dropped_and_parquet_round_trips(
    executor: SandboxExecutor, frame: pd.DataFrame, tmp_path: Path
) -> None:
    outcome = executor.run("d = df * 2\nd.attrs['scale_factor'] = 'abc'\nresult = d", {"b": frame})
    value = outcome.value
    assert isinstance(value, pd.DataFrame)
    assert value.attrs == {}
    value.to_parquet(tmp_path / "r.parquet")
    back = pd.read_parquet(tmp_path / "r.parquet")
    pd.testing.assert_frame_equal(back, value, check_freq=False)


def test_print_and_str_of_arrays_work(executor: SandboxExecutor, frame: pd.DataFrame) -> None:
    code = (
        "x = df['bx'].to_numpy()\nprint(x[:3])\nprint(np.arange(2000))\n"
        "print(repr(x[:2]), np.float64(2.5), np.array([[1, 2]]))\nresult = str(x[:2])"
    )
    outcome = executor.run(code, {"b": frame})
    value: object = outcome.value
    assert value == str(frame["bx"].to_numpy()[:2])
    assert str(frame["bx"].to_numpy()[:3]) in outcome.stdout
    assert "1999" in outcome.stdout
