"""Offline mode parsing: missions, quantities, components, time phrases, wishes, discovery."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from xhelio.agents.offline.intent import RequestIntent
from xhelio.agents.offline.parse import Vocabulary, parse_request
from xhelio.agents.offline.plan import build_plan
from xhelio.agents.offline.resolve import probe_wanted
from xhelio.catalog.index import Catalog, build_index

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def vocab(tmp_path_factory: pytest.TempPathFactory) -> Vocabulary:
    path: Path = tmp_path_factory.mktemp("catalog") / "catalog.sqlite"
    build_index(path)
    return Vocabulary.from_catalog(Catalog(path))


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
