"""Results are data, not instructions: no result can break the session, none can bomb the parent.

Two sides:

* honest but hostile code (every layer on): whatever `result` it assigns is either
  refused with a clear `output` error or stored, saved (parquet / netCDF-4) and
  reloaded by the session's own persistence, so no result makes a session unsaveable
  or unloadable;
* a fully compromised child (AST layer and audit hook off, so the code writes raw bytes
  on the reply pipe, as if it owned the process): the parent checks every field it
  reads and refuses Arrow features whose decoding it cannot bound (compression, null
  or view columns with a logical length and no bytes, nested types, huge row counts)
  before decoding, and every failure is a `SandboxError`, never a raw exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xhelio.config import Settings
from xhelio.data.entry import DataEntry
from xhelio.data.persist import load_store, save_store
from xhelio.data.store import DataStore
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor
from xhelio.tools.compute_tools import adopt_result


@pytest.fixture(scope="module")
def executor() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=30.0)) as sandbox:
        sandbox.warm_up()
        yield sandbox


@pytest.fixture(scope="module")
def compromised() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=30.0), python_guards=False) as sb:
        sb.warm_up()
        yield sb


def _source() -> DataEntry:
    index = pd.date_range("2024-01-01", periods=5, freq="1min", tz="UTC")
    frame = pd.DataFrame({"bx": np.linspace(0.0, 1.0, 5), "by": np.ones(5)}, index=index)
    return DataEntry("src", frame, {"bx": "nT", "by": "nT"}, "", None, None, True)


RESULTS = {
    "int_labels": "result = pd.DataFrame({1: [1.0], 2: [2.0]})",
    "labels_equal_as_text": "result = pd.DataFrame({1: [1.0], '1': [2.0]})",
    "duplicate_labels": "d = df.copy()\nd.columns = ['a', 'a']\nresult = d",
    "multiindex_columns": (
        "d = df.copy()\nd.columns = pd.MultiIndex.from_tuples([('a', 'x'), ('b', 'y')])\nresult = d"
    ),
    "list_column": "result = pd.DataFrame({'a': [[1, 2], [3]]})",
    "dict_column": "result = pd.DataFrame({'a': [{'x': 1}, {'y': 's'}]})",
    "period_column": "result = pd.DataFrame({'a': pd.period_range('2024', periods=2, freq='D')})",
    "interval_index": "result = pd.DataFrame({'a': [1.0, 2.0]}, index=pd.interval_range(0, 2))",
    "categorical": "result = pd.DataFrame({'a': pd.Categorical(['x', 'y'])})",
    "nullable": "result = pd.DataFrame({'a': pd.array([1, None], dtype='Int64')})",
    "surrogate_label": "result = pd.DataFrame({chr(0xD800): [1.0]})",
    "surrogate_index_name": "d = df.copy()\nd.index.name = chr(0xD800)\nresult = d",
    "nul_label": "result = pd.DataFrame({'a' + chr(0) + 'b': [1.0]})",
    "long_index_value": "result = pd.DataFrame({'a': [1.0]}, index=['x' * 100000])",
    "float16_array": "result = xr.DataArray(np.array([1.0], dtype='f2'), dims='t')",
    "float16_coord": (
        "result = xr.DataArray([1.0], dims='t', coords={'t': np.array([0.5], dtype='f2')})"
    ),
    "bool_attr": "a = xr.DataArray([1.0], dims='t')\na.attrs['note'] = True\nresult = a",
    "surrogate_attr": (
        "a = xr.DataArray([1.0], dims='t')\na.attrs['note'] = chr(0xD800)\nresult = a"
    ),
    "control_char_dim": "result = xr.DataArray([1.0], dims='t' + chr(1))",
    "leading_dot_name": "result = xr.DataArray([1.0], dims='t', name='.hidden')",
    "trailing_space_name": "result = xr.DataArray([1.0], dims='t', name='flux ')",
    "decomposed_unicode": "result = xr.DataArray([1.0], dims='e' + chr(0x301))",
    "many_dims": "result = xr.DataArray(np.zeros((1,) * 40))",
    "upper_case_time_units": (
        "a = xr.DataArray([1.0], dims='t', coords={'t': [0]})\n"
        "a.coords['t'].attrs['units'] = 'hours  SINCE 2000-01-01'\nresult = a"
    ),
    "multiindex_coord": (
        "result = xr.DataArray([1.0, 2.0], dims='t', coords={'t': "
        "pd.MultiIndex.from_tuples([(1, 'a'), (2, 'b')], names=['p', 'q'])})"
    ),
    "int_beyond_64_bits": "result = 2 ** 200",
    "surrogate_scalar": "result = chr(0xD800)",
    "long_string_scalar": "result = 'x' * 1_000_000",
    "far_dates": "result = xr.DataArray(np.array(['9999-01-01'], dtype='M8[s]'), dims='t')",
    "zero_columns_many_rows": "result = pd.DataFrame(index=range(10 ** 12))",
}


@pytest.mark.parametrize("code", list(RESULTS.values()), ids=list(RESULTS))
def test_every_result_is_refused_clearly_or_saves_and_reloads(
    code: str, executor: SandboxExecutor, tmp_path: Path
) -> None:
    source = _source()
    try:
        outcome = executor.run(code, {"src": source.data})
    except SandboxError as error:
        assert error.category in {"output", "forbidden", "runtime"}, error.message
        assert len(error.message) < 5_000
        return
    entry, _ = adopt_result(outcome.value, "out", [source], "d")
    store = DataStore()
    store.put(entry)
    save_store(store, tmp_path)
    reloaded = load_store(tmp_path).get("out").data
    assert reloaded.shape == entry.data.shape
    for text in [*outcome.warnings, outcome.stdout, str(outcome.value)]:
        text.encode("utf-8")  # everything shown or logged is valid UTF-8


def test_scalar_strings_are_capped(executor: SandboxExecutor) -> None:
    with pytest.raises(SandboxError) as info:
        executor.run("result = 'x' * 200_000", {})
    assert info.value.category == "output"
    assert "characters" in info.value.message
    short: object = executor.run("result = 'x' * 1000", {}).value
    assert isinstance(short, str) and short == "x" * 1000


# Past every layer: the code writes its own reply frame on fd 3 and exits.
FORGE = (
    "B = pd.io.common.__builtins__\nos = pd.io.common.os\nimp = B['__import__']\n"
    "w = imp('xhelio.sandbox.wire', fromlist=['x'])\npa = imp('pyarrow')\n"
    "def ipc(t, comp=None):\n"
    "    sink = pa.BufferOutputStream()\n"
    "    options = pa.ipc.IpcWriteOptions(compression=comp)\n"
    "    writer = pa.ipc.new_stream(sink, t.schema, options=options)\n"
    "    writer.write_table(t)\n"
    "    writer.close()\n"
    "    return sink.getvalue().to_pybytes()\n"
    "def frame(blob):\n"
    "    return {'status': 'ok', 'kind': 'dataframe', 'value_header': {'kind': 'dataframe'}}\n"
)
SEND = "\nw.write_frame_blocking(3, w.pack_message(h, blobs))\nos._exit(0)\n"
BAD_META = (
    "{'index_columns': [], 'column_indexes': [{'name': None, 'field_name': None, "
    "'pandas_type': 'unicode', 'numpy_type': 'object', 'metadata': None}] * 2, "
    "'columns': [{'name': '(', 'field_name': 'a', 'pandas_type': 'float64', "
    "'numpy_type': 'float64', 'metadata': None}], 'pandas_version': '2.0'}"
)
FORGED = {
    "zstd_bomb": "blobs = [ipc(pa.table({'a': pa.array(np.zeros(10 ** 7))}), 'zstd')]",
    "null_column_bomb": "blobs = [ipc(pa.table({'n': pa.nulls(10 ** 9)}))]",
    "string_view_bomb": (
        "blobs = [ipc(pa.table({'v': pa.array(['x' * 10 ** 6] * 50, pa.string_view())}))]"
    ),
    "nested_type": "blobs = [ipc(pa.table({'l': pa.array([[1.0] * 3] * 3)}))]",
    "rows_without_columns": (
        "blobs = [ipc(pa.Table.from_pandas(pd.DataFrame(index=pd.RangeIndex(10 ** 15))))]"
    ),
    "hostile_pandas_metadata": (
        "t = pa.Table.from_pandas(pd.DataFrame({'a': [1.0]}))\n"
        f"t = t.replace_schema_metadata({{b'pandas': imp('json').dumps({BAD_META}).encode()}})\n"
        "blobs = [ipc(t)]"
    ),
    "not_arrow": "blobs = [b'garbage' * 100]",
    "array_name_too_long": (
        "blobs = [ipc(pa.table({'v': pa.array([1.0])}))]\n"
        "h = {'status': 'ok', 'kind': 'dataarray', 'value_header': {'kind': 'dataarray', "
        "'name': 'n' * 300, 'dims': ['t'], 'shape': [1], 'attrs': {}, 'coords': []}}"
    ),
    "array_header_mismatch": (
        "blobs = [ipc(pa.table({'v': pa.array([1.0])}))]\n"
        "h = {'status': 'ok', 'kind': 'dataarray', 'value_header': {'kind': 'dataarray', "
        "'name': 'n', 'dims': ['t'], 'shape': [-1, 'x'], 'attrs': [], 'coords': 5}}"
    ),
    "int_beyond_64_bits": "blobs = []\nh = {'status': 'ok', 'kind': 'scalar', 'scalar': 2 ** 80}",
    "unknown_category": (
        "blobs = []\nh = {'status': 'error', 'category': 'zzz', 'message': 'm' * 10 ** 6}"
    ),
}


@pytest.mark.parametrize("code", list(FORGED.values()), ids=list(FORGED))
def test_forged_replies_are_refused_before_decoding(
    code: str, compromised: SandboxExecutor
) -> None:
    body = code if "h = " in code else code + "\nh = frame(blobs[0])"
    with pytest.raises(SandboxError) as info:
        compromised.run_without_validation(FORGE + body + SEND, {})
    assert info.value.category in {"output", "crashed"}, info.value.message
    assert len(info.value.message) < 5_000
    after: object = compromised.run("result = 6 * 7", {}).value
    assert isinstance(after, int) and after == 42


def test_forged_text_fields_are_cleaned_and_capped(compromised: SandboxExecutor) -> None:
    code = (
        "blobs = []\nh = {'status': 'ok', 'kind': 'scalar', 'scalar': chr(0xD800) + 'v', "
        "'stdout': chr(0xD800) + 'x' * 10 ** 6, 'warnings': ['w' * 10 ** 4] * 100, "
        "'layers': ['l' * 1000] * 1000}"  # under the 4 MB header cap (test_sandbox_hostile_replies)
    )
    outcome = compromised.run_without_validation(FORGE + code + SEND, {})
    for text in [str(outcome.value), outcome.stdout, *outcome.warnings, *outcome.layers]:
        text.encode("utf-8")
    assert len(outcome.stdout) < 30_000
    assert len(outcome.warnings) <= 40 and all(len(w) < 1_000 for w in outcome.warnings)
    assert len(outcome.layers) <= 20
