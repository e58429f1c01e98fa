"""Adversarial corpus: known sandbox-escape techniques must all be contained.

Each case asserts containment by its effect, not by the mechanism: no canary file is
written, no connection reaches a loopback socket the test listens on, no secret from the
parent environment is visible, the error carries a clear category, and the next
legitimate call on the SAME executor still works.

`CASES` go through `run` (all layers). `RUNTIME_CASES` go through
`run_without_validation`, which skips the AST layer, to prove the worker's runtime layers
(audit hook, fd limit, rlimits, stripped I/O functions, scrubbed env) on their own. Their
code regains full builtins through `pd.io.common.__builtins__`, as an attacker who got
past the AST layer would.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor

SECRET = "sk-test-secret-never-in-the-sandbox-1234"


@pytest.fixture(scope="module")
def executor() -> Iterator[SandboxExecutor]:
    """One executor for the module: escapes must not break it for later tests."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", SECRET)
        patch.setenv("XHELIO_TEST_SECRET", SECRET)
        settings = replace(Settings(), sandbox_timeout_s=6.0, sandbox_cpu_s=30)
        sandbox = SandboxExecutor(settings, max_result_bytes=50_000_000)
        sandbox.warm_up()
    yield sandbox
    sandbox.close()


@pytest.fixture
def field_frame() -> pd.DataFrame:
    index = pd.date_range("2024-01-01", periods=50, freq="1min", tz="UTC")
    rng = np.random.default_rng(7)
    return pd.DataFrame(rng.normal(size=(50, 3)), index=index, columns=["bx", "by", "bz"])


def _assert_contained(
    executor: SandboxExecutor,
    listener: socket.socket,
    canary: Path,
    frame: pd.DataFrame,
) -> None:
    assert not canary.exists(), "sandboxed code wrote a file"
    with pytest.raises(BlockingIOError):
        connection, _ = listener.accept()
        connection.close()
    magnitude = executor.run(
        "result = np.sqrt((df[['bx', 'by', 'bz']] ** 2).sum(axis=1))", {"mag": frame}
    )
    assert isinstance(magnitude.value, pd.DataFrame)
    expected = np.sqrt((frame.to_numpy() ** 2).sum(axis=1))
    np.testing.assert_allclose(magnitude.value.iloc[:, 0].to_numpy(), expected)


def _fill(code: str, canary: Path, port: int) -> str:
    return code.replace("{canary}", str(canary)).replace("{port}", str(port))


CASES: list[tuple[str, str, set[str]]] = [
    # dunder walks to os / builtins
    ("subclasses", "result = ().__class__.__bases__[0].__subclasses__()", {"validation"}),
    ("mro_walk", "result = [].__class__.__mro__[-1].__subclasses__()", {"validation"}),
    ("func_globals", "f = lambda: 0\nresult = f.__globals__['__builtins__']", {"validation"}),
    ("builtins_name", "result = __builtins__['open']", {"validation"}),
    ("dunder_import", "result = __import__('os').system('touch {canary}')", {"validation"}),
    ("import_os", "import os\nos.system('touch {canary}')\nresult = 1", {"validation"}),
    (
        "from_import",
        "from subprocess import run\nresult = run(['touch', '{canary}'])",
        {"validation"},
    ),
    ("lambda_code", "f = lambda: 0\nresult = f.__code__", {"validation"}),
    ("sources_class", "result = sources.__class__.__init__", {"validation"}),
    ("private_attr", "result = df._mgr", {"validation"}),
    # format-string attribute access
    ("format_attr", "result = '{0.__class__}'.format(df)", {"validation"}),
    ("format_globals", "result = '{0.sum.__globals__}'.format(df)", {"validation"}),
    ("format_map", "result = '{x.__class__}'.format_map({'x': df})", {"validation"}),
    ("format_variable", "s = '{0.__class__.__mro__}'\nresult = s.format(df)", {"validation"}),
    ("format_unbound", "result = str.format('{0.__class__}', df)", {"validation"}),
    ("format_item", "result = '{0[0]}'.format(df.columns)", {"validation"}),
    ("fstring_dunder", "result = f'{df.__class__}'", {"validation"}),
    ("fstring_spec", "result = f'{1:{df.__class__}}'", {"validation"}),
    # pathlib / io / builtins for files
    ("open_write", "open('{canary}', 'w').write('x')\nresult = 1", {"validation"}),
    ("print_open", "print(open)\nresult = 1", {"validation"}),
    ("with_open", "with open('{canary}', 'w') as f:\n    pass\nresult = 1", {"validation"}),
    ("pathlib_via_pd", "result = pd.io.common.Path('{canary}').write_text('x')", {"validation"}),
    # pandas, numpy, xarray readers and writers
    ("read_csv_file", "result = pd.read_csv('/etc/passwd')", {"validation"}),
    ("read_csv_url", "result = pd.read_csv('http://127.0.0.1:{port}/x')", {"validation"}),
    ("read_json_url", "result = pd.read_json('http://127.0.0.1:{port}/x')", {"validation"}),
    ("read_parquet", "result = pd.read_parquet('/etc/passwd')", {"validation"}),
    ("read_pickle", "result = pd.read_pickle('{canary}')", {"validation"}),
    ("np_load_pickle", "result = np.load('{canary}', allow_pickle=True)", {"validation"}),
    ("np_fromfile", "result = float(np.fromfile('/etc/passwd', dtype='u1').sum())", {"validation"}),
    ("np_loadtxt", "result = np.loadtxt('/etc/hostname', dtype=str)", {"validation"}),
    ("np_genfromtxt", "result = np.genfromtxt('/etc/passwd')", {"validation"}),
    ("np_save", "np.save('{canary}', np.ones(3))\nresult = 1", {"validation"}),
    ("np_tofile", "np.ones(3).tofile('{canary}')\nresult = 1", {"validation"}),
    ("np_memmap", "result = np.memmap('{canary}', mode='w+', shape=(3,))", {"validation"}),
    ("np_datasource", "result = np.DataSource().open('http://127.0.0.1:{port}/')", {"validation"}),
    ("to_csv", "df.to_csv('{canary}')\nresult = 1", {"validation"}),
    ("to_parquet", "df.to_parquet('{canary}')\nresult = 1", {"validation"}),
    ("to_pickle", "df.to_pickle('{canary}')\nresult = 1", {"validation"}),
    ("to_string_buf", "df.to_string(buf='{canary}')\nresult = 1", {"validation"}),
    ("to_netcdf", "df.to_xarray().to_netcdf('{canary}')\nresult = 1", {"validation"}),
    ("open_dataset", "result = xr.open_dataset('{canary}')", {"validation"}),
    ("xr_tutorial", "result = xr.tutorial.open_dataset('air_temperature')", {"validation"}),
    # module attribute traversal
    ("pd_io_common_os", "result = pd.io.common.os.system('touch {canary}')", {"validation"}),
    ("np_lib_npyio", "result = np.lib.npyio.os.getcwd()", {"validation"}),
    ("scipy_io", "result = scipy.io.loadmat('{canary}')", {"validation"}),
    ("pd_core_common", "result = dict(pd.core.common.os.environ)", {"validation"}),
    (
        "pd_api",
        "pd.api.extensions.register_dataframe_accessor('x')(dict)\nresult = 1",
        {"validation"},
    ),
    ("xr_register", "xr.register_dataarray_accessor('x')(dict)\nresult = 1", {"validation"}),
    ("np_ctypeslib", "result = np.ctypeslib.ctypes.CDLL(None)", {"validation"}),
    ("np_f2py", "result = np.f2py.subprocess.run(['touch', '{canary}'])", {"validation"}),
    ("np_testing", "result = np.testing.os.system('touch {canary}')", {"validation"}),
    ("pd_compat", "result = pd.compat.os.environ", {"validation"}),
    ("pywt_internals", "result = pywt._extensions", {"validation"}),
    ("pywt_data", "result = pywt.data.ecg()", {"validation"}),
    ("scipy_datasets", "result = scipy.datasets.ascent()", {"validation"}),
    ("scipy_misc", "result = scipy.misc.face()", {"validation"}),
    ("scipy_private", "result = scipy._lib._ccallback", {"validation"}),
    ("scipy_lowlevel", "result = scipy.LowLevelCallable(1)", {"validation"}),
    ("sys_attribute", "result = np.sys.modules", {"validation"}),
    (
        "socket_attribute",
        "result = pd.io.common.socket.create_connection(('127.0.0.1', {port}))",
        {"validation"},
    ),
    (
        "subprocess_attr",
        "result = xr.backends.subprocess.run(['touch', '{canary}'])",
        {"validation"},
    ),
    ("importlib_attr", "result = scipy.importlib.import_module('os')", {"validation"}),
    # string-evaluated expressions and string dispatch
    (
        "df_eval_at",
        "result = df.eval(\"@pd.io.common.os.system('touch {canary}')\")",
        {"validation"},
    ),
    # df.query is a row-condition evaluator of the sandbox's own: attributes refused.
    ("df_query", "result = df.query(\"@pd.io.common.os.system('x') > 0\")", {"runtime"}),
    ("pd_eval", "result = pd.eval('df.bx + 1')", {"validation"}),
    ("apply_string", "result = df.apply('to_csv', path_or_buf='{canary}')", {"validation"}),
    ("agg_dunder", "result = df.agg('__class__')", {"validation"}),
    ("apply_computed", "result = df.apply('to_' + 'csv', path_or_buf='{canary}')", {"validation"}),
    (
        "transform_fstring",
        "m = 'csv'\nresult = df.transform(f'to_{m}', '{canary}')",
        {"validation"},
    ),
    # dispatch by a method name held in a variable, computed, or read from data
    ("dispatch_variable_agg", "n = 'ev' + 'al'\nresult = df.agg(n, expr='bx + 1')", {"validation"}),
    ("dispatch_dict_form", "n = 'que' + 'ry'\nresult = df.agg({'bx': n})", {"validation"}),
    ("dispatch_list_form", "n = 'ev' + 'al'\nresult = df.agg(['mean', n])", {"validation"}),
    ("dispatch_transform", "m = 'ev' + 'al'\nresult = df.transform(m, expr='bx')", {"validation"}),
    ("dispatch_from_data", "result = df.apply(df.columns[0])", {"validation"}),
    (
        "dispatch_named_agg",
        "n = 'ev' + 'al'\nresult = df.groupby(df.index.hour).agg(x=('bx', n))",
        {"validation"},
    ),
    (
        "dispatch_pivot_aggfunc",
        "n = 'ev' + 'al'\nresult = df.pivot_table(aggfunc=n)",
        {"validation"},
    ),
    (
        "dispatch_pivot_positional",
        "result = pd.pivot_table(df, 'bx', 'by', None, 'eval')",
        {"validation"},
    ),
    ("dispatch_splat", "a = ['eval']\nresult = df.agg(*a)", {"validation"}),
    ("dispatch_kwargs_splat", "result = df.agg(**{'func': 'ev' + 'al'})", {"validation"}),
    ("dispatch_unbound", "result = pd.DataFrame.agg(df, 'sum')", {"validation"}),
    ("dispatch_shadowed_builtin", "max = 'ev' + 'al'\nresult = df.agg(max)", {"validation"}),
    ("dispatch_resample", "n = 'ev' + 'al'\nresult = df.resample('1h').apply(n)", {"validation"}),
    ("dispatch_rolling", "n = 'ev' + 'al'\nresult = df.rolling(3).agg(n)", {"validation"}),
    # dynamic attribute and namespace access
    ("getattr_pd", "result = getattr(pd, 'read_csv')('/etc/passwd')", {"validation"}),
    ("vars_pd", "result = vars(pd)", {"validation"}),
    ("pd_dict", "result = pd.__dict__['io']", {"validation"}),
    ("globals_builtins", "result = globals()['__builtins__']['open']", {"validation"}),
    ("locals_call", "result = locals()", {"validation"}),
    ("dir_call", "result = dir(pd)", {"validation"}),
    ("exec_call", "exec('import os')\nresult = 1", {"validation"}),
    ("eval_call", "result = eval('1 + 1')", {"validation"}),
    ("compile_call", "result = compile('1', 'x', 'eval')", {"validation"}),
    ("breakpoint_call", "breakpoint()\nresult = 1", {"validation"}),
    ("input_call", "result = input()", {"validation"}),
    ("help_call", "help(pd)\nresult = 1", {"validation"}),
    ("memoryview_call", "result = memoryview(b'x')", {"validation"}),
    # frames, generators, tracebacks
    (
        "gen_frame_walk",
        "g = (x for x in [1])\nresult = g.gi_frame.f_back.f_globals",
        {"validation"},
    ),
    ("yield_frame", "def g():\n    yield 1\nresult = list(g())", {"validation"}),
    (
        "traceback_frame",
        "try:\n    1 / 0\nexcept Exception as e:\n    result = e.__traceback__.tb_frame.f_globals",
        {"validation"},
    ),
    (
        "with_traceback",
        "try:\n    1 / 0\nexcept Exception as e:\n    result = e.with_traceback(None)",
        {"validation"},
    ),
    # type tricks, classes, decorators
    ("type_three_args", "result = type('X', (), {})", {"validation"}),
    ("type_call", "result = type(df.sum)(print, 1)", {"validation"}),
    (
        "class_init_subclass",
        "class A:\n    def __init_subclass__(cls):\n        pass\nresult = 1",
        {"validation"},
    ),
    (
        "decorator",
        "def d(f):\n    return print\n@d\ndef g():\n    return 1\nresult = g",
        {"validation"},
    ),
    # A bare `except:` is allowed; it cannot hide a refusal (the call still fails).
    (
        "bare_except",
        "try:\n    scipy.fftpack.test()\nexcept:\n    pass\nresult = 1",
        {"forbidden"},
    ),
    (
        "base_exception",
        "try:\n    x = 1\nexcept BaseException:\n    pass\nresult = 1",
        {"validation"},
    ),
    ("global_stmt", "global x\nresult = 1", {"validation"}),
    ("module_overwrite", "pd.DataFrame = None\nresult = 1", {"validation"}),
    ("dunder_keyword", "result = dict(__class__=1)", {"validation"}),
    # standard-library helpers re-exported by library modules, format references, file args
    (
        "format_method_reference",
        "f = '{0.__class__.__mro__}'.format\nresult = f(df)",
        {"validation"},
    ),
    (
        "format_unbound_map",
        "result = list(map(str.format, ['{0.__class__}'], [df]))[0]",
        {"validation"},
    ),
    (
        "operator_attrgetter",
        "k = '_' * 2 + 'globals' + '_' * 2\n"
        "result = str(xr.groupers.operator.attrgetter(k)(pd.concat))",
        {"validation"},
    ),
    (
        "functools_update_wrapper",
        "k = '_' * 2 + 'globals' + '_' * 2\ndef w():\n    return 1\n"
        "xr.groupers.functools.update_wrapper(w, pd.concat, assigned=(), updated=(k,))\nresult = 1",
        {"validation"},
    ),
    (
        "import_module_by_name",
        "m = xr.namedarray.pycompat.import_module('os')\nresult = m.system('touch {canary}')",
        {"validation"},
    ),
    ("entry_points", "result = str(xr.namedarray.parallelcompat.entry_points())", {"validation"}),
    ("contextlib_chdir", "result = str(xr.coding.times.contextlib.chdir('/'))", {"validation"}),
    ("abc_metaclass", "result = str(pd.errors.abc.ABCMeta('X', (), {}))", {"validation"}),
    (
        "make_dataclass",
        "result = str(scipy.spatial.distance.dataclasses.make_dataclass('X', ['a']))",
        {"validation"},
    ),
    ("fft_global_backend", "scipy.fft.set_global_backend('scipy')\nresult = 1", {"validation"}),
    ("xr_global_options", "xr.set_options(keep_attrs=True)\nresult = 1", {"validation"}),
    (
        "warnings_state",
        "scipy.cluster.vq.warnings.simplefilter('error')\nresult = 1",
        {"validation"},
    ),
    ("plot_backend_by_name", "result = str(df.plot(backend='xarray.plot'))", {"validation"}),
    ("to_string_positional_path", "df.to_string('{canary}')\nresult = 1", {"validation"}),
    ("show_versions_file", "pd.show_versions(as_json='{canary}')\nresult = 1", {"validation"}),
    (
        "odr_report_file",
        "d = scipy.odr.Data(np.arange(5.0), np.arange(5.0))\n"
        "m = scipy.odr.Model(lambda b, x: b[0] * x)\n"
        "result = float(scipy.odr.ODR(d, m, beta0=[1.0], rptfile='{canary}').run().beta[0])",
        {"validation"},
    ),
    (
        "odr_report_positional",
        "result = scipy.odr.ODR(1, 2, [1.0], None, None, None, None, 1111, None, '{canary}')",
        {"validation"},
    ),
    (
        "metaclass_through_type",
        "T = type(int)\nX = T('X', (dict,), {'_' * 2 + 'missing' + '_' * 2: lambda s, k: k})\n"
        "result = X()['a']",
        {"runtime"},
    ),
    # NumPy raw-memory primitives: forged object pointers, reads before a buffer
    (
        "np_void_object",
        "v = np.void(b'\\0' * 8, dtype=[('a', 'O')])\nresult = str(v['a'])",
        {"validation"},
    ),
    (
        "ndarray_object_buffer",
        "a = np.ndarray((2,), dtype='O', buffer=np.zeros(16, 'u1'))\nresult = str(a[0])",
        {"validation"},
    ),
    (
        "ndarray_negative_offset",
        "a = np.ndarray((8,), dtype='u1', buffer=np.zeros(16, 'u1'), offset=-4096)\n"
        "result = int(a[0])",
        {"validation"},
    ),
    (
        "ndarray_walrus_in_isinstance",
        "ok = isinstance(df, (A := np.ndarray))\nresult = str(A((2,), 'O', np.zeros(16, 'u1')))",
        {"validation"},
    ),
    (
        "object_pointer_bytes",
        "m = np.array([None, 1], dtype='O').data.cast('B')\nm[0] = 1\nresult = 1",
        {"validation"},
    ),
    (
        "recarray_buffer",
        "result = str(np.rec.array(np.zeros(16, 'u1'), dtype=[('a', 'O')]))",
        {"validation"},
    ),
    (
        "masked_baseclass",
        "A = np.ma.array([1.0]).baseclass\nresult = str(A((2,), 'O', np.zeros(16, 'u1')))",
        {"validation"},
    ),
    (
        "type_of_array",
        "A = type(np.zeros(1))\nresult = str(A((2,), 'O', np.zeros(16, 'u1'))[0])",
        {"runtime"},
    ),
    # resource exhaustion: contained by the runtime layers
    ("infinite_loop", "while True:\n    pass\nresult = 1", {"timeout"}),
    ("cpu_bound", "result = sum(range(10 ** 13))", {"timeout"}),
    ("string_bomb", "result = len('x' * 10 ** 11)", {"memory"}),
    ("numpy_bomb", "result = float(np.ones(10 ** 12).sum())", {"memory"}),
    ("billion_rows", "result = pd.DataFrame({'a': np.zeros(10 ** 9)})", {"memory"}),
    ("giant_print", "print('x' * 10 ** 8)\nresult = 1", {"output"}),
    ("print_flood", "for i in range(10 ** 7):\n    print(i)\nresult = 1", {"output"}),
    ("recursion_bomb", "def f(n):\n    return f(n + 1)\nresult = f(0)", {"runtime"}),
    ("huge_exception", "raise ValueError('x' * 10 ** 8)\nresult = 1", {"runtime"}),
    ("too_big_result", "result = pd.DataFrame({'a': np.zeros(10 ** 7)})", {"output"}),
]


@pytest.mark.parametrize(("code", "categories"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_escape_is_contained(
    code: str,
    categories: set[str],
    executor: SandboxExecutor,
    listener: socket.socket,
    tmp_path: Path,
    field_frame: pd.DataFrame,
) -> None:
    canary = tmp_path / "canary"
    port = listener.getsockname()[1]
    source = _fill(code, canary, port)
    with pytest.raises(SandboxError) as info:
        executor.run(source, {"mag": field_frame})
    assert info.value.category in categories, info.value.message
    assert len(info.value.message) < 5_000
    _assert_contained(executor, listener, canary, field_frame)


def test_corpus_is_large_enough() -> None:
    assert len(CASES) + len(RUNTIME_CASES) >= 60


REACH = "B = pd.io.common.__builtins__\nos = pd.io.common.os\n"

RUNTIME_CASES: list[tuple[str, str, set[str]]] = [
    ("open_write", "B['open']('{canary}', 'w').write('x')\nresult = 1", {"forbidden"}),
    ("open_read", "result = B['open']('/etc/passwd').read()", {"forbidden"}),
    ("proc_environ", "result = B['open']('/proc/self/environ', 'rb').read()", {"forbidden"}),
    (
        "parent_environ",
        "result = B['open']('/proc/' + str(os.getppid()) + '/environ').read()",
        {"forbidden"},
    ),
    ("os_open", "result = os.open('{canary}', os.O_CREAT | os.O_WRONLY)", {"forbidden"}),
    (
        "pathlib",
        "P = B['__import__']('pathlib').Path\nresult = P('{canary}').write_text('x')",
        {"forbidden"},
    ),
    (
        "socket_connect",
        "s = B['__import__']('socket')\nresult = str(s.create_connection(('127.0.0.1', {port})))",
        {"forbidden"},
    ),
    (
        "subprocess_run",
        "sp = B['__import__']('subprocess')\nresult = str(sp.run(['touch', '{canary}']))",
        {"forbidden"},
    ),
    ("os_system", "result = os.system('touch {canary}')", {"forbidden"}),
    ("os_fork", "result = os.fork()", {"forbidden"}),
    (
        "os_posix_spawn",
        "result = os.posix_spawn('/usr/bin/touch', ['touch', '{canary}'], {})",
        {"forbidden"},
    ),
    ("os_remove", "result = os.remove('/tmp')", {"forbidden"}),
    ("os_listdir", "result = str(os.listdir('/'))", {"forbidden"}),
    ("new_import", "result = str(B['__import__']('wave'))", {"forbidden"}),
    ("ctypes_load", "c = B['__import__']('ctypes')\nresult = str(c.CDLL(None))", {"forbidden"}),
    (
        "pickle_payload",
        "p = B['__import__']('pickle')\n"
        "result = p.loads(b\"cos\\nsystem\\n(S'touch {canary}'\\ntR.\")",
        {"forbidden"},
    ),
    ("gc_walk", "g = B['__import__']('gc')\nresult = len(g.get_objects())", {"forbidden"}),
    ("stripped_read_csv", "result = pd.read_csv('/etc/passwd')", {"forbidden"}),
    ("stripped_np_save", "np.save('{canary}', np.ones(3))\nresult = 1", {"forbidden"}),
    ("stripped_to_csv", "df.to_csv('{canary}')\nresult = 1", {"forbidden"}),
    (
        "string_dispatch",
        "name = 'to_' + 'csv'\nresult = df.apply(name, path_or_buf='{canary}')",
        {"forbidden"},
    ),
    (
        "swallowed",
        "try:\n    B['open']('/etc/passwd')\nexcept BaseException:\n    pass\nresult = 1",
        {"forbidden"},
    ),
    (
        "arrow_c_open",
        "pa = B['__import__']('pyarrow')\nresult = str(pa.OSFile('{canary}', 'w'))",
        {"forbidden", "runtime"},
    ),
    ("fd_dup_limit", "result = os.dup(0)", {"forbidden"}),
    ("memory_rlimit", "result = len(B['bytearray'](8 * 1024 ** 3))", {"memory"}),
    ("to_string_path", "df.to_string('{canary}')\nresult = 1", {"forbidden"}),
    (
        "odr_fortran_report_file",
        "d = scipy.odr.Data(np.arange(5.0), np.arange(5.0))\n"
        "m = scipy.odr.Model(lambda b, x: b[0] * x)\n"
        "result = float(scipy.odr.ODR(d, m, beta0=[1.0], rptfile='{canary}', iprint=1111)"
        ".run().beta[0])",
        {"crashed", "forbidden", "runtime"},
    ),
    ("evaluator_via_agg", "n = 'ev' + 'al'\nresult = df.agg(n, expr='bx + 1')", {"forbidden"}),
    ("evaluator_pd_eval", "result = pd.eval('1 + 1')", {"forbidden"}),
    ("evaluator_query", "result = df.query('@pd.eval')", {"runtime"}),
    ("evaluator_query_call", "result = df.query(\"pd.eval('1')\")", {"runtime"}),
    ("evaluator_internal", "result = pd.core.computation.eval.eval('1 + 1')", {"forbidden"}),
    ("evaluator_xarray", "result = df.to_xarray().query(index='bx > 0')", {"forbidden"}),
    ("dunder_via_agg", "n = '_' * 2 + 'class' + '_' * 2\nresult = str(df.agg(n))", {"forbidden"}),
    ("exit_worker", "os._exit(3)", {"crashed"}),
    (
        "segfault_worker",
        "S = B['__import__']('sys')\nS.setrecursionlimit(10 ** 8)\nx = []\n"
        "for i in range(10 ** 6):\n    x = [x]\nresult = repr(x)",
        {"crashed"},
    ),
    ("signal_self", "B['__import__']('signal').raise_signal(11)\nresult = 1", {"forbidden"}),
]


@pytest.mark.parametrize(
    ("code", "categories"), [c[1:] for c in RUNTIME_CASES], ids=[c[0] for c in RUNTIME_CASES]
)
def test_runtime_layers_hold_without_validation(
    code: str,
    categories: set[str],
    executor: SandboxExecutor,
    listener: socket.socket,
    tmp_path: Path,
    field_frame: pd.DataFrame,
) -> None:
    canary = tmp_path / "canary"
    port = listener.getsockname()[1]
    source = REACH + _fill(code, canary, port)
    with pytest.raises(SandboxError) as info:
        executor.run_without_validation(source, {"mag": field_frame})
    assert info.value.category in categories, info.value.message
    _assert_contained(executor, listener, canary, field_frame)


def test_worker_environment_has_no_secrets(
    executor: SandboxExecutor, listener: socket.socket, tmp_path: Path, field_frame: pd.DataFrame
) -> None:
    assert os.environ.get("OPENAI_API_KEY") != SECRET  # the fixture's patch is undone
    code = REACH + "result = '\\n'.join(k + '=' + v for k, v in os.environ.items())"
    outcome = executor.run_without_validation(code, {"mag": field_frame})
    assert isinstance(outcome.value, str)
    assert SECRET not in outcome.value
    assert "OPENAI_API_KEY" not in outcome.value
    assert "XHELIO_TEST_SECRET" not in outcome.value
    assert "PATH=" in outcome.value  # the probe really read the worker's environment
    _assert_contained(executor, listener, tmp_path / "canary", field_frame)


def test_worker_runs_in_an_empty_private_directory(
    executor: SandboxExecutor, field_frame: pd.DataFrame
) -> None:
    outcome = executor.run_without_validation(REACH + "result = os.getcwd()", {"mag": field_frame})
    assert isinstance(outcome.value, str)
    assert "xhelio-sandbox-" in outcome.value
    assert outcome.value != os.getcwd()


def test_wall_clock_timeout_comes_from_settings(field_frame: pd.DataFrame) -> None:
    settings = replace(Settings(), sandbox_timeout_s=1.0, sandbox_cpu_s=60)
    with SandboxExecutor(settings) as sandbox:
        sandbox.warm_up()
        first_pid = sandbox.worker_pid
        with pytest.raises(SandboxError) as info:
            sandbox.run_without_validation("while True:\n    pass", {"mag": field_frame})
        assert info.value.category == "timeout"
        assert "sandbox_timeout_s" in info.value.message
        after = sandbox.run("result = float(df['bx'].sum())", {"mag": field_frame})
        assert after.kind == "scalar"
        expected = float(np.sum(field_frame["bx"].to_numpy()))
        assert after.value == pytest.approx(expected)  # pyright: ignore[reportGeneralTypeIssues]
        # Only the call's child was killed: the warm zygote serves the next call.
        assert sandbox.worker_pid == first_pid


def test_cpu_limit_stops_busy_code_before_the_wall_clock(field_frame: pd.DataFrame) -> None:
    settings = replace(Settings(), sandbox_timeout_s=120.0, sandbox_cpu_s=1)
    with SandboxExecutor(settings) as sandbox:
        with pytest.raises(SandboxError) as info:
            sandbox.run_without_validation("while True:\n    pass", {"mag": field_frame})
        assert info.value.category == "timeout"
        assert "sandbox_cpu_s" in info.value.message
        after = sandbox.run("result = len(df)", {"mag": field_frame})
        assert after.kind == "scalar"
        assert after.value == len(field_frame)  # pyright: ignore[reportGeneralTypeIssues]
