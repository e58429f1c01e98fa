"""A vector rotated into the frame a request asks ("rotate B from GSE into GSM").

The frame the fetched parameter is in is read off its catalog name, units and
description; the rotation between the geophysical frames (GEI, GEO, GSE, GSM, SM) is
`analysis.rotate_frame` (Hapgood 1992). A parameter already in the target frame is used
as it is; a frame this cannot rotate (RTN, a spacecraft frame) is said, never plotted as
if rotated.
"""

from __future__ import annotations

from dataclasses import replace

from xhelio.analysis.geoframes import GEOPHYSICAL_FRAMES, REFERENCE
from xhelio.catalog.model import ParameterInfo
from xhelio.language.intent import OperationWish, QuantityWish, RequestIntent
from xhelio.language.resolve import Candidate
from xhelio.vocabulary import load_vocabulary

__all__ = ["parameter_frame", "rotation_code", "source_frames"]


def source_frames(intent: RequestIntent, wishes: list[QuantityWish]) -> list[QuantityWish]:
    """The vector wishes asked in the rotation's source frame (never its target).

    "rotate B from GSE into GSM": the field is fetched in GSE and rotated; with no source
    stated, a frame the parser took from the target word is let go.
    """
    op = intent.operation("rotate")
    if op is None:
        return wishes
    source, _, target = op.detail.partition(">")
    out: list[QuantityWish] = []
    for wish in wishes:
        if wish.quantity in ("magnetic_field", "velocity", "electric_field"):
            frame = source or (None if wish.frame == target else wish.frame)
            component = "vector" if wish.component in (None, "magnitude") else wish.component
            wish = replace(wish, frame=frame, component=component)
        out.append(wish)
    return out


def parameter_frame(p: ParameterInfo) -> str | None:
    """The frame a vector parameter is in, from its name, units and description."""
    words = load_vocabulary().frame_words
    for text in (p.description, p.units, p.name.replace("_", " ")):
        match = words.search(text or "")
        if match is not None:
            return match[0].upper()
    upper = p.name.upper()  # "BGSE", "B1GSM", "BGSEc": the frame inside the name
    return next((f for f in sorted(GEOPHYSICAL_FRAMES, key=len, reverse=True) if f in upper), None)


def rotation_code(
    op: OperationWish, cands: list[Candidate], parameter: ParameterInfo | None
) -> tuple[str | None, str]:
    """(sandbox code or None, what the answer says) for the rotation `op` asks."""
    target = op.detail.partition(">")[2]
    frame = parameter_frame(parameter) if parameter is not None else None
    name = f"{cands[0].dataset_id}.{cands[0].parameter}" if cands else "the series"
    if frame == target:
        return None, f"{name} is already in {target}: used as it is, nothing rotated."
    if frame in GEOPHYSICAL_FRAMES and target in GEOPHYSICAL_FRAMES:
        code = (
            f"# {frame} -> {target}: Hapgood (1992) rotation, IGRF-13 dipole axis\n"
            f"result = analysis.rotate_frame(df, {frame!r}, {target!r})"
        )
        return code, f"Rotated {name} from {frame} into {target} (method: {REFERENCE})."
    if frame is None:
        return None, (
            f"Could not honour the rotation into {target}: the catalog does not say which "
            f"frame {name} is in; shown as fetched, which differs from the request."
        )
    return None, (
        f"Could not honour the rotation into {target}: {name} is in {frame}, and a rotation "
        f"from {frame} needs the spacecraft's position or attitude, which offline mode does "
        f"not have; shown in {frame}, which differs from the request."
    )
