"""`GET /sessions/{id}/report?format=html|md`: a session's report, built from its record.

The HTML is one self-contained page (Plotly.js inside), served inline so the web app's
"Report" button opens it in a tab; `download=true` asks the browser to save it instead.
It carries its own Content-Security-Policy (`REPORT_POLICY`) in place of the API's
allow-nothing one, so its figures draw.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Response

from xhelio.report import build_report, render
from xhelio.server.deps import ServerState, server_state

__all__ = ["router"]

router = APIRouter(tags=["sessions"])
State = Annotated[ServerState, Depends(server_state)]

_MEDIA = {"html": "text/html; charset=utf-8", "md": "text/markdown; charset=utf-8"}
REPORT_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'unsafe-inline'",
        "style-src 'unsafe-inline'",
        "img-src data: blob:",
        "frame-ancestors 'none'",
        "sandbox allow-scripts allow-popups allow-downloads",
    )
)
"""The report runs only its own inline scripts (Plotly.js and the figures; every text from
the session is escaped), in a sandbox: an opaque origin with no access to the app or its
cookies, and no network at all."""


@router.get("/sessions/{session_id}/report")
def session_report(
    session_id: str,
    state: State,
    format: Annotated[Literal["html", "md"], Query(description="html or md")] = "html",
    download: bool = False,
) -> Response:
    """The session's report: question, steps, figures, numbers, citations, how to rerun."""
    workspace = state.assistant.hub.view(session_id)
    text = render(build_report(workspace.session), format)
    disposition = "attachment" if download else "inline"
    headers = {
        "Content-Disposition": f'{disposition}; filename="xhelio-{session_id}.{format}"',
        "Content-Security-Policy": REPORT_POLICY,
    }
    return Response(text, media_type=_MEDIA[format], headers=headers)
