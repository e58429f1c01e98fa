"""A session as a runnable notebook: its requests again, one `%%xhelio` cell each."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["session_notebook", "write_session_notebook"]


def session_notebook(requests: list[str], title: str = "") -> Any:
    """A notebook (nbformat v4) that loads xhelio and asks `requests` in order."""
    import nbformat.v4 as nbf

    heading = f"# {title or 'xhelio session'}\n\nExported {datetime.now():%Y-%m-%d %H:%M}."
    cells = [nbf.new_markdown_cell(heading), nbf.new_code_cell("%load_ext xhelio")]
    cells += [nbf.new_code_cell(f"%%xhelio\n{r.strip()}") for r in requests if r.strip()]
    return nbf.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


def write_session_notebook(history: list[dict[str, Any]], path: Path, title: str = "") -> Path:
    """Write the user requests of a session's `history` as a notebook at `path`."""
    import nbformat

    requests = [str(m.get("content", "")) for m in history if m.get("role") == "user"]
    nbformat.write(session_notebook(requests, title), str(path))
    return path
