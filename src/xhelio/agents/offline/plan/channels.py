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

from xhelio.agents.offline.plan.series import add_compute, series_chain
from xhelio.agents.offline.plan.steps import Builder, Source, label_tag
from xhelio.language.channels import EnergyChannel, energy_channels, words_in
from xhelio.language.intent import QuantityWish
from xhelio.language.resolve import Candidate
from xhelio.sources.sizing import cadence_seconds
from xhelio.timerange import TimeRange

__all__ = ["channel_series", "short_of_request"]

# Without a cadence asked, the dataset whose cadence gives about this many records.
_RECORDS = 500
_DIFFERS = "Differs from the request"
# A spectrogram asked (not a spectrum): the channels become one heatmap over energy.
_SPECTROGRAM = re.compile(r"spectrogram|dynamic spectr|energy[- ]time|heat ?map", re.I)


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
    heatmap = bool(_SPECTROGRAM.search(wish.text))
    group = f"channels:{dataset}"
    refs: list[str] = []
    for n, channel in enumerate(chans):
        cand = Candidate(dataset, channel.parameter, channel.units, 1, 0.0, "energy channel")
        one = replace(wish, quantity="particle_flux", text=channel.label, component=None)
        ref = f"s{len(finals) + 1}" if not heatmap else b.unique(f"{label_tag(dataset)}_ch{n}")
        final, _ = series_chain(b, source, one, span, ref, [cand])
        refs.append(final)
        if not heatmap:
            finals.append((final, f"{source.name} {channel.label}", group))
    if heatmap:
        finals.append(_stacked(b, source, dataset, chans, refs))
    b.notes.append(_said(dataset, chans, heatmap))
    return True


def _stacked(
    b: Builder, source: Source, dataset: str, chans: list[EnergyChannel], refs: list[str]
) -> tuple[str, str, str]:
    """One (time, energy) array of the channels, each cell its own energy range.

    The channels' energy ranges (from their descriptions) become the cells of the
    spectrogram's y axis, in the family's energy unit (keV when the channels mix units).
    """
    unit = chans[0].unit if len({c.unit for c in chans}) == 1 else "keV"
    scale = [1.0 if unit == c.unit else c.low_kev / c.low for c in chans]
    lows = [c.low * k for c, k in zip(chans, scale, strict=True)]
    highs = [c.high * k for c, k in zip(chans, scale, strict=True)]
    names = [c.parameter for c in chans]
    code = (
        "frame = pd.concat([d.iloc[:, 0] for d in sources.values()], axis=1)\n"
        "times = pd.DatetimeIndex(frame.index)\n"
        "times = times.tz_convert(None) if times.tz is not None else times\n"
        f"low = np.array({lows!r})\n"
        f"high = np.array({highs!r})\n"
        "result = xr.DataArray(frame.to_numpy(dtype=float), dims=('time', 'energy'),\n"
        "    coords={'time': times, 'energy': np.sqrt(low * high),\n"
        "            'energy_low': ('energy', low), 'energy_high': ('energy', high),\n"
        f"            'channel': ('energy', {names!r})}})\n"
        "for key in ('energy', 'energy_low', 'energy_high'):\n"
        f"    result.coords[key].attrs.update(units={unit!r}, long_name='Energy')\n"
    )
    label = b.unique(f"{label_tag(dataset)}_spectrogram")
    what = f"{source.name} {chans[0].parameter}..{chans[-1].parameter} channels as a spectrogram"
    add_compute(b, what, tuple(refs), label, code, _family_name(chans), chans[0].units)
    return label, f"{source.name} {_family_name(chans)}", "spectrogram"


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


def _family_name(chans: list[EnergyChannel]) -> str:
    """What the channels measure, from their descriptions' shared words."""
    return re.sub(r"[\s,;(]*#[\s,;)]*", " ", chans[0].family).strip(" ,;")


def _said(dataset: str, chans: list[EnergyChannel], heatmap: bool = False) -> str:
    first, last = chans[0], chans[-1]
    how = (
        f"Drawn as a spectrogram of its {len(chans)} channels, each cell spanning the "
        f"channel's energy range ({first.low:g} {first.unit} to {last.high:g} {last.unit})."
        if heatmap
        else f"Drawn as {len(chans)} channel lines on one log panel, lowest energy first "
        f"({first.low:g}-{last.high:g} {first.unit}), not as a spectrogram."
    )
    return (
        f"{dataset} has no spectrum variable: it keeps each energy channel as its own "
        f"parameter ({first.parameter}..{last.parameter}, {_family_name(chans)}). {how}"
    )
