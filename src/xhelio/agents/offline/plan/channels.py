"""An energy spectrum of an instrument that keeps each energy channel as its own parameter.

When no parameter of a source is a spectrum array (energy bins on one variable) but a
dataset of the source has a family of channel parameters (`language.channels`), the
channels are fetched and drawn as lines on one log panel, ordered by energy, each named
by its range; the answer says so. The dataset is one covering the time asked, at the
cadence asked or else the one closest to a few hundred records over the window.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import datetime

from xhelio.agents.offline.plan.series import series_chain
from xhelio.agents.offline.plan.steps import Builder, Source
from xhelio.language.channels import EnergyChannel, energy_channels, words_in
from xhelio.language.intent import QuantityWish
from xhelio.language.resolve import Candidate
from xhelio.sources.sizing import cadence_seconds
from xhelio.timerange import TimeRange

__all__ = ["channel_series", "short_of_request"]

# Without a cadence asked, the dataset whose cadence gives about this many records.
_RECORDS = 500
_DIFFERS = "Differs from the request"


def channel_series(
    b: Builder,
    source: Source,
    wish: QuantityWish,
    span: TimeRange,
    finals: list[tuple[str, str, str]],
    rival: Candidate | None = None,
) -> bool:
    """Fetch `source`'s energy channels for the spectrum `wish` into `finals`; False if none.

    `rival` is a spectrum parameter the ranking offered although it falls short: without
    data for the time asked, channels with data win; lacking a product the request named,
    channels win when their dataset's id and title say more of the request.
    """
    words = re.findall(r"[A-Za-z]\w+", source.text or b.intent.text)
    found = [
        (family, cadence_seconds(info.cadence))
        for info in source.datasets
        if _covers(info.start, info.stop, span)
        and (family := energy_channels(info, wish.species, words)) is not None
    ]
    if not found:
        return False
    wanted = b.intent.cadence_s or span.duration.total_seconds() / _RECORDS
    # The species and words asked first, then the cadence nearest the one wanted.
    family, _ = max(found, key=lambda f: (*f[0].fit, -abs(math.log((f[1] or wanted) / wanted))))
    if rival is not None:
        info = b.vocab.catalog.dataset(rival.dataset_id)
        timely = _covers(info.start, info.stop, span)
        if family.fit[0] == 0 or (timely and family.fit[1] <= words_in(info, words)):
            return False
    dataset, chans = family.dataset_id, list(family.channels)
    group = f"channels:{dataset}"
    for channel in chans:
        cand = Candidate(dataset, channel.parameter, channel.units, 1, 0.0, "energy channel")
        one = replace(wish, quantity="particle_flux", text=channel.label, component=None)
        ref = f"s{len(finals) + 1}"
        final, _ = series_chain(b, source, one, span, ref, [cand])
        finals.append((final, f"{source.name} {channel.label}", group))
    b.notes.append(_said(dataset, chans))
    return True


def short_of_request(
    b: Builder, cands: list[Candidate], window: TimeRange | None
) -> Candidate | None:
    """The best candidate when it falls short, else None.

    Short: it says it differs from the request, or its dataset has no data for the time.
    """
    if not cands:
        return None
    if any(n.startswith(_DIFFERS) for n in cands[0].notes):
        return cands[0]
    info = b.vocab.catalog.dataset(cands[0].dataset_id)
    if window is not None and not _covers(info.start, info.stop, window):
        return cands[0]
    return None


def _covers(start: datetime | None, stop: datetime | None, span: TimeRange) -> bool:
    return (start is None or start < span.end) and (stop is None or stop > span.start)


def _said(dataset: str, chans: list[EnergyChannel]) -> str:
    first, last = chans[0], chans[-1]
    what = re.sub(r"[\s,;(]*#[\s,;)]*", " ", first.family).strip(" ,;")
    return (
        f"{dataset} has no spectrum variable: it keeps each energy channel as its own "
        f"parameter ({first.parameter}..{last.parameter}, {what}). "
        f"Drawn as {len(chans)} channel lines on one log panel, lowest energy first "
        f"({first.low:g}-{last.high:g} {first.unit}), not as a spectrogram."
    )
