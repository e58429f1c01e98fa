"""Another commit of this repository checked out for a benchmark to run against.

Benchmarks compare this checkout with an earlier commit in the same run (same machine,
same load): `checkout(rev)` yields that commit's ``src`` folder, to put first on
``PYTHONPATH`` of a child process, and removes the temporary git worktree afterwards.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def checkout(rev: str | None) -> Generator[Path | None]:
    """The ``src`` folder of `rev` checked out in a temporary git worktree (None: none)."""
    if rev is None:
        yield None
        return
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="xhelio-bench-rev-") as name:
        folder = Path(name) / "tree"
        subprocess.run(
            ["git", "-C", str(repo), "worktree", "add", "--detach", str(folder), rev],
            check=True,
            capture_output=True,
        )
        try:
            yield folder / "src"
        finally:
            subprocess.run(
                ["git", "-C", str(repo), "worktree", "remove", "--force", str(folder)],
                check=False,
                capture_output=True,
            )
