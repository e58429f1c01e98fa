"""Searchable documentation of the scientific functions sandboxed code may call.

Covers scipy.signal, scipy.fft, scipy.interpolate, scipy.stats, scipy.integrate, pywt
and the standard analysis methods (`analysis.*`, from `xhelio.analysis.namespace`),
built from the installed packages' own docstrings and signatures (so it always matches
what the sandbox runs). The index is built lazily on first use, cached as JSON at
`settings.home / "function_docs.json"` keyed by the package versions, and held in memory
for the rest of the process. Imports nothing from xhelio but `config` and `errors` (the
analysis namespace it documents is imported by name).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, TypedDict

from xhelio.config import Settings, load_settings
from xhelio.errors import UserError

__all__ = ["DOCUMENTED_MODULES", "FunctionDoc", "get_function_docs", "search_function_docs"]

DOCUMENTED_MODULES = (
    "scipy.signal",
    "scipy.fft",
    "scipy.interpolate",
    "scipy.stats",
    "scipy.integrate",
    "pywt",
    "xhelio.analysis.namespace",
)
_SHOWN = {"xhelio.analysis.namespace": "analysis"}
"""Modules the code sees under another name: their functions are documented by it."""
_FORMAT_VERSION = 2
_WORD = re.compile(r"[a-z0-9]+")


class FunctionDoc(TypedDict):
    """One documented function: full name, signature, summary line and docstring."""

    name: str
    module: str
    signature: str
    summary: str
    doc: str


_cache: dict[Path, list[FunctionDoc]] = {}
_cache_lock = threading.Lock()


def _versions() -> dict[str, str]:
    import pywt
    import scipy

    return {"scipy": scipy.__version__, "pywt": pywt.__version__, "format": str(_FORMAT_VERSION)}


def _signature(name: str, obj: object) -> str:
    try:
        return f"{name}{inspect.signature(obj)}"  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"{name}(...)"


def _public_names(module: Any) -> list[str]:
    names = getattr(module, "__all__", None) or dir(module)
    return sorted(str(n) for n in names if not str(n).startswith("_"))


def _build() -> list[FunctionDoc]:
    """Collect every public callable of the documented modules with its docstring."""
    entries: list[FunctionDoc] = []
    for module_name in DOCUMENTED_MODULES:
        module = importlib.import_module(module_name)
        shown = _SHOWN.get(module_name, module_name)
        for name in _public_names(module):
            if shown != module_name and name in {"sandbox_module", "warm_up"}:
                continue
            obj = getattr(module, name, None)
            if obj is None or inspect.ismodule(obj) or not callable(obj):
                continue
            doc = inspect.getdoc(obj) or ""
            summary = next((line.strip() for line in doc.splitlines() if line.strip()), "")
            entries.append(
                FunctionDoc(
                    name=f"{shown}.{name}",
                    module=shown,
                    signature=_signature(name, obj),
                    summary=summary,
                    doc=doc,
                )
            )
    return entries


def _write_atomically(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".function_docs.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(payload, out)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _load(settings: Settings | None) -> list[FunctionDoc]:
    path = (settings or load_settings()).home / "function_docs.json"
    with _cache_lock:
        if path in _cache:
            return _cache[path]
        versions = _versions()
        entries: list[FunctionDoc] | None = None
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(stored, dict) and stored.get("versions") == versions:
                entries = stored["entries"]
        except (OSError, ValueError, KeyError):
            entries = None  # missing or corrupt cache: rebuild it
        if entries is None:
            entries = _build()
            _write_atomically(path, {"versions": versions, "entries": entries})
        _cache[path] = entries
        return entries


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _score(entry: FunctionDoc, terms: list[str]) -> float:
    short = entry["name"].rsplit(".", 1)[-1].lower()
    name_words = set(_words(entry["name"].replace("_", " ")))
    summary_words = set(_words(entry["summary"]))
    body = entry["doc"].lower()
    score = 0.0
    matched = 0
    for term in terms:
        hit = False
        if term == short:
            score += 12
            hit = True
        elif term in name_words or term in short:
            score += 6
            hit = True
        if term in summary_words:
            score += 3
            hit = True
        count = body.count(term)
        if count:
            score += min(count, 5) * 0.4
            hit = True
        matched += hit
    if matched == len(terms):
        score *= 1.5  # entries matching every term beat those matching one term often
    return score


def search_function_docs(
    query: str, limit: int = 10, *, settings: Settings | None = None
) -> list[dict[str, str | float]]:
    """Rank documented functions for a keyword query; return name, signature, summary."""
    terms = _words(query)
    if not terms:
        raise UserError("The search query has no words; try e.g. 'bandpass filter'.")
    scored: list[tuple[float, FunctionDoc]] = []
    for entry in _load(settings):
        score = _score(entry, terms)
        if score > 0:
            scored.append((score, entry))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["name"]))
    return [
        {
            "name": entry["name"],
            "signature": entry["signature"],
            "summary": entry["summary"],
            "score": round(score, 2),
        }
        for score, entry in scored[: max(limit, 0)]
    ]


def get_function_docs(name: str, *, settings: Settings | None = None) -> dict[str, str]:
    """Full docs of one function by full name (`scipy.signal.butter`) or short name."""
    entries = _load(settings)
    wanted = name.strip()
    for entry in entries:
        if entry["name"] == wanted:
            return {key: str(value) for key, value in entry.items()}
    matches = [e for e in entries if e["name"].rsplit(".", 1)[-1] == wanted.rsplit(".", 1)[-1]]
    if len(matches) == 1:
        return {key: str(value) for key, value in matches[0].items()}
    if matches:
        options = ", ".join(e["name"] for e in matches)
        raise UserError(f"'{name}' is ambiguous: use one of {options}.")
    raise UserError(
        f"No documented function named '{name}' in {', '.join(DOCUMENTED_MODULES)}. "
        "Use search_function_docs to find the right name."
    )
