"""Pandas code for the offline operations, as the sandbox runs it (`df`, `sources`).

The code is written to work whatever the chosen candidate looks like: a vector of 3
columns, a vector of 4 (x, y, z and the magnitude, as MMS FGM stores it) or a scalar,
so a candidate fallback never needs new code. Imports only `agents.offline.wishes`.
"""

from __future__ import annotations

from xhelio.agents.offline.wishes import format_seconds

__all__ = ["binary_code", "component_code", "series_code"]

_INDEX = {"x": 0, "r": 0, "y": 1, "t": 1, "z": 2, "n": 2}
_LETTER = {"magnetic_field": "B", "velocity": "V", "electric_field": "E", "position": "R"}


def component_code(component: str, quantity_key: str) -> tuple[str, str]:
    """Code taking a vector to its magnitude or one component, and a name for the result."""
    letter = _LETTER.get(quantity_key, "X")
    if component == "magnitude":
        column = f"|{letter}|"
        code = (
            "v = df.iloc[:, :3]\n"
            f"result = v.pow(2).sum(axis=1, min_count=v.shape[1]).pow(0.5).to_frame({column!r})"
        )
        return code, f"|{letter}|"
    index = _INDEX[component]
    column = f"{letter}{component}"
    code = f"result = df.iloc[:, [{index}]].set_axis([{column!r}], axis=1)"
    return code, column


def series_code(kind: str, window_s: float) -> tuple[str, str, str]:
    """(code, words, label suffix) for smoothing, resampling or the time derivative."""
    seconds = round(window_s)
    words = format_seconds(float(seconds))
    suffix = words.replace(" ", "")
    if kind == "smooth":
        code = f"result = df.rolling('{seconds}s', center=True, min_periods=1).mean()"
        return code, f"smoothed over {words}", f"smooth{suffix}"
    if kind == "resample":
        code = f"result = df.resample('{seconds}s').mean()"
        return code, f"{words} averages", f"avg{suffix}"
    code = (
        "dt = df.index.to_series().diff().dt.total_seconds()\n"
        "result = df.diff().div(dt, axis=0).add_prefix('d/dt ')"
    )
    return code, "time derivative", "ddt"


def binary_code(kind: str) -> str:
    """Code for the difference or ratio of the first column of two series on `df`'s times."""
    operator = "/" if kind == "ratio" else "-"
    return (
        "a = df.iloc[:, 0]\n"
        "other = list(sources.values())[1].iloc[:, 0]\n"
        "joined = other.reindex(other.index.union(a.index))\n"
        "b = joined.interpolate(method='time', limit_area='inside').reindex(a.index)\n"
        f"result = (a {operator} b).to_frame({kind!r})"
    )
