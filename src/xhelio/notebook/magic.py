"""The `%%xhelio` cell magic: the cell is one request in the kernel's xhelio session."""

from __future__ import annotations

from typing import Any

from xhelio.notebook.display import AnswerView

__all__ = ["CellAsker", "load_ipython_extension"]


class CellAsker:
    """One `Assistant` and one session per kernel; each cell is a turn in that session."""

    def __init__(self) -> None:
        self._assistant: Any = None
        self.session_id: str | None = None

    def ask(self, line: str, cell: str) -> AnswerView | None:
        """Answer the cell's text; `--new` on the magic line starts a new session."""
        question = cell.strip()
        if "--new" in line.split():
            self.session_id = None
        if not question:
            print("Write a request below %%xhelio, e.g. 'ACE magnetic field for 2024-01-15'.")
            return None
        if self._assistant is None:
            from xhelio.api import Assistant

            self._assistant = Assistant()
        response = self._assistant.run(question, session_id=self.session_id, include_data=True)
        self.session_id = response.session_id or self.session_id
        view = AnswerView(response)
        figure = view.figure_bundle()
        if figure is not None:
            from IPython.display import display

            display(figure, raw=True)
        return view


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext xhelio`: register the `%%xhelio` cell magic."""
    asker = CellAsker()
    ipython.register_magic_function(asker.ask, magic_kind="cell", magic_name="xhelio")
    ipython.push({"xhelio_session": asker}, interactive=True)
