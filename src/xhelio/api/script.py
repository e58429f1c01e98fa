"""`ToolSession`: the small public entry point exported pipeline scripts are written against.

A throwaway (ephemeral) session whose `call(tool, **args)` goes through the same tool
funnel as every agent and replay, and raises `PipelineStepError` on a failed call so a
script stops at the first real problem with the tool's own message; `call_optional` only
reports the failure of a non-critical step, as replay does. `data(label)` gives a
DataFrame, `figure()` the resolved Plotly figure, `write_outputs(folder)` the data as
parquet, the figure as JSON and (when a browser is available) PNG. Settings come from the
environment as for the CLI (`XHELIO_HOME`, `XHELIO_HAPI_URL`, ...).

    from xhelio.api.script import ToolSession
    with ToolSession() as xh:
        xh.call("fetch_data", dataset_id="AC_H2_MFI", parameter_id="Magnitude",
                time_range="2001-03-01 to 2001-04-01")
        xh.write_outputs("out")
"""

from __future__ import annotations

import json
import shutil
import weakref
from pathlib import Path
from types import TracebackType
from typing import Any

import pandas as pd

from xhelio.errors import UserError, XhelioError
from xhelio.tools.data_tools import frame_of
from xhelio.tools.workspace import Workspace, open_workspace

__all__ = ["PipelineStepError", "ToolSession"]


class PipelineStepError(XhelioError):
    """A tool call of a script failed; the message is the tool's own."""


class ToolSession:
    """An ephemeral session for scripts: call tools, read data, write outputs."""

    def __init__(self, caller: str = "script") -> None:
        self.caller = caller
        self.workspace: Workspace = open_workspace(ephemeral=True)
        # a notebook never calls close(): the throwaway folder and the sandbox worker
        # still go when the session object is collected or the kernel exits
        self._finalizer = weakref.finalize(self, self.workspace.close)

    def __enter__(self) -> ToolSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        """Run one tool through the funnel; raise `PipelineStepError` when it fails."""
        result = self.workspace.funnel.call(tool, args, caller=self.caller)
        if not result.ok:
            raise PipelineStepError(f"{tool} failed: {result.error_type}: {result.error}")
        return result.to_dict()

    def call_optional(self, tool: str, **args: Any) -> dict[str, Any]:
        """Run a non-critical step (styling, a file export): a failure is printed, not raised.

        Replay logs such failures and goes on; a script does the same so one bad style
        edit does not cost the data and the figure.
        """
        result = self.workspace.funnel.call(tool, args, caller=self.caller)
        if not result.ok:
            print(f"skipped: {tool} failed: {result.error_type}: {result.error}")
        return result.to_dict()

    @property
    def labels(self) -> list[str]:
        """Labels of the data in memory."""
        return [e.label for e in self.workspace.session.store]

    def data(self, label: str) -> pd.DataFrame:
        """One stored entry as a DataFrame (2-D data: one column per bin)."""
        return frame_of(self.workspace.session.store.get(label))

    def figure(self) -> dict[str, Any]:
        """The current figure as Plotly JSON, with its data filled in."""
        current = self.workspace.session.plot.current
        if current is None:
            raise UserError("There is no figure: nothing was plotted.")
        return current.figure

    def write_outputs(self, folder: str | Path, png: bool = True) -> list[Path]:
        """Write every entry as parquet, the files of export steps, the figure as JSON and PNG."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        for label in self.labels:
            path = out / f"{label}.parquet"
            self.data(label).to_parquet(path)
            written.append(path)
        # files the pipeline's own export steps wrote (HTML, PDF, CSV) would otherwise
        # vanish with the throwaway session
        exports = self.workspace.session.folder / "exports"
        for made in sorted(exports.glob("*")) if exports.is_dir() else []:
            if made.is_file():
                written.append(Path(shutil.copyfile(made, out / made.name)))
        plot = self.workspace.session.plot
        if plot.current is not None:
            path = out / "figure.json"
            path.write_text(json.dumps(plot.current.figure, default=str), encoding="utf-8")
            written.append(path)
            if png:
                try:
                    image = plot.export("png", "figure.png")
                except XhelioError as exc:  # no browser: the JSON and data still stand
                    print(f"PNG not written: {exc.message}")
                else:
                    # copyfile, not copy: the export is a private temp file (mode 0600)
                    written.append(Path(shutil.copyfile(image, out / "figure.png")))
        return written

    def close(self) -> None:
        """Delete the throwaway session and stop its workers (once; later calls do nothing)."""
        self._finalizer()
