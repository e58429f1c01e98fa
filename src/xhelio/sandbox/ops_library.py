"""Library of proven custom operations, so the model can reuse code that worked.

Stored code is shown to the model later as "proven", so it must never become a way to
carry an injected payload from one conversation (or one user) to another:

* every entry belongs to one user (`OpsLibrary(settings, user=...)`; "local" for the
  single-user CLI); no query ever returns another user's entries;
* code is stored only after a separate review (`review_operation`), stricter than the
  sandbox's validation: it must pass the AST allowlist again, is stored in canonical
  form (`ast.unparse`, so comments, where instructions could hide, are gone), and may
  hold only short string literals without URLs, paths or prose (checked after Unicode
  compatibility folding, also on literals joined with `+`, `str.join` or f-strings),
  no characters built from numbers (`chr`), short numbers, and identifiers (names,
  functions, arguments, keywords, attributes) that are not sentences in disguise
  (`ignore_previous_instructions_and_...`); the description must be one short line.
  Code that fails the review still ran; it is just not kept;
* a database of the older, shared and unreviewed format is set aside (table
  `ops_unreviewed_legacy`), never served.

Successful `custom_operation` code of 5+ meaningful lines is kept (short operations such
as a magnitude are cheap to regenerate). Entries are deduplicated by normalised
description (a repeat bumps `use_count`), capped (default 50) with least-used eviction,
ties broken by the oldest `last_used_at`; the entry just recorded is never the one
evicted. A description containing `[from <id>]` marks reuse of that entry and bumps it.
What later models read is behaviour, never free text the code carried
(`ops_summary`): the stored code has neutral names (`v1`, `f1`, ...) and only parameter
tokens or real column labels as strings, and the stored description is generated from
the code (inputs, result kind, units, library calls); the author's description only
deduplicates. `custom_operation` keeps code only when its run was clean (no warnings,
non-empty result) on real, fetched data.
Stored in SQLite (WAL) at `settings.home / "ops_library.sqlite"`; never pickle.
Imports nothing from xhelio but `config`, `errors`, `sandbox.ops_summary`,
`sandbox.validate` and `analysis.namespace`.
"""

from __future__ import annotations

import ast
import json
import re
import sqlite3
import threading
import unicodedata
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import cast

import numpy as np
import pandas as pd
import pywt
import scipy
import xarray as xr

from xhelio.analysis.namespace import sandbox_module
from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.migrations import Migration, columns, migrate, sql
from xhelio.sandbox.ops_summary import ProvingRun, neutral_code, summarize
from xhelio.sandbox.validate import validate_code

__all__ = [
    "MIN_CODE_LINES",
    "OpsEntry",
    "OpsLibrary",
    "ProvingRun",
    "Review",
    "normalize_description",
    "review_operation",
    "served_form",
]

MIN_CODE_LINES = 5
DEFAULT_MAX_ENTRIES = 50
_REUSE_MARK = re.compile(r"\[from\s+([0-9a-f]{6,32})\]", re.IGNORECASE)

DEFAULT_USER = "local"
MAX_CODE_CHARS = 4_000
MAX_CODE_LINES = 60
MAX_DESCRIPTION_CHARS = 200
MAX_LITERAL_CHARS = 48
MAX_IDENTIFIER_WORDS = 4  # `cumulative_trapezoid`, `min_periods`: a sentence has more
MAX_IDENTIFIER_CHARS = 40
MAX_NUMBER_CHARS = 24  # a longer numeral is an encoded payload, not a parameter
MAX_ATTRIBUTE_WORDS = 6  # library API names run longer (`CloughTocher2DInterpolator`)
_IDENTIFIER_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_PROSE = re.compile(r"(\S+\s+){4,}\S")  # five words or more: prose, not a column name
_LOCATOR = re.compile(r"://|^[/~\\]|\\|\.\.|@")
_DESCRIPTION_LOCATOR = re.compile(r"://|\bwww\.|@|\\|~/")  # "nT/s" stays fine

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ops (
    id TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    reviewed TEXT NOT NULL,
    description TEXT NOT NULL,
    normalized TEXT NOT NULL,
    code TEXT NOT NULL,
    source_labels TEXT NOT NULL,
    use_count INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT NOT NULL,
    last_used_seq INTEGER NOT NULL,
    UNIQUE (user, normalized)
)
"""
_REVIEW_VERSION = "review-2"  # neutral code and a generated summary
_LIBRARIES = {
    "np": np, "pd": pd, "xr": xr, "scipy": scipy, "pywt": pywt, "analysis": sandbox_module()
}  # fmt: skip
_UNPROVEN = ProvingRun(real_data=False, clean=False, input_columns=(), output_kind="result")


def _set_aside_shared_table(db: sqlite3.Connection) -> None:
    """The older format was shared and unreviewed: kept aside, never served."""
    found = columns(db, "ops")
    if found and "user" not in found:
        db.execute("DROP TABLE IF EXISTS ops_unreviewed_legacy")
        db.execute("ALTER TABLE ops RENAME TO ops_unreviewed_legacy")


_MIGRATIONS = (
    Migration(1, "an older shared, unreviewed ops table set aside", _set_aside_shared_table),
    Migration(2, "ops table (per user, reviewed)", sql(_SCHEMA)),
)


@dataclass(frozen=True)
class OpsEntry:
    """One saved operation: its code, what it does, and how often it was used."""

    id: str
    description: str
    code: str
    source_labels: tuple[str, ...]
    use_count: int
    created_at: str
    last_used_at: str


def normalize_description(description: str) -> str:
    """Lower-case words only, without reuse marks, so rephrasings of case/space match."""
    text = _REUSE_MARK.sub(" ", description.lower())
    return " ".join(re.findall(r"[a-z0-9]+", text))


@dataclass(frozen=True)
class Review:
    """Outcome of `review_operation`: the canonical code to store, or why not."""

    accepted: bool
    code: str
    description: str
    reasons: tuple[str, ...]


def _text_problem(text: str) -> str | None:
    """Why a piece of text a later model will read is not kept, or None."""
    folded = unicodedata.normalize("NFKC", text)  # fullwidth colon and slashes read as '://'
    if len(folded) > MAX_LITERAL_CHARS:
        return f"a {len(folded)}-character string literal"
    if _LOCATOR.search(folded):
        return f"a string naming a URL, path or address ({folded[:30]!r})"
    if _PROSE.search(folded):
        return f"a string of prose ({folded[:30]!r})"
    return None


def _joined_text(node: ast.expr) -> str | None:
    """The text of a string built only from literals (`'a' + 'b'`, f-strings), or None."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = [_joined_text(value) for value in node.values]
        return " ".join(part for part in parts if part)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left, right = _joined_text(node.left), _joined_text(node.right)
        if left is not None and right is not None:
            return left + right
        return left if right is None else right
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and node.args
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        separator = _joined_text(node.func.value) or ""
        parts = [_joined_text(item) or "" for item in node.args[0].elts]
        return separator.join(parts)
    return None


def _identifier_problem(name: str, max_words: int = MAX_IDENTIFIER_WORDS) -> str | None:
    words = _IDENTIFIER_WORD.findall(name)
    if len(name) > MAX_IDENTIFIER_CHARS or len(words) > max_words:
        return f"an identifier that reads as prose ({name[:30]!r})"
    return None


def _identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.FunctionDef):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.ExceptHandler) and node.name:
        return [node.name]
    return []


def _literal_problems(tree: ast.AST) -> list[str]:
    """Literals, numbers and identifiers that could carry a payload to a later model."""
    problems: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and not isinstance(node, ast.Name | ast.Attribute):
            text = _joined_text(node)
            problem = _text_problem(text) if text is not None else None
            if problem:
                problems.append(problem)
        number = isinstance(node, ast.Constant) and isinstance(node.value, int | float | complex)
        if number and len(repr(cast(ast.Constant, node).value)) > MAX_NUMBER_CHARS:
            problems.append("a number too long to be a parameter")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "chr":
            problems.append("characters built from numbers (chr)")
        limit = MAX_ATTRIBUTE_WORDS if isinstance(node, ast.Attribute) else MAX_IDENTIFIER_WORDS
        for name in _identifiers(node):
            problem = _identifier_problem(name, limit)
            if problem:
                problems.append(problem)
    return problems


def review_operation(code: str, description: str) -> Review:
    """The separate review code must pass before it is kept as a proven operation.

    Stricter than the sandbox's validation, because a kept operation is shown to the
    model again later: canonical form only (no comments), short literals only (no
    URLs, paths or prose that could carry instructions), a one-line description.
    """
    reasons: list[str] = []
    canonical = ""
    if len(code) > MAX_CODE_CHARS or code.count("\n") >= MAX_CODE_LINES:
        reasons.append("code longer than a reusable operation")
    else:
        try:
            tree = validate_code(code)
            canonical = ast.unparse(tree)
            validate_code(canonical)  # the canonical form must pass on its own too
            reasons += _literal_problems(tree)
        except SandboxError as exc:
            reasons.append(f"fails sandbox validation: {exc.message[:200]}")
    clean = " ".join(_REUSE_MARK.sub(" ", description).split())
    if len(clean) > MAX_DESCRIPTION_CHARS:
        reasons.append("description longer than one short line")
    if not clean.isprintable() or _DESCRIPTION_LOCATOR.search(clean):
        reasons.append("description with control characters, URLs or addresses")
    return Review(not reasons, canonical, clean, tuple(reasons))


def _proven_review(code: str, description: str, run: ProvingRun | None) -> Review:
    """`review_operation`, then the proving run and the neutral form (see `ops_summary`)."""
    review = review_operation(code, description)
    if not review.accepted:
        return review
    if run is not None and not (run.real_data and run.clean):
        why = "no real (fetched) data" if not run.real_data else "warnings or an empty result"
        return Review(False, "", review.description, (f"not proven: the run had {why}",))
    shown_run = run or _UNPROVEN
    neutral, problems = neutral_code(review.code, shown_run)
    if problems:
        return Review(False, "", review.description, tuple(problems))
    summary = summarize(review.code, shown_run, len(set(_inputs(review.code))), _LIBRARIES)
    return Review(True, neutral, summary, ())


def _inputs(code: str) -> list[str]:
    """The inputs the code reads: `df` and each `sources[...]` subscript."""
    tree = ast.parse(code)
    found = ["df"] if any(isinstance(n, ast.Name) and n.id == "df" for n in ast.walk(tree)) else []
    for node in ast.walk(tree):
        value = node.value if isinstance(node, ast.Subscript) else None
        if isinstance(value, ast.Name) and value.id == "sources":
            found.append(ast.unparse(cast(ast.Subscript, node).slice))
    return found or ["df"]


def served_form(code: str) -> str:
    """The form in which kept code is stored and shown (to compare code with entries)."""
    try:
        return neutral_code(ast.unparse(ast.parse(code)), _UNPROVEN)[0]
    except SyntaxError:
        return code


def _meaningful_lines(code: str) -> int:
    return sum(1 for line in code.splitlines() if line.strip() and not line.strip().startswith("#"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _entry(row: sqlite3.Row) -> OpsEntry:
    return OpsEntry(
        id=row["id"],
        description=row["description"],
        code=row["code"],
        source_labels=tuple(json.loads(row["source_labels"])),
        use_count=int(row["use_count"]),
        created_at=row["created_at"],
        last_used_at=row["last_used_at"],
    )


class OpsLibrary:
    """The persistent library of proven custom-operation code."""

    def __init__(
        self,
        settings: Settings,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        user: str = DEFAULT_USER,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if not user.strip():
            raise ValueError("user must be a non-empty identifier")
        self.path = settings.home / "ops_library.sqlite"
        self.max_entries = max_entries
        self.user = user
        self.rejected: list[Review] = []  # reviews refused in this instance (for logs)
        self._lock = threading.Lock()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            migrate(db, _MIGRATIONS, str(self.path))

    @contextmanager
    def _connect(self) -> Generator[sqlite3.Connection, None, None]:
        """A connection committed on success, rolled back on error, always closed."""
        db = sqlite3.connect(self.path, timeout=30)
        db.row_factory = sqlite3.Row
        try:
            with db:
                yield db
        finally:
            db.close()

    def record(
        self,
        code: str,
        description: str,
        source_labels: list[str],
        run: ProvingRun | None = None,
    ) -> OpsEntry | None:
        """Save successful code once it passed review; None when too short or refused.

        `run` is the run that proves it (custom_operation passes it): the code is kept
        only when that run was clean and read real data. What is stored for later
        models is `neutral_code` and a `summarize`d description, never the author's.
        Without `run` (an explicit save of a pipeline step) the code is not proven
        anew, and the same neutral form and summary are stored.
        """
        reused = _REUSE_MARK.search(description)
        if reused:
            self.bump(reused.group(1).lower())
        if _meaningful_lines(code) < MIN_CODE_LINES:
            return None
        normalized = normalize_description(description)
        if not normalized:
            return None
        review = _proven_review(code, description, run)
        if not review.accepted:
            self.rejected.append(review)
            return None
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT id FROM ops WHERE user = ? AND normalized = ?", (self.user, normalized)
            ).fetchone()
            if row is not None:
                self._touch(db, row["id"])
                entry_id = str(row["id"])
            else:
                entry_id = uuid.uuid4().hex[:12]
                now = _now()
                db.execute(
                    "INSERT INTO ops VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
                    (
                        entry_id,
                        self.user,
                        _REVIEW_VERSION,
                        review.description,
                        normalized,
                        review.code,
                        json.dumps([str(label)[:256] for label in source_labels]),
                        now,
                        now,
                        self._next_seq(db),
                    ),
                )
                self._evict(db, keep=entry_id)
            found = db.execute("SELECT * FROM ops WHERE id = ?", (entry_id,)).fetchone()
        return _entry(found)

    def top(self, n: int = 20) -> list[OpsEntry]:
        """The most used entries (most recently used first among equals)."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT * FROM ops WHERE user = ? "
                "ORDER BY use_count DESC, last_used_seq DESC LIMIT ?",
                (self.user, max(n, 0)),
            ).fetchall()
        return [_entry(row) for row in rows]

    def bump(self, entry_id: str) -> OpsEntry | None:
        """Count one more use of an entry; None when no such entry exists."""
        with self._lock, self._connect() as db:
            if not self._touch(db, entry_id):
                return None
            row = db.execute(
                "SELECT * FROM ops WHERE id = ? AND user = ?", (entry_id, self.user)
            ).fetchone()
        return _entry(row)

    def get(self, entry_id: str) -> OpsEntry | None:
        """One entry by id, or None."""
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM ops WHERE id = ? AND user = ?", (entry_id, self.user)
            ).fetchone()
        return None if row is None else _entry(row)

    def _next_seq(self, db: sqlite3.Connection) -> int:
        (current,) = db.execute(
            "SELECT COALESCE(MAX(last_used_seq), 0) FROM ops WHERE user = ?", (self.user,)
        ).fetchone()
        return int(current) + 1

    def _touch(self, db: sqlite3.Connection, entry_id: str) -> bool:
        cursor = db.execute(
            "UPDATE ops SET use_count = use_count + 1, last_used_at = ?, last_used_seq = ? "
            "WHERE id = ? AND user = ?",
            (_now(), self._next_seq(db), entry_id, self.user),
        )
        return cursor.rowcount > 0

    def _evict(self, db: sqlite3.Connection, keep: str) -> None:
        (count,) = db.execute("SELECT COUNT(*) FROM ops WHERE user = ?", (self.user,)).fetchone()
        excess = int(count) - self.max_entries
        if excess > 0:
            db.execute(
                "DELETE FROM ops WHERE id IN (SELECT id FROM ops WHERE user = ? AND id != ? "
                "ORDER BY use_count ASC, last_used_seq ASC LIMIT ?)",
                (self.user, keep, excess),
            )
