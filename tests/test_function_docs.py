"""Function documentation search over the installed scipy and pywt."""

from __future__ import annotations

import json

import pytest
import scipy

from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.sandbox import function_docs
from xhelio.sandbox.function_docs import get_function_docs, search_function_docs


def test_search_ranks_the_obvious_function_first() -> None:
    hits = search_function_docs("butter")
    assert hits[0]["name"] == "scipy.signal.butter"
    assert str(hits[0]["signature"]).startswith("butter(")
    assert "Butterworth" in str(hits[0]["summary"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("welch power spectral density", "scipy.signal.welch"),
        ("savitzky golay filter", "scipy.signal.savgol_filter"),
        ("multilevel wavelet decomposition wavedec", "pywt.wavedec"),
        ("cumulative trapezoid", "scipy.integrate.cumulative_trapezoid"),
        ("linear regression linregress", "scipy.stats.linregress"),
        ("cubic spline", "scipy.interpolate.CubicSpline"),
        ("rfft", "scipy.fft.rfft"),
    ],
)
def test_search_finds_common_tools(query: str, expected: str) -> None:
    names = [hit["name"] for hit in search_function_docs(query, limit=5)]
    assert expected in names


def test_limit_and_empty_query() -> None:
    assert len(search_function_docs("filter", limit=3)) == 3
    with pytest.raises(UserError, match="no words"):
        search_function_docs("  ?? ")


def test_get_returns_full_docstring_by_full_or_short_name() -> None:
    full = get_function_docs("scipy.signal.filtfilt")
    assert full["signature"].startswith("filtfilt(")
    assert "Parameters" in full["doc"]
    assert get_function_docs("filtfilt")["name"] == "scipy.signal.filtfilt"


def test_get_unknown_and_ambiguous_names() -> None:
    with pytest.raises(UserError, match="search_function_docs"):
        get_function_docs("scipy.signal.not_a_function")
    with pytest.raises(UserError, match="ambiguous") as info:
        get_function_docs("trapezoid")  # in scipy.integrate and as a scipy.stats distribution
    assert "scipy.integrate.trapezoid" in info.value.message


def test_cache_file_is_keyed_by_versions_and_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings()
    function_docs._cache.clear()  # pyright: ignore[reportPrivateUsage]
    search_function_docs("butter", settings=settings)
    path = settings.home / "function_docs.json"
    stored = json.loads(path.read_text())
    assert stored["versions"]["scipy"] == scipy.__version__
    assert any(e["name"] == "scipy.signal.butter" for e in stored["entries"])
    # A fresh process (empty memory cache) reads the file instead of rebuilding.
    function_docs._cache.clear()  # pyright: ignore[reportPrivateUsage]

    def no_rebuild() -> list[function_docs.FunctionDoc]:
        raise AssertionError("rebuilt although the cache file was valid")

    monkeypatch.setattr(function_docs, "_build", no_rebuild)
    assert search_function_docs("butter", settings=settings)[0]["name"] == "scipy.signal.butter"
    # A version change invalidates the file.
    stored["versions"]["scipy"] = "0.0.0"
    path.write_text(json.dumps(stored))
    function_docs._cache.clear()  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(AssertionError, match="rebuilt"):
        search_function_docs("butter", settings=settings)
    function_docs._cache.clear()  # pyright: ignore[reportPrivateUsage]
