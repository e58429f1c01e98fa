"""Offline mode parsing: missions, quantities, components, time phrases, wishes, discovery."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from xhelio.agents.offline.plan import build_plan
from xhelio.language.intent import RequestIntent
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.resolve import probe_wanted

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


def _parse(vocab: Vocabulary, text: str) -> RequestIntent:
    return parse_request(text, vocab, NOW)


@pytest.mark.parametrize(
    ("text", "missions", "probe"),
    [
        ("Show me ACE magnetic field last week", ["ace"], None),
        ("parker solar probe density 2023-06-20", ["psp"], None),
        ("PSP speed 2023-06-20", ["psp"], None),
        ("SolO B field 2022-03-01", ["solar-orbiter"], None),
        ("solar orbiter density 2022-03-01", ["solar-orbiter"], None),
        ("mms2 b field last 3 days", ["mms"], "2"),
        ("THEMIS-A density yesterday", ["themis"], "A"),
        ("themis c magnetic field 2020-01-01", ["themis"], "C"),
        ("STEREO-B plasma 2010-01-01", ["stereo"], "B"),
        ("Voyager 2 magnetic field 1989", ["voyager"], "2"),
        ("Compare Wind and ACE |B| in January 2024", ["wind", "ace"], None),
        ("Van Allen Probes A magnetic field 2015-03-17", ["rbsp"], "A"),
    ],
)
def test_missions_by_name_alias_and_probe(
    vocab: Vocabulary, text: str, missions: list[str], probe: str | None
) -> None:
    intent = _parse(vocab, text)
    assert [m.mission_id for m in intent.missions] == missions
    assert probe_wanted(intent.missions[0].text) == probe


@pytest.mark.parametrize(
    ("text", "missions", "probe"),
    [
        # "omni" before a flux is the look direction when the spacecraft is named otherwise
        ("rbsp-b mageis omni electron flux 2013-10-01", ["rbsp"], "B"),
        ("Proton omni intensities from STEREO-A LET, 2012-07-23", ["stereo"], "A"),
        ("omni ion flux, HOPE-A, 2015-03-17", ["rbsp"], "A"),
        ("omni-directional electron flux from MMS1 FEEPS 2017-09-08", ["mms"], "1"),
        # ... but OMNI's own flux, or OMNI beside another spacecraft's speed, is OMNI
        ("OMNI proton flux >10 MeV on 2017-09-10", ["omni"], None),
        ("OMNI flow speed vs Wind speed 2015-03-17", ["omni", "wind"], None),
        # an instrument one mission carries names it, with the probe written after it
        ("REPT B electron flux 2015-03-17", ["rbsp"], "B"),
        ("EMFISIS on probe A, |B| 2015-03-17", ["rbsp"], "A"),
    ],
)
def test_omni_as_a_look_direction_and_a_probe_after_its_instrument(
    vocab: Vocabulary, text: str, missions: list[str], probe: str | None
) -> None:
    intent = _parse(vocab, text)
    assert [m.mission_id for m in intent.missions] == missions
    assert probe_wanted(intent.missions[0].text) == probe
    assert not intent.unknown_names


def test_solar_wind_is_physics_not_the_wind_spacecraft(vocab: Vocabulary) -> None:
    intent = _parse(vocab, "solar wind speed at ACE on 2020-01-01")
    assert [m.mission_id for m in intent.missions] == ["ace"]
    assert [q.quantity for q in intent.quantities] == ["velocity"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ACE Bz 2024-01-01", [("magnetic_field", "z", None)]),
        ("IMF Bz GSM from OMNI on 2024-05-10", [("magnetic_field", "z", "GSM")]),
        ("the z component of the ACE magnetic field 2024-01-01", [("magnetic_field", "z", None)]),
        ("ACE |B| 2024-01-01", [("magnetic_field", "magnitude", None)]),
        ("ACE field strength 2024-01-01", [("magnetic_field", "magnitude", None)]),
        (
            "STEREO-A Bx and By 2012-07-23",
            [("magnetic_field", "x", None), ("magnetic_field", "y", None)],
        ),
        ("Wind velocity components in GSE 2020-01-01", [("velocity", "vector", "GSE")]),
        ("OMNI Dst and Kp 2015-03-17", [("dst", None, None), ("kp", None, None)]),
        ("AE index and SYM-H 2015-03-17", [("ae", None, None), ("sym_h", None, None)]),
        ("PSP proton temperature 2023-06-22", [("temperature", None, None)]),
        ("GOES energetic proton flux October 2003", [("particle_flux", None, None)]),
        ("where was Voyager 1 in 2012", [("position", None, None)]),
        ("OMNI flow pressure last 3 days", [("pressure", None, None)]),
        ("PSP radial velocity 2021-04-29", [("velocity", "r", None)]),
        (
            "ACE magnetic field components and its magnitude 2020-01-05",
            [("magnetic_field", "magnitude", None), ("magnetic_field", "vector", None)],
        ),
        (
            "Wind B field magnitude and components 2020-01-05",
            [("magnetic_field", "magnitude", None), ("magnetic_field", "vector", None)],
        ),
    ],
)
def test_quantities_components_and_frames(
    vocab: Vocabulary, text: str, expected: list[tuple[str, str | None, str | None]]
) -> None:
    intent = _parse(vocab, text)
    assert [(q.quantity, q.component, q.frame) for q in intent.quantities] == expected


def test_solar_wind_alone_means_field_speed_and_density(vocab: Vocabulary) -> None:
    intent = _parse(vocab, "plot the solar wind at ACE on 2019-05-10")
    assert [q.quantity for q in intent.quantities] == ["magnetic_field", "velocity", "density"]


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("ACE B from 2024-01-15 to 2024-01-20", "2024-01-15", "2024-01-21"),
        ("between 2005-01-01 and 2005-01-03 Cluster density", "2005-01-01", "2005-01-04"),
        ("SolO field Jan 5 to Jan 10 2024", "2024-01-05", "2024-01-11"),
        ("In March 2015, what was Dst", "2015-03-01", "2015-04-01"),
        ("Dst 2003", "2003-01-01", "2004-01-01"),
        ("OMNI Dst during the Halloween storm", "2003-10-28", "2003-11-02"),
        ("ACE B last week", "2026-11-15", "2026-11-22"),
        ("wind speed, 2020-03-01T06:00 to 2020-03-01T12:00", "2020-03-01", "2020-03-01"),
    ],
)
def test_time_phrase_found_inside_the_sentence(
    vocab: Vocabulary, text: str, start: str, end: str
) -> None:
    intent = _parse(vocab, text)
    assert intent.time_range is not None
    assert intent.time_range.start.date().isoformat() == start
    assert intent.time_range.end.date().isoformat() == end


def test_durations_are_not_years_or_time_ranges(vocab: Vocabulary) -> None:
    intent = _parse(vocab, "ACE |B| on 2024-01-02 smoothed over 2000 seconds and 1-hour averages")
    assert intent.time_range is not None and intent.time_range.start.year == 2024
    assert [(o.kind, o.window_s) for o in intent.operations] == [
        ("smooth", 2000.0),
        ("resample", 3600.0),
    ]


@pytest.mark.parametrize(
    ("text", "ops"),
    [
        ("ACE B 2024-01-01 smoothed over 10 minutes", [("smooth", 600.0)]),
        ("ACE B 2024-01-01 with a 30 min running mean", [("smooth", 1800.0)]),
        ("ACE B 2024-01-01, an hour moving average", [("smooth", 3600.0)]),
        ("ACE B 2024-01-01 smooth it", [("smooth", None)]),
        ("ACE B 2024-01-01 hourly averages", [("resample", 3600.0)]),
        ("ACE B 2024-01-01 resampled to 5 min", [("resample", 300.0)]),
        ("ACE B 2024-01-01 at 1-minute resolution", [("resample", 60.0)]),
        ("rate of change of ACE Bz 2024-01-01", [("derivative", None)]),
        ("ratio of ACE and Wind density 2020-01-01", [("ratio", None)]),
        ("ACE minus Wind Bz 2020-01-01", [("difference", None)]),
    ],
)
def test_operations(vocab: Vocabulary, text: str, ops: list[tuple[str, float | None]]) -> None:
    intent = _parse(vocab, text)
    assert [(o.kind, o.window_s) for o in intent.operations] == ops


def test_plot_wishes(vocab: Vocabulary) -> None:
    intent = _parse(
        vocab,
        "IMF Bz from OMNI on 2024-05-10, title 'Gannon storm Bz', in red, log scale, "
        "separate panels, save it as gannon.png",
    )
    assert intent.plot.title == "Gannon storm Bz"
    assert intent.plot.colours == ("red",)
    assert intent.plot.log_y and intent.plot.layout == "separate"
    assert (intent.plot.export_format, intent.plot.export_filename) == ("png", "gannon.png")
    assert intent.missions[0].mission_id == "omni"  # the title did not add missions


def test_title_words_do_not_leak_into_the_request(vocab: Vocabulary) -> None:
    intent = _parse(vocab, 'ACE density 2020-01-01 titled "Wind speed in 1999"')
    assert [m.mission_id for m in intent.missions] == ["ace"]
    assert [q.quantity for q in intent.quantities] == ["density"]
    assert intent.time_range is not None and intent.time_range.start.year == 2020


@pytest.mark.parametrize(
    ("text", "layout", "plot", "data_format"),
    [
        ("ACE and Wind speed 2020-01-01 overlaid", "overlay", True, None),
        ("ACE and Wind speed 2020-01-01 on the same panel", "overlay", True, None),
        ("ACE speed and density 2020-01-01 stacked", "separate", True, None),
        ("just fetch ACE speed 2020-01-01", "auto", False, None),
        ("ACE speed 2020-01-01, no plot, save the data as csv", "auto", False, "csv"),
    ],
)
def test_layout_plot_and_data_export(
    vocab: Vocabulary, text: str, layout: str, plot: bool, data_format: str | None
) -> None:
    intent = _parse(vocab, text)
    assert intent.plot.layout == layout
    assert intent.plot.wanted is plot
    assert intent.save_data_format == data_format


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What datasets does PSP have?", "browse"),
        ("list missions", "missions"),
        ("which spacecraft are in the catalog?", "missions"),
        ("what parameters are in AC_H2_MFI", "parameters"),
        ("describe ac_h0_mfi", "parameters"),
        ("when does AC_H2_MFI have data?", "availability"),
        ("search for electron density datasets", "search"),
        ("find datasets about ion composition", "search"),
    ],
)
def test_discovery_requests(vocab: Vocabulary, text: str, kind: str) -> None:
    intent = _parse(vocab, text)
    assert intent.discovery is not None and intent.discovery.kind == kind


def test_dataset_and_parameter_named_directly(vocab: Vocabulary) -> None:
    intent = _parse(vocab, "fetch AC_H0_MFI BGSEc 2024-01-01 to 2024-01-02 no plot")
    assert intent.dataset_ids == ("AC_H0_MFI",)
    assert intent.parameter_names == ("BGSEc",)
    assert intent.discovery is None and not intent.plot.wanted


def test_plan_records_are_plain_and_carry_candidates(vocab: Vocabulary) -> None:
    intent = _parse(vocab, "Compare Wind and ACE |B| on 2024-01-10 smoothed over 10 minutes")
    plan = build_plan(vocab, intent, NOW)
    kinds = [s.kind for s in plan.steps]
    assert kinds.count("fetch") == 2 and kinds[-1] == "plot"
    fetches = [s for s in plan.steps if s.kind == "fetch"]
    assert {s.role for s in fetches} == {"wind", "ace"}
    for step in fetches:
        assert len(step.calls) >= 2  # fallbacks are listed
        assert all(c.tool == "fetch_data" for c in step.calls)
        assert all("_MFI" in c.args["dataset_id"] for c in step.calls[:2])
    smooth = [s for s in plan.steps if s.kind == "compute" and "smoothed" in s.description]
    assert len(smooth) == 2 and all(s.role == "__data_ops__" for s in smooth)
    assert "rolling('600s'" in smooth[0].calls[0].args["code"]
    record = plan.to_dict()
    assert record["steps"][0]["calls"][0]["tool"] == "fetch_data"


@pytest.mark.parametrize(
    ("text", "needs"),
    [
        ("hello there", "a quantity"),
        ("plot something nice", "a quantity"),
        ("ACE magnetic field on 2024-02-30", "valid time range"),
        ("energetic particle flux 2003-10-29", "a mission"),
    ],
)
def test_missing_pieces_are_named(vocab: Vocabulary, text: str, needs: str) -> None:
    plan = build_plan(vocab, _parse(vocab, text), NOW)
    assert not plan.steps
    assert any(needs in m for m in plan.missing)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("MMS1 Bz on 2017-07-11 from 22:00 to 23:00", "2017-07-11T22:00", "2017-07-11T23:00"),
        ("THEMIS-D B 2008-02-26 04:00 to 06:00", "2008-02-26T04:00", "2008-02-26T06:00"),
        ("ACE B between 22:00 and 02:00 UT on 2020-01-01", "2020-01-01T22:00", "2020-01-02T02:00"),
        ("ACE B march 3 2020 from 3:00 to 5:30", "2020-03-03T03:00", "2020-03-03T05:30"),
        ("ACE proton speed 2024 DOY 100 to DOY 105", "2024-04-09T00:00", "2024-04-15T00:00"),
        ("ACE speed day 75 of 2015", "2015-03-16T00:00", "2015-03-17T00:00"),
        ("Wind B doy 32-35 2020", "2020-02-01T00:00", "2020-02-05T00:00"),
        ("OMNI temperature for the week of 2017-09-06", "2017-09-06T00:00", "2017-09-13T00:00"),
        ("ACE |B| for the first week of February 2024", "2024-02-01T00:00", "2024-02-08T00:00"),
        ("ACE B the second week of jan 2020", "2020-01-08T00:00", "2020-01-15T00:00"),
        ("ACE B last week of March 2023", "2023-03-25T00:00", "2023-04-01T00:00"),
        ("ACE B yesterday 10:00-12:00 UT", "2026-11-21T10:00", "2026-11-21T12:00"),
    ],
)
def test_clock_ranges_days_of_year_and_weeks(
    vocab: Vocabulary, text: str, start: str, end: str
) -> None:
    intent = _parse(vocab, text)
    assert intent.time_range is not None, intent.time_error
    assert intent.time_range.start.isoformat()[:16] == start
    assert intent.time_range.end.isoformat()[:16] == end
    assert intent.quantities and intent.missions  # the time words did not eat the request


def _first_fetch(vocab: Vocabulary, text: str) -> list[tuple[str, str]]:
    plan = build_plan(vocab, _parse(vocab, text), NOW)
    fetch = next(s for s in plan.steps if s.kind == "fetch")
    return [(c.args["dataset_id"], c.args["parameter_id"]) for c in fetch.calls]


@pytest.mark.parametrize(
    ("text", "dataset"),
    [
        ("ACE EPAM proton flux 2012-03-07", r"^AC_H\d_EPM$"),
        ("PSP SPAN-I proton velocity 2021-04-29", r"^PSP_SWP_SPI_SF00_L3_MOM$"),
        ("Wind 3DP electron temperature 2020-05-05", r"^WI_\w+_3DP$"),
        ("Wind SWE density 2020-01-01", r"^WI_\w+_SWE$"),
        ("themis a ESA density 2010-01-01", r"^THA_L2_ESA$"),
        ("Wind EPACT proton flux 2012-03-07", r"EPACT"),
    ],
)
def test_an_instrument_named_in_the_request_wins(
    vocab: Vocabulary, text: str, dataset: str
) -> None:
    first, _ = _first_fetch(vocab, text)[0]
    assert re.search(dataset, first), first


def test_support_data_only_serves_positions(vocab: Vocabulary) -> None:
    # The velocity in an orbit file is the spacecraft's, not the solar wind's.
    calls = _first_fetch(vocab, "DSCOVR solar wind speed 2018-01-01")
    assert calls and all(d == "DSCOVR_H1_FC" for d, _ in calls)
    assert any(
        "POSITION" in d or "OR" in d.split("_") or "SSC" in d
        for d, _ in _first_fetch(vocab, "where was Wind on 2018-01-01")
    )


def test_the_spacecraft_typed_is_the_only_one_used(vocab: Vocabulary) -> None:
    # GOES-16 has no magnetometer dataset (only a model field in its ephemeris):
    # say so instead of fetching another GOES.
    plan = build_plan(vocab, _parse(vocab, "GOES-16 magnetic field 2022-01-01"), NOW)
    assert not plan.steps
    assert any("No GOES-16 dataset" in n for n in plan.notes)
    # The title names the spacecraft when the id abbreviates it (G0 is GOES 10).
    assert _first_fetch(vocab, "GOES 10 proton flux 2003-10-28")[0][0] == "G0_K0_EP8"
    assert all(
        d.startswith("GOES12") or d.startswith("G12")
        for d, _ in _first_fetch(vocab, "GOES 12 magnetic field 2005-01-01")
    )


def test_ace_field_defaults_to_gse(vocab: Vocabulary) -> None:
    # ACE's 1-second file has BRTN and BGSEc; near Earth GSE is the frame people mean.
    assert _first_fetch(vocab, "ACE magnetic field 2024-01-01 06:00 to 12:00")[0][1] == "BGSEc"


def test_a_level_number_is_not_a_spacecraft_number(vocab: Vocabulary) -> None:
    # "Level 2" in MMS1's titles must not make MMS1 data serve "MMS2".
    calls = _first_fetch(vocab, "MMS2 electric field 2019-01-01 10:00 to 11:00")
    assert calls and all(d.startswith("MMS2_") for d, _ in calls)


def test_a_reversed_range_is_reported_not_shrunk(vocab: Vocabulary) -> None:
    intent = _parse(vocab, "ACE B from 2024-01-05 to 2024-01-01")
    assert intent.time_range is None and intent.time_error is not None
    assert "reversed" in intent.time_error
    plan = build_plan(vocab, intent, NOW)
    assert not plan.steps and any("valid time range" in m for m in plan.missing)


@pytest.mark.parametrize(
    ("text", "unknown"),
    [
        ("plot Juno magnetic field for 2017-01-01", ("Juno",)),
        ("|B| from Foobar in 2017", ("Foobar",)),
        ("compare ACE and Foobar magnetic field in Jan 2020", ("Foobar",)),
        # Physics words, verbs and known spacecraft stand in the same places: never unknown.
        ("Plasma density from ACE 2020", ()),
        ("Show me Energetic particle flux GOES", ()),
        ("Interplanetary magnetic field at Earth 2020", ()),
        ("Proton density Wind 2020", ()),
        ("Display Dst 2020", ()),
        ("Cassini |B| 2005", ()),
        ("THEMIS-A density 2020", ()),
    ],
)
def test_names_where_a_spacecraft_goes_that_the_catalog_lacks(
    vocab: Vocabulary, text: str, unknown: tuple[str, ...]
) -> None:
    assert parse_request(text, vocab).unknown_names == unknown
