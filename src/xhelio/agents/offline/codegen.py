"""Pandas code for the offline operations, as the sandbox runs it (`df`, `sources`).

The code is written to work whatever the chosen candidate looks like: a vector of 3
columns, a vector of 4 (x, y, z and the magnitude, as MMS FGM stores it) or a scalar,
so a candidate fallback never needs new code. Imports only `language.wishes` and
`language.operations`.
"""

from __future__ import annotations

from xhelio.language.operations import describe_statistic, transform
from xhelio.language.wishes import format_seconds

__all__ = ["binary_code", "component_code", "series_code", "statistics_code"]

_INDEX = {"x": 0, "r": 0, "y": 1, "t": 1, "z": 2, "n": 2}
_LETTER = {"magnetic_field": "B", "velocity": "V", "electric_field": "E", "position": "R"}


def component_code(component: str, quantity_key: str) -> tuple[str, str]:
    """Code taking a vector to its magnitude or one component, and a name for the result."""
    letter = _LETTER.get(quantity_key, "X")
    if component == "magnitude":
        column = f"|{letter}|"
        code = (
            "# magnitude (Euclidean norm): sqrt(x^2 + y^2 + z^2) of the first 3 columns\n"
            "v = df.iloc[:, :3]\n"
            f"result = v.pow(2).sum(axis=1, min_count=v.shape[1]).pow(0.5).to_frame({column!r})"
        )
        return code, f"|{letter}|"
    index = _INDEX[component]
    column = f"{letter}{component}"
    code = f"result = df.iloc[:, [{index}]].set_axis([{column!r}], axis=1)"
    return code, column


def _statistic_call(statistic: str) -> str:
    """The pandas call computing a statistic over each window or bin ("p95" a quantile)."""
    if statistic.startswith("p"):
        return f"quantile({float(statistic[1:]) / 100:g})"
    return f"{statistic or 'mean'}()"


def series_code(
    kind: str, window_s: float, detail: str = "", points: int | None = None
) -> tuple[str, str, str]:
    """(code, words, label suffix) of a one-series operation: window, bins, trend, d/dt, integral.

    `detail` is the statistic of a running window or a resampling ("" is the mean,
    "max", "p95", ...) or the trend a detrend removes ("linear", "mean" or "running", the
    running mean over the window); `points` a
    running window in samples.
    """
    seconds = round(window_s)
    words = format_seconds(float(seconds))
    suffix = words.replace(" ", "")
    statistic = detail if kind in ("smooth", "resample") else ""
    if kind == "resample" and "," in statistic:
        return _resample_statistics_code(seconds, words, suffix, statistic.split(","))
    call, name = _statistic_call(statistic), describe_statistic(statistic)
    tag = statistic + ("_" if statistic[-1:].isdigit() else "")  # "p95_1d", "max1h"
    span = f"'{seconds}s'" if points is None else str(points)
    if points is not None:
        words, suffix = f"{points} points", f"{points}pt"
    if kind == "detrend" and detail == "running":
        code = (
            f"# the running mean over {words} removed (centred window)\n"
            f"result = df - df.rolling({span}, center=True, min_periods=1).mean()"
        )
        return code, f"with its running mean over {words} removed", f"minus_mean{suffix}"
    if kind == "smooth":
        code = f"result = df.rolling({span}, center=True, min_periods=1).{call}"
        if not statistic:
            return code, f"smoothed over {words}", f"smooth{suffix}"
        return code, f"running {name} over {words}", f"{tag}{suffix}"
    if kind == "resample":
        code = (
            f"# {name} of each {words} bin (bins start on the clock, labelled by their start)\n"
            f"result = df.resample('{seconds}s').{call}"
        )
        if not statistic:
            return code, f"{words} averages", f"avg{suffix}"
        return code, f"{words} {name}", f"{tag}{suffix}"
    if kind == "detrend":
        return _detrend_code(detail)
    if kind == "integral":
        return _INTEGRAL, "time integral (cumulative, trapezoid rule)", "integral"
    if kind == "scale":  # detail: "* 1e-9" or "/ 2", the number as typed
        said = f"{'divided' if detail[0] == '/' else 'multiplied'} by {detail[2:]}"
        return f"result = df {detail}  # {said}", said, "scaled"
    if kind == "transform" and (element_wise := transform(detail)) is not None:
        return element_wise.code, element_wise.label, element_wise.key
    code = (
        "dt = df.index.to_series().diff().dt.total_seconds()\n"
        "result = df.diff().div(dt, axis=0).add_prefix('d/dt ')"
    )
    return code, "time derivative", "ddt"


def _resample_statistics_code(
    seconds: int, words: str, suffix: str, statistics: list[str]
) -> tuple[str, str, str]:
    """Several statistics of the same bins, one column each ("Bz (mean)", "Bz (max)")."""
    named = [(s, describe_statistic("" if s == "mean" else s)) for s in statistics]
    parts = ", ".join(
        f"df.resample('{seconds}s').{_statistic_call('' if s == 'mean' else s)}"
        f".add_suffix(' ({name})')"
        for s, name in named
    )
    code = (
        f"# {', '.join(n for _, n in named)} of each {words} bin (bins start on the clock)\n"
        f"result = pd.concat([{parts}], axis=1)"
    )
    what = f"{words} {' and '.join(n for _, n in named)}"
    return code, what, f"{'_'.join(statistics)}{suffix}"


_INTEGRAL = (
    "# time integral: the cumulative trapezoid rule over time in seconds from the first\n"
    "# sample; a gap (NaN) is bridged by the trapezoid between the samples around it\n"
    "t = (df.index - df.index[0]).total_seconds().to_numpy()\n"
    "def cumulative_trapezoid(column):\n"
    "    ok = column.notna().to_numpy()\n"
    "    if ok.sum() < 2:\n"
    "        return column * np.nan\n"
    "    y, s = column.to_numpy(dtype=float)[ok], t[ok]\n"
    "    area = np.concatenate([[0.0], np.cumsum((y[1:] + y[:-1]) / 2 * np.diff(s))])\n"
    "    return pd.Series(area, index=column.index[ok]).reindex(column.index)\n"
    "result = df.apply(cumulative_trapezoid).add_prefix('integral of ')"
)


def _detrend_code(trend: str) -> tuple[str, str, str]:
    """Code removing the mean, or the least-squares line (per column, NaN left out)."""
    if trend == "mean":
        code = "# detrend: the mean removed\nresult = df - df.mean()"
        return code, "with its mean removed (detrended)", "detrend_mean"
    code = (
        "# detrend: the least-squares linear trend removed from each column\n"
        "t = (df.index - df.index[0]).total_seconds().to_numpy()\n"
        "def detrend_linear(column):\n"
        "    ok = column.notna().to_numpy()\n"
        "    if ok.sum() < 2:\n"
        "        return column\n"
        "    slope, offset = np.polyfit(t[ok], column.to_numpy()[ok], 1)\n"
        "    return column - (slope * t + offset)\n"
        "result = df.apply(detrend_linear)"
    )
    return code, "with its linear trend removed (detrended)", "detrend_linear"


def statistics_code(statistics: list[str], unit: str) -> tuple[str, str]:
    """(code, words) of statistics over the whole interval, one row each, said per column.

    The code keeps the table as `result` (a row per statistic, a column per series
    column) and prints one line per column with each value and its unit, the time of a
    minimum or maximum, and how many valid points it used, for the answer. A time
    beyond a threshold ("below:-10") counts the samples beyond it times the median
    cadence, in hours; the threshold is read in the series' unit.
    """
    unit = "" if unit.strip() in ("1", "") else unit  # a pure number has no unit to say
    rows: list[str] = []
    units: dict[str, str] = {}
    cadence = False
    for s in statistics:
        kind, _, value = s.partition(":")
        name = describe_statistic("" if s == "mean" else s)
        if value:
            name = f"{name} {unit}".rstrip()
            sign = "<" if kind == "below" else ">"
            rows.append(f"    {name!r}: (df {sign} {value}).sum() * step_s / 3600")
            units[name], cadence = "h", True
        else:
            rows.append(f"    {name!r}: df.{_statistic_call('' if s == 'mean' else s)}")
            units[name] = f"({unit})^2" if s == "var" and unit else unit
    names = list(units)
    step = "step_s = df.index.to_series().diff().dt.total_seconds().median()  # the cadence\n"
    code = (
        f"# {', '.join(names)} over the whole interval (NaN left out)\n"
        + (step if cadence else "")
        + "result = pd.DataFrame({\n"
        + ",\n".join(rows)
        + ",\n}).T\n"
        f"units = {units!r}\n"
        "for column in df.columns:\n"
        "    values = df[column].dropna()\n"
        "    said = []\n"
        "    for name, value in result[column].items():\n"
        "        text = f'{name} {value:.4g} {units[name]}'.rstrip()\n"
        "        if name in ('minimum', 'maximum') and len(values):\n"
        "            at = values.idxmax() if name == 'maximum' else values.idxmin()\n"
        "            text += f' at {str(at)[:19]} UTC'\n"
        "        said.append(text)\n"
        "    print(f'{column}: ' + ', '.join(said) + f' ({len(values)} valid points).')\n"
    )
    said = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return code, f"{said} over the whole interval"


def binary_code(kind: str) -> str:
    """Code for the difference, percent difference or ratio of two series on `df`'s times.

    The percent difference is 100 * (a - b) / ((|a| + |b|) / 2): relative to the mean of
    the two magnitudes, so neither series is taken as the reference.
    """
    formula = {
        "ratio": "a / b",
        "difference": "a - b",
        "percent_difference": "100 * (a - b) / ((a.abs() + b.abs()) / 2)",
    }[kind]
    return (
        "a = df.iloc[:, 0]\n"
        "other = list(sources.values())[1].iloc[:, 0]\n"
        "joined = other.reindex(other.index.union(a.index))\n"
        "b = joined.interpolate(method='time', limit_area='inside').reindex(a.index)\n"
        f"result = ({formula}).to_frame({kind!r})"
    )
