"""Offline mode end to end: phrasings through run_turn against a catalog-wide HAPI server.

The loopback server serves synthetic data for whatever dataset the resolver picks, so
these tests check the choice (dataset family, units), the computations and the figure,
not a staged answer.
"""

from __future__ import annotations

import re
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import OfflineSession
from xhelio.agents.offline import OfflineAssistant
from xhelio.agents.offline.plan import build_plan
from xhelio.agents.turn import TurnResult, run_turn
from xhelio.config import load_settings
from xhelio.language.parse import parse_request
from xhelio.tools.workspace import open_workspace

NT = r"^nT"
KMS = r"(?i)^km ?(/|s)"
DENSITY = r"(?i)cm|cc"


@dataclass(frozen=True)
class Expect:
    """What a phrasing must produce; every pattern is a regex that can fail."""

    datasets: tuple[str, ...]
    units: str | None = None
    computed: tuple[str, ...] = ()
    panels: int | None = None
    min_traces: int = 1
    plot: bool = True


CASES: list[tuple[str, Expect]] = [
    (
        "Show me ACE magnetic field for 2024-01-01 to 2024-01-03",
        Expect((r"^AC_H\d_MFI$",), NT, min_traces=3),
    ),
    ("ace magnetic field magnitude on 2024-01-15", Expect((r"^AC_\w+_MFI$",), NT)),
    ("Plot |B| from ACE, 2024-01-10 to 2024-01-12, log scale", Expect((r"^AC_\w+_MFI$",), NT)),
    ("what was the IMF Bz at ACE on 2024-02-01?", Expect((r"^AC_\w+_MFI$",), NT, ("Bz",))),
    (
        "Compare Wind and ACE |B| in January 2024 and smooth it over 10 minutes",
        Expect(
            (r"^WI_\w+_MFI$", r"^AC_\w+_MFI$"),
            NT,
            ("smooth10min", "smooth10min"),
            panels=1,
            min_traces=2,
        ),
    ),
    ("wind solar wind speed 2020-03-01 to 2020-03-03", Expect((r"^WI_",), KMS)),
    ("Wind proton density for March 3 2020", Expect((r"^WI_",), DENSITY)),
    (
        "plot PSP solar wind speed and density 2023-06-20 to 2023-06-25, separate panels, log y",
        Expect((r"^PSP_", r"^PSP_"), None, panels=2, min_traces=2),
    ),
    (
        "Parker magnetic field from 2023-06-01 to 2023-06-07 in RTN",
        Expect((r"^PSP_FLD_L2_MAG_RTN",), NT, min_traces=3),
    ),
    (
        "SolO B magnitude 10-minute running average Jan 5 to Jan 10 2024",
        Expect((r"^SOLO_L2_MAG",), NT, ("smooth10min",)),
    ),
    ("solar orbiter proton density 2022-03-01", Expect((r"^SOLO_",), DENSITY)),
    ("OMNI Dst during the Halloween storm", Expect((r"^OMNI",), NT)),
    ("Kp and Dst for 2015-03-17", Expect((r"^OMNI2_", r"^OMNI2_"), None, panels=2, min_traces=2)),
    ("AE index 2015-03-17 to 2015-03-18", Expect((r"^OMNI_HRO",), NT)),
    ("SYM-H between 2024-05-10 and 2024-05-11", Expect((r"^OMNI_HRO",), NT)),
    (
        "IMF Bz GSM from OMNI on 2024-05-10, 1-hour averages, title 'Gannon storm Bz', in red",
        Expect((r"^OMNI",), NT, ("avg1h",)),
    ),
    ("omni flow pressure last 3 days", Expect((r"^OMNI",), r"^nPa")),
    ("solar wind speed yesterday", Expect((r"^OMNI",), KMS)),
    (
        "MMS2 magnetic field 2020-01-01T00:00 to 2020-01-01T06:00",
        Expect((r"^MMS2_FGM",), NT, min_traces=3),
    ),
    ("mms1 ion density on 2019-12-01", Expect((r"^MMS1_",), DENSITY)),
    ("THEMIS-A density 2020-01-01", Expect((r"^THA_",), DENSITY)),
    ("themis c magnetic field strength 2020-01-01", Expect((r"^THC_L2_(FGM|MERGED)",), NT)),
    ("Cluster C1 density between 2005-01-01 and 2005-01-03", Expect((r"^C1_",), DENSITY)),
    ("cluster 3 B field 2005-01-01", Expect((r"^C3_CP_FGM",), NT)),
    ("GOES-10 energetic proton flux October 2003 on a log scale", Expect((r"^G",), None)),
    ("GOES 12 magnetic field 2005-01-01", Expect((r"^GOES12_",), NT)),
    (
        "STEREO-A Bx and By 2012-07-23, overlay",
        Expect((r"^STA_",), NT, ("Bx", "By"), panels=1, min_traces=2),
    ),
    (
        "STEREO A plasma density and speed 2012-07-23",
        Expect((r"^STA_", r"^STA_"), None, panels=2, min_traces=2),
    ),
    ("where was Voyager 1 in 2012", Expect((r"^VOYAGER1_",), r"(?i)au|km")),
    ("Van Allen Probe A magnetic field 2015-03-17", Expect((r"^RBSP-?A",), NT)),
    ("DSCOVR magnetic field 2020-01-01", Expect((r"^DSCOVR_H0_MAG$",), NT)),
    (
        "ratio of ACE and Wind density for 2020-01-01",
        Expect((r"^AC_", r"^WI_"), DENSITY, ("ratio",), panels=2, min_traces=3),
    ),
    (
        "difference between ACE and Wind Bz on 2020-01-01",
        Expect((r"^AC_\w+_MFI$", r"^WI_[\w-]+_MFI$"), NT, ("difference",), min_traces=3),
    ),
    (
        "time derivative of ACE Bz 2024-02-01 smoothed with a 30 min window",
        Expect((r"^AC_\w+_MFI$",), NT, ("Bz", "smooth30min", "ddt")),
    ),
    (
        # A month picks the 1-hour product: already hourly, so it is not averaged again.
        "ACE solar wind temperature 2019-03 resampled to 1 hour, save the data as csv",
        Expect((r"^AC_\w+_SWE$",), r"(?i)kelvin|\bk$", ()),
    ),
    (
        "fetch AC_H0_MFI BGSEc 2024-01-01 to 2024-01-02 no plot",
        Expect((r"^AC_H0_MFI$",), NT, plot=False),
    ),
    (
        "From 2024-01-01 to 2024-01-02, show me ACE B field, and export the plot as html",
        Expect((r"^AC_\w+_MFI$",), NT),
    ),
    (
        "ACE and Wind solar wind speed 2021-06-01 hourly averages",
        Expect((r"^AC_", r"^WI_"), KMS, ("avg1h", "avg1h"), panels=1),
    ),
    (
        "plot the solar wind at ACE on 2019-05-10",
        Expect((r"^AC_\w+_MFI$", r"^AC_\w+_SWE$", r"^AC_\w+_SWE$"), None, panels=3, min_traces=3),
    ),
    ("ACE energetic particles 2003-10-29", Expect((r"^AC_",), None)),
    ("Wind velocity components in GSE 2020-01-01", Expect((r"^WI_",), KMS, min_traces=3)),
    (
        "what was the proton temperature at PSP on 2023-06-22",
        Expect((r"^PSP_",), r"(?i)\bk$|kelvin|ev"),
    ),
    ("WIND MAGNETIC FIELD 2024-01-01", Expect((r"^WI_\w+_MFI$",), NT)),
    ("Ulysses magnetic field March 1995", Expect((r"^UY_",), NT)),
    ("geotail b field 1998-01-10", Expect((r"^GE_",), NT)),
    ("magnetic field at Earth's upstream, last 2 days, in blue", Expect((r"^OMNI",), NT)),
    # Phrasings written while auditing, none of them staged for the resolver.
    ("ACE Bz in GSM for the past 3 days", Expect((r"^AC_\w+_MFI$",), NT, ("Bz",))),
    ("plot wind |B| 2023-11-04 through 2023-11-06", Expect((r"^WI_\w+_MFI$",), NT)),
    ("give me the Dst index during May 2024", Expect((r"^OMNI",), NT)),
    (
        "Parker Solar Probe radial magnetic field component during perihelion 2024-09-30",
        Expect((r"^PSP_FLD_L2_MAG_RTN",), NT, ("Br",)),
    ),
    (
        "MMS1 FGM Bz GSM on 2017-07-11 from 22:00 to 23:00",
        Expect((r"^MMS1_FGM",), NT, ("Bz",)),
    ),
    ("THEMIS-D magnetic field GSM 2008-02-26 04:00 to 06:00", Expect((r"^THD_",), NT)),
    ("Voyager 2 magnetic field 1989", Expect((r"^VOYAGER2_",), NT)),
    ("STEREO-B solar wind speed 2010-06-01 to 2010-06-05", Expect((r"^STB_",), KMS)),
    (
        "DSCOVR solar wind density and speed 2018-01-01 overlay",
        Expect((r"^DSCOVR_H1_FC$", r"^DSCOVR_H1_FC$"), None, min_traces=2),
    ),
    ("ACE proton speed 2024 DOY 100 to DOY 105", Expect((r"^AC_\w+_(SWE|SWI)$",), KMS)),
    ("Wind ion temperature 2021-001 to 2021-003", Expect((r"^WI_",), r"(?i)\bk$|ev")),
    (
        "OMNI IMF By and Bz 2024-05-10 to 2024-05-12 overlay in one panel",
        Expect((r"^OMNI", r"^OMNI"), NT, panels=1, min_traces=2),
    ),
    (
        "1-hour averages of ACE |B| for the first week of February 2024",
        Expect((r"^AC_\w+_MFI$",), NT, ("avg1h",)),
    ),
    (
        "smooth the Wind Bz with a 5 minute running mean, 2020-02-02",
        Expect((r"^WI_\w+_MFI$",), NT, ("Bz", "smooth5min")),
    ),
    ("derivative of OMNI flow speed 2024-05-10", Expect((r"^OMNI",), KMS, ("ddt",))),
    (
        "plot SolO solar wind speed from 2022-03-25 to 2022-04-05 titled 'SolO perihelion' green",
        Expect((r"^SOLO_",), KMS),
    ),
    ("ACE EPAM proton flux 2012-03-07 log scale", Expect((r"^AC_H\d_EPM$",), None)),
    ("PSP SPAN-I proton velocity 2021-04-29", Expect((r"^PSP_SWP_SPI_SF00_L3_MOM$",), KMS)),
    ("GOES 10 proton flux 2003-10-28 on a log axis", Expect((r"^G0_",), None)),
    ("OMNI solar wind temperature for the week of 2017-09-06", Expect((r"^OMNI",), r"^K$")),
    ("Bx, By, Bz from ACE in GSE on 2023-03-23", Expect((r"^AC_H\d_MFI$",), NT, min_traces=3)),
    ("MMS2 electric field 2019-01-01 10:00 to 11:00", Expect((r"^MMS2_",), r"(?i)mv")),
    ("Cluster 2 magnetic field GSE 2004-03-01 12:00 to 18:00", Expect((r"^C2_",), NT)),
    (
        "Kp and AE index stacked 2024-10-10 to 2024-10-12",
        Expect((r"^OMNI", r"^OMNI"), None, panels=2),
    ),
    ("How fast was the solar wind at Wind on Halloween 2003?", Expect((r"^WI_",), KMS)),
    (
        "OMNI B_z and V_sw, 10 min averages, 2012-07-14 to 2012-07-16",
        Expect((r"^OMNI", r"^OMNI"), None, ("avg10min", "avg10min"), min_traces=2),
    ),
    (
        "STEREO A and B magnetic field magnitude 2009-01-01 overlaid",
        Expect((r"^STA_", r"^STB_"), NT, panels=1, min_traces=2),
    ),
    ("Voyager 1 and 2 magnetic field 1985", Expect((r"^VOYAGER1_", r"^VOYAGER2_"), NT)),
    ("ace mag 2024/01/05", Expect((r"^AC_\w+_MFI$",), NT, min_traces=3)),
    ("Solar Orbiter Bn component 2023-03-10", Expect((r"^SOLO_L2_MAG",), NT, ("Bn",))),
    (
        "electron density from MMS1 on 2017-05-28 between 08:00 and 09:00",
        Expect((r"^MMS1_FPI",), DENSITY),
    ),
]


def _fetched(result: TurnResult) -> list[str]:
    return [d.dataset for d in result.data if d.dataset]


@pytest.mark.parametrize(("text", "expect"), CASES, ids=[c[0][:50] for c in CASES])
def test_phrasing_end_to_end(session: OfflineSession, text: str, expect: Expect) -> None:
    before = len(session.workspace.session.operations)
    result = session.ask(text)
    assert result.error is None, result.answer
    fetched = _fetched(result)
    assert len(fetched) == len(expect.datasets), (fetched, result.answer)
    for pattern, dataset in zip(expect.datasets, fetched, strict=True):
        assert re.search(pattern, dataset), (pattern, dataset, result.answer)
    store = session.workspace.session.store
    if expect.units is not None:
        fetched_units = [
            next(iter(store.get(d.label).units.values()), "") for d in result.data if d.dataset
        ]
        assert all(re.search(expect.units, u.strip()) for u in fetched_units), fetched_units
    computed = [d.label for d in result.data if not d.dataset]
    for piece in expect.computed:
        assert any(piece in label for label in computed), (piece, computed)
    assert all(d.points > 0 for d in result.data)
    assert "Fetched" in result.answer and "points" in result.answer
    current = session.workspace.session.plot.current
    if expect.plot:
        assert current is not None and result.figures, result.answer
        assert len(current.traces) >= expect.min_traces
        plotted = {t.data_label for t in current.traces}
        assert plotted <= {d.label for d in result.data} | set(store.labels())
        if expect.panels is not None:
            assert current.panels == expect.panels, result.answer
    else:
        tools = [op["tool"] for op in session.workspace.session.operations[before:]]
        assert "render_plotly_json" not in tools and not result.figures


def test_a_component_keeps_the_units_of_its_vector(session: OfflineSession) -> None:
    result = session.ask("Solar Orbiter Bt component 2023-03-11")
    (derived,) = [d.label for d in result.data if not d.dataset]
    assert next(iter(session.workspace.session.store.get(derived).units.values())) == "nT"
    assert "Units of" not in result.answer  # no note asking for units=


def test_bt_of_a_field_not_in_rtn_is_the_total_field_and_said(session: OfflineSession) -> None:
    # Before: "Bt" took the second column of DSCOVR's GSE vector, which is By, unsaid.
    before = len(session.workspace.session.operations)
    result = session.ask("DSCOVR Bt and Bz 2017-09-07")
    turn = session.workspace.session.operations[before:]
    computed = [op for op in turn if op.get("phase") == "compute"]
    codes = " ".join(str((op.get("args") or {}).get("code", "")) for op in computed)
    assert "iloc[:, [1]]" not in codes, codes
    # The instrument's own |B| (B1F1) is fetched rather than computed from the vector.
    params = [(op.get("args") or {}).get("parameter_id") for op in turn]
    assert "B1F1" in params, params
    assert "Read 'Bt' as the total field |B|" in result.answer, result.answer
    # A field in RTN keeps its T component.
    result = session.ask("Solar Orbiter Bt component 2023-03-11")
    assert "total field" not in result.answer, result.answer


def test_style_wishes_reach_the_figure(session: OfflineSession) -> None:
    result = session.ask(
        "IMF Bz GSM from OMNI on 2024-05-10, title 'Gannon storm Bz', in red, log scale"
    )
    assert result.error is None
    current = session.workspace.session.plot.current
    assert current is not None
    figure = current.figure
    assert figure["layout"]["title"]["text"] == "Gannon storm Bz"
    assert figure["data"][0]["line"]["color"] == "red"
    assert figure["layout"]["yaxis"]["type"] == "log"
    assert [t.data_label for t in current.traces] == [d.label for d in result.data][-1:]


def test_exports_land_in_the_session_folder(session: OfflineSession) -> None:
    result = session.ask(
        "ACE speed 2020-01-01, export the plot as acespeed.html and save the data as csv"
    )
    assert result.error is None, result.answer
    exports = session.workspace.context.export_dir
    assert (exports / "acespeed.html").is_file()
    assert any(p.suffix == ".csv" for p in Path(exports).iterdir())
    assert "saved to" in result.answer


def _first_candidate(session: OfflineSession, text: str) -> tuple[str, str]:
    intent = parse_request(text, session.assistant.vocab)
    plan = build_plan(session.assistant.vocab, intent)
    fetch = next(s for s in plan.steps if s.kind == "fetch")
    return fetch.calls[0].args["dataset_id"], fetch.calls[1].args["dataset_id"]


def test_all_nan_first_candidate_falls_back(session: OfflineSession) -> None:
    text = "ACE density 2021-02-01"
    first, second = _first_candidate(session, text)
    session.server.nan_datasets.add(first)
    try:
        result = session.ask(text)
    finally:
        session.server.nan_datasets.discard(first)
    assert _fetched(result)[-1] == second, result.answer
    assert f"Used {second}" in result.answer and "NaN" in result.answer and first in result.answer
    current = session.workspace.session.plot.current
    assert current is not None and [t.data_label for t in current.traces] == [
        f"{second}.{_param(result, second)}"
    ]


def _param(result: TurnResult, dataset: str) -> str:
    return next(str(d.parameter) for d in result.data if d.dataset == dataset)


def test_server_fault_on_first_candidate_falls_back(session: OfflineSession) -> None:
    text = "Wind magnetic field magnitude 2021-02-02"
    first, second = _first_candidate(session, text)
    session.server.fail_next("1406", count=1, dataset=first)
    result = session.ask(text)
    assert _fetched(result) == [second], result.answer
    assert f"Used {second}" in result.answer and first in result.answer
    assert re.search(r"^WI_[\w-]+_MFI$", second)


def test_no_data_on_first_candidate_falls_back(session: OfflineSession) -> None:
    text = "OMNI flow pressure 2010-04-05"
    first, second = _first_candidate(session, text)
    session.server.empty_datasets.add(first)
    try:
        result = session.ask(text)
    finally:
        session.server.empty_datasets.discard(first)
    assert _fetched(result) == [second] and first in result.answer


@pytest.mark.parametrize(
    ("text", "needs"),
    [
        ("hello there", "quantity"),
        ("plot ACE magnetic field on 2024-02-30", "valid time range"),
        ("energetic particle flux 2003-10-29", "mission"),
        ("asdf qwerty 12", "quantity"),
        # A spacecraft no source has a mission for is named, never swapped for OMNI (Juno is
        # now answered from PDS: tests/test_pds_offline.py).
        ("plot Hayabusa magnetic field for 2017-01-01", "'Hayabusa': no mission by that name"),
        ("Foobar's solar wind speed in 2017", "'Foobar': no mission by that name"),
    ],
)
def test_not_understood_gets_a_helpful_answer(
    session: OfflineSession, text: str, needs: str
) -> None:
    result = session.ask(text)
    assert result.error is None and not result.data
    assert needs in result.answer and "For example" in result.answer
    assert result.plan is None  # the planner did not run; the answer says what is missing


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What datasets does PSP have?", r"PSP_FLD_L2_MAG_RTN"),
        ("list missions", r"Parker Solar Probe.*Solar Orbiter"),
        ("what parameters are in AC_H2_MFI", r"BGSEc \[nT\] size \[3\]"),
        ("when does AC_H2_MFI have data?", r"AC_H2_MFI covers 1997-09-02"),
        ("search for electron density datasets", r"Datasets matching"),
        ("find solar wind speed datasets for Wind", r"WI_"),
    ],
)
def test_discovery_answers_use_the_catalog_tools(
    session: OfflineSession, text: str, expected: str
) -> None:
    before = len(session.workspace.session.operations)
    result = session.ask(text)
    assert re.search(expected, result.answer, re.S), result.answer
    tools = {op["tool"] for op in session.workspace.session.operations[before:]}
    assert tools and tools <= {
        "list_missions",
        "browse_datasets",
        "search_datasets",
        "list_parameters",
        "get_data_availability",
    }


def test_cancel_stops_between_steps(session: OfflineSession) -> None:
    cancel = threading.Event()
    cancel.set()
    reply = session.assistant.respond("ACE |B| 2024-01-05 smoothed over 1 hour", cancel)
    assert "Cancelled after 0 of" in reply.text


def test_every_call_goes_through_the_funnel_as_offline(session: OfflineSession) -> None:
    before = len(session.workspace.session.operations)
    session.ask("ACE Bz 2024-03-01")
    ops = session.workspace.session.operations[before:]
    assert ops and all(op["caller"] == "offline" for op in ops)
    assert [op["tool"] for op in ops][:1] == ["fetch_data"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_server_stops_at_once_with_one_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_HOME", str(tmp_path))
    monkeypatch.setenv("XHELIO_HAPI_URL", f"http://127.0.0.1:{_closed_port()}/hapi")
    workspace = open_workspace(settings=load_settings())
    try:
        result = run_turn(workspace, OfflineAssistant(workspace), "ACE and Wind density 2021-02-01")
        fetches = [op for op in workspace.session.operations if op["tool"] == "fetch_data"]
    finally:
        workspace.close()
    assert len(fetches) == 1  # no other candidate, no other mission on a dead server
    assert result.error is not None and "could not be reached" in result.error
    assert result.answer.count("Could not connect") == 1, result.answer
    assert "unreachable" in result.answer and not result.data and not result.figures


def test_a_request_that_fetched_nothing_is_an_error(session: OfflineSession) -> None:
    text = "ACE density 2021-02-03"
    intent = parse_request(text, session.assistant.vocab)
    candidates = [
        c.args["dataset_id"] for c in build_plan(session.assistant.vocab, intent).steps[0].calls
    ]
    session.server.empty_datasets.update(candidates)
    try:
        result = session.ask(text)
    finally:
        session.server.empty_datasets.difference_update(candidates)
    assert result.error is not None and result.error.startswith("Nothing could be fetched")
    assert "every candidate failed" in result.answer and result.plan is None


def test_a_simple_request_has_no_plan_record(session: OfflineSession) -> None:
    result = session.ask("ACE |B| 2024-01-07")
    assert result.error is None and result.plan is None  # the planner did not run
    assert result.answer.startswith("Offline mode understood: mission ACE")


def test_derived_series_carry_units(session: OfflineSession) -> None:
    store = session.workspace.session.store
    ratio = session.ask("ratio of ACE and Wind density for 2020-01-02")
    (label,) = [d.label for d in ratio.data if d.label.startswith("ratio")]
    assert next(iter(store.get(label).units.values())) == "1"  # same quantity: a pure number
    mixed = session.ask("omni proton temperature divided by density 2015-01-01")
    (label,) = [d.label for d in mixed.data if d.label.startswith("ratio")]
    assert next(iter(store.get(label).units.values())) == "(K)/(n/cc)"
    diff = session.ask("Wind B mag minus ACE B mag 2022-06-02")
    (label,) = [d.label for d in diff.data if d.label.startswith("difference")]
    assert next(iter(store.get(label).units.values())).startswith("nT")
    for result in (ratio, mixed, diff):
        assert "are unknown" not in result.answer, result.answer


@pytest.mark.parametrize(
    "text", ["plot Wind Bx, By, Bz on 2020-01-05", "ACE Bx and Bz for 2020-01-05"]
)
def test_components_asked_together_come_from_one_vector(session: OfflineSession, text: str) -> None:
    # Unframed By/Bz lean to GSM and Bx to GSE; together they must not mix frames.
    result = session.ask(text)
    assert result.error is None
    fetched = [d for d in result.data if d.dataset]
    assert len({(d.dataset, d.parameter) for d in fetched}) == 1, fetched


def test_an_unknown_spacecraft_beside_a_known_one_is_named_not_dropped(
    session: OfflineSession,
) -> None:
    result = session.ask("compare ACE and Foobar magnetic field on 2020-01-05")
    assert result.error is None
    assert {d.dataset for d in result.data if d.dataset} <= {"AC_H0_MFI", "AC_H1_MFI", "AC_H2_MFI"}
    assert "Left out 'Foobar': no mission by that name" in result.answer


def test_a_partly_failed_figure_is_titled_by_what_it_draws(session: OfflineSession) -> None:
    text = "ACE |B| and proton density 2021-02-04"
    intent = parse_request(text, session.assistant.vocab)
    plan = build_plan(session.assistant.vocab, intent)
    density = [
        c.args["dataset_id"]
        for step in plan.steps
        if "density" in step.description.lower()
        for c in step.calls
        if "dataset_id" in c.args
    ]
    assert density, [s.description for s in plan.steps]
    session.server.empty_datasets.update(density)
    try:
        result = session.ask(text)
    finally:
        session.server.empty_datasets.difference_update(density)
    current = session.workspace.session.plot.current
    assert current is not None and result.figures, result.answer
    title = current.figure["layout"]["title"]["text"]
    assert "density" not in title.lower() and "field" in title.lower(), title
    assert "2021-02-04" in title
