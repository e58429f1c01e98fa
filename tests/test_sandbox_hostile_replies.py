"""The reply channel is hostile on every call: the parent decodes within bounds.

The Python layers can be switched off from inside the child; the OS layers then still
hold, but nothing guards the reply pipe. Here the child has the AST layer and the audit
hook off and writes its own reply frame: a JSON header of millions of empty lists,
nesting deep enough to overflow the parser, an Arrow stream of many one-row batches,
a DataArray with thousands of scalar coordinates, fields of the wrong type. The parent
refuses each by its structure before building anything big (measured with tracemalloc),
always with a `SandboxError`, and the next call works.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest
import xarray as xr

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor
from xhelio.sandbox.arrow_check import MAX_BATCHES
from xhelio.sandbox.bounded_json import JsonRefused, loads_bounded
from xhelio.sandbox.results import MAX_COORDS, check_result

REACH = (
    "B = pd.io.common.__builtins__\nos = pd.io.common.os\nimp = B['__import__']\n"
    "struct = imp('struct')\njson = imp('json')\npa = imp('pyarrow')\n"
    "w = imp('xhelio.sandbox.wire', fromlist=['x'])\n"
)
# Sends `head` (bytes of a JSON header) and `blobs` as the whole reply, then exits.
SEND_RAW = (
    "\nbody = struct.pack('!Q', len(head)) + head + b''.join(blobs)\n"
    "w.write_all(3, struct.pack('!Q', len(body)) + body)\nos._exit(0)\n"
)
MB = 1 << 20


@pytest.fixture(scope="module")
def compromised() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=60.0), python_guards=False) as sb:
        sb.warm_up()
        yield sb


def _peak_bytes(sandbox: SandboxExecutor, code: str) -> tuple[int, SandboxError]:
    """Run hostile code; return the parent's peak traced allocation and the error."""
    tracemalloc.start()
    try:
        with pytest.raises(SandboxError) as info:
            sandbox.run_without_validation(REACH + code + SEND_RAW, {})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, info.value


def _works_after(sandbox: SandboxExecutor) -> None:
    after: object = sandbox.run("result = 6 * 7", {}).value
    assert after == 42


def test_a_large_header_of_empty_lists_is_refused_unread(compromised: SandboxExecutor) -> None:
    # 24 MB of `[]`: json.loads would build 12 million lists (~650 MB).
    code = "head = b'{\"blob_sizes\": [], \"x\": [' + b'[],' * (8 * 2 ** 20) + b'[]]}'\nblobs = []"
    peak, error = _peak_bytes(compromised, code)
    assert error.category == "crashed" and "header" in error.message
    assert peak < 3 * 24 * MB + 16 * MB  # the reply's bytes, never one object per list
    _works_after(compromised)


def test_a_header_under_the_size_cap_with_millions_of_lists_is_refused(
    compromised: SandboxExecutor,
) -> None:
    # 3.6 MB of `[]` under the 4 MB header cap: still 1.2 million lists if parsed.
    code = "head = b'{\"blob_sizes\": [], \"x\": [' + b'[],' * 1_200_000 + b'[]]}'\nblobs = []"
    peak, error = _peak_bytes(compromised, code)
    assert error.category == "crashed" and "JSON items" in error.message
    assert peak < 40 * MB  # parsed, the lists alone would take ~70 MB
    _works_after(compromised)


@pytest.mark.parametrize(
    "head",
    [
        # nesting that overflowed the JSON parser (RecursionError)
        "b'{\"blob_sizes\": [], \"message\": ' + b'[' * 200_000 + b']' * 200_000 + b'}'",
        # fields of the wrong type read by code that assumed lists and strings
        "json.dumps({'status': 'ok', 'kind': 'scalar', 'scalar': 1, 'layers': 5,"
        " 'blob_sizes': []}).encode()",
        "json.dumps({'status': 'ok', 'kind': 'scalar', 'scalar': 1, 'warnings': {'a': 1},"
        " 'stdout': [1], 'notes': 3, 'stdout_truncated': 'yes', 'blob_sizes': []}).encode()",
        "json.dumps({'status': 7, 'category': ['x'], 'message': {'m': [1]},"
        " 'blob_sizes': []}).encode()",
        "json.dumps({'status': 'ok', 'kind': 'dataarray', 'value_header': {'kind':"
        " 'dataarray', 'shape': [10 ** 30], 'dims': 'tt', 'coords': [7]},"
        " 'blob_sizes': [3]}).encode() + b'abc'",
        "json.dumps({'status': 'ok', 'kind': ['dataframe'], 'blob_sizes': []}).encode()",
        "json.dumps([1, 2]).encode()",
        "json.dumps({'blob_sizes': [-1]}).encode()",
        "json.dumps({'blob_sizes': [0] * 5000}).encode()",
    ],
    ids=[
        "deep_nesting",
        "layers_int",
        "fields_of_wrong_types",
        "error_of_wrong_types",
        "array_header_of_wrong_types",
        "kind_list",
        "header_not_object",
        "negative_blob",
        "too_many_blobs",
    ],
)
def test_malformed_headers_fail_only_as_sandbox_errors(
    head: str, compromised: SandboxExecutor
) -> None:
    try:
        outcome = compromised.run_without_validation(
            REACH + f"head = {head}\nblobs = []" + SEND_RAW, {}
        )
    except SandboxError as exc:  # anything else (TypeError, RecursionError) fails the test
        assert len(exc.message) < 5_000
    else:  # a reply that is merely odd may be accepted, with every text field cleaned
        assert isinstance(outcome.stdout, str) and all(isinstance(w, str) for w in outcome.warnings)
        assert len(outcome.layers) <= 20
    _works_after(compromised)


def test_an_arrow_stream_of_many_one_row_batches_is_refused(compromised: SandboxExecutor) -> None:
    code = (
        "t = pa.table({'a': pa.array(np.zeros(200_000))})\n"
        "sink = pa.BufferOutputStream()\n"
        "writer = pa.ipc.new_stream(sink, t.schema)\n"
        "writer.write_table(t, max_chunksize=1)\n"
        "writer.close()\n"
        "blobs = [sink.getvalue().to_pybytes()]\n"
        "head = json.dumps({'status': 'ok', 'kind': 'dataframe', 'value_header':"
        " {'kind': 'dataframe'}, 'blob_sizes': [len(blobs[0])]}).encode()"
    )
    peak, error = _peak_bytes(compromised, code)
    assert error.category == "output" and f"more than {MAX_BATCHES} record batches" in (
        error.message
    )
    assert peak < 3 * 60 * MB  # the reply itself (~45 MB), nothing per batch
    _works_after(compromised)


def test_a_forged_dataarray_with_thousands_of_coordinates_is_refused(
    compromised: SandboxExecutor,
) -> None:
    code = (
        "def ipc(values):\n"
        "    t = pa.table({'v': pa.array(values)})\n"
        "    sink = pa.BufferOutputStream()\n"
        "    writer = pa.ipc.new_stream(sink, t.schema)\n"
        "    writer.write_table(t)\n"
        "    writer.close()\n"
        "    return sink.getvalue().to_pybytes()\n"
        "blobs = [ipc(np.zeros(3))] + [ipc(np.array([float(i)])) for i in range(3000)]\n"
        "coords = [{'name': f'c{i}', 'dims': [], 'shape': [], 'attrs': {}} for i in range(3000)]\n"
        "head = json.dumps({'status': 'ok', 'kind': 'dataarray', 'value_header': {'kind':"
        " 'dataarray', 'name': 'v', 'dims': ['t'], 'shape': [3], 'attrs': {}, 'coords': coords},"
        " 'blob_sizes': [len(b) for b in blobs]}).encode()"
    )
    _, error = _peak_bytes(compromised, code)
    assert error.category == "crashed" and "blobs" in error.message
    _works_after(compromised)


def test_a_dataarray_with_thousands_of_scalar_coordinates_is_refused_by_count(
    compromised: SandboxExecutor,
) -> None:
    many = xr.DataArray(np.zeros(3), dims="t", coords={f"c{i}": i for i in range(3000)})
    with pytest.raises(Exception, match="coordinates"):
        check_result(many)
    at_limit = xr.DataArray(
        np.zeros(3), dims="t", coords={f"c{i}": i for i in range(MAX_COORDS - 1)}
    )
    assert len(check_result(at_limit)[0].coords) == MAX_COORDS - 1
    with pytest.raises(SandboxError) as info:
        compromised.run(
            "result = xr.DataArray(np.zeros(3), dims='t', "
            "coords={f'c{i}': i for i in range(3000)})",
            {},
        )
    assert info.value.category == "output" and "drop_vars" in info.value.message


def test_json_shape_is_read_before_parsing() -> None:
    assert loads_bounded(b'{"a": [1, {"b": "[[[[[[[[[[[[[[[[[[[[["}]}') == {
        "a": [1, {"b": "[" * 21}]
    }
    escaped = b'["\\"' + b"[" * 30 + b'"]'  # an escaped quote does not end the string
    assert loads_bounded(escaped) == ['"' + "[" * 30]
    with pytest.raises(JsonRefused, match="deeper"):
        loads_bounded(b"[" * 17 + b"]" * 17)
    with pytest.raises(JsonRefused, match="items"):
        loads_bounded(b"[" + b"0," * 500_000 + b"0]")
    with pytest.raises(JsonRefused, match="not JSON"):
        loads_bounded(b"{'a': 1}")
