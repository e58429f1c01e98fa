"""Sibling products: the one the request's words name, never a higher-scored neighbour (issue 20).

A mission usually has several datasets that can serve a quantity: the instrument's own
product and a key-parameter file that borrows it, the spacecraft a mission alias names
and its siblings. The words typed decide; where the catalog has no product with those
words, the answer says so. A dataset or parameter id an LLM makes up is rejected with the
nearest real ones, at the tool level and through a scripted model.

Plans are read with the shipped catalog; phrasings here differ from tests/eval on purpose.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from agent_script import Script, ace_week, scripted_config, tool_returns
from servers.hapi_server import HapiTestServer
from xhelio.agents.offline.plan import OfflinePlan, build_plan
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.catalog.index import open_catalog
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.config import load_settings
from xhelio.errors import UnknownDatasetError, UnknownParameterError
from xhelio.language.intent import QuantityWish
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.products import Term, coverage_score, request_terms
from xhelio.language.resolve import resolve
from xhelio.timerange import TimeRange
from xhelio.tools.data_tools import fetch_data
from xhelio.tools.discovery import get_data_availability, list_parameters
from xhelio.tools.workspace import Workspace, open_workspace


def _plan(vocab: Vocabulary, text: str) -> OfflinePlan:
    return build_plan(vocab, parse_request(text, vocab))


def _fetched(plan: OfflinePlan) -> list[str]:
    return [s.candidates[0].dataset_id for s in plan.steps if s.kind == "fetch" and s.candidates]


# ------------------------------------------------------------------ mission aliases


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        # ARTEMIS P1 is THEMIS-B and P2 THEMIS-C since they went to the Moon.
        ("ARTEMIS P2 magnetic field 2013-01-05", "THC_"),
        ("ARTEMIS-P1 ion density 2013-01-05", "THB_"),
        ("artemis p2 ion velocity on 2014-02-01", "THC_"),
    ],
)
def test_artemis_probes_are_the_themis_spacecraft(
    vocab: Vocabulary, text: str, prefix: str
) -> None:
    fetched = _fetched(_plan(vocab, text))
    assert fetched and all(f.startswith(prefix) for f in fetched), fetched


# ------------------------------------------------------------------ instrument words


def _info(ident: str, title: str, *params: str) -> DatasetInfo:
    return DatasetInfo(
        ident, title, parameters=tuple(ParameterInfo(p, "double", units="nT") for p in params)
    )


def test_an_instrument_named_by_id_outranks_a_file_that_only_borrows_its_parameter() -> None:
    terms = request_terms("XYZ MAG magnetic field 2015-03-08", ())
    own = _info("XYZ_MAG_L2-1SEC", "XYZ Magnetometer 1 second field", "OB_B")
    borrowed = _info("XYZ_INSITU_KP-4SEC", "XYZ in-situ key parameters", "MAG_field_MSO")
    assert any(t.typed == "MAG" for t in terms)
    assert coverage_score(own, terms, 1.0) > coverage_score(borrowed, terms, 4.0)


def test_words_of_a_request_typed_like_ids_are_terms_mission_names_are_not() -> None:
    typed = {t.typed for t in request_terms("Geotail LEP ion density in GSE 1998-05-04", ())}
    assert "LEP" in typed
    assert not typed & {"GSE", "Geotail"}


def test_a_plain_term_covered_by_nothing_changes_no_order() -> None:
    term = Term("zzz", frozenset({"ZZZ"}))
    a = _info("A_H0_MFI", "A field", "B")
    assert coverage_score(a, [term], None) == 0.0


# ------------------------------------------------------------------ fabricated ids


@pytest.fixture
def hapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[HapiTestServer]:
    info, frame = ace_week()
    with HapiTestServer() as server:
        server.add_dataset("AC_H2_MFI", info, frame)
        monkeypatch.setenv("XHELIO_HAPI_URL", server.url)
        yield server


@pytest.fixture
def workspace(hapi: HapiTestServer) -> Iterator[Workspace]:
    ws = open_workspace(settings=load_settings())
    yield ws
    ws.close()


@pytest.mark.parametrize(
    ("made_up", "real"),
    [
        ("ACE_MAG_H2", "AC_H2_MFI"),  # mission spelled out, instrument guessed
        ("WIND_MFI_H0", "WI_H0_MFI"),  # words of the real id in another order
        ("AC_H2_MFI_GSE", "AC_H2_MFI"),  # a frame added to a real id
    ],
)
def test_a_made_up_dataset_id_names_the_nearest_real_ones(
    workspace: Workspace, made_up: str, real: str
) -> None:
    with pytest.raises(UnknownDatasetError) as raised:
        list_parameters.function(workspace.context, made_up)
    assert real in raised.value.suggestions[:3], raised.value.suggestions
    assert real in str(raised.value)
    with pytest.raises(UnknownDatasetError) as raised:
        get_data_availability.function(workspace.context, made_up)
    assert real in raised.value.suggestions[:3]


def test_fetching_a_made_up_dataset_names_the_nearest_real_ones(workspace: Workspace) -> None:
    with pytest.raises(UnknownDatasetError) as raised:
        fetch_data.function(workspace.context, "ACE_MAG_H2", "BGSEc", "last week")
    assert "AC_H2_MFI" in raised.value.suggestions[:3], str(raised.value)
    assert not workspace.session.store.labels()


def test_a_made_up_parameter_names_the_nearest_real_ones_first(workspace: Workspace) -> None:
    with pytest.raises(UnknownParameterError) as raised:
        fetch_data.function(workspace.context, "AC_H2_MFI", "B_GSE", "last week")
    message = str(raised.value)
    nearest = re.search(r"Nearest: ([^.]*)\.", message)
    assert nearest and nearest[1].split(", ")[0] == "BGSEc", message


def test_a_scripted_model_sees_the_nearest_ids_and_corrects_itself(workspace: Workspace) -> None:
    script = Script(
        {
            "orchestrator": [
                [("delegate_to_mission", {"mission_id": "ACE", "request": "field, last week"})],
                "Done.",
            ],
            "mission:ACE": [
                [("list_parameters", {"dataset_id": "ACE_MAG_H2"})],
                [("list_parameters", {"dataset_id": "AC_H2_MFI"})],
                [
                    (
                        "fetch_data",
                        {
                            "dataset_id": "AC_H2_MFI",
                            "parameter_id": "B_GSE",
                            "time_range": "last week",
                        },
                    )
                ],
                [
                    (
                        "fetch_data",
                        {
                            "dataset_id": "AC_H2_MFI",
                            "parameter_id": "BGSEc",
                            "time_range": "last week",
                        },
                    )
                ],
                "Fetched AC_H2_MFI.BGSEc.",
            ],
        }
    )
    assistant = AgentAssistant(workspace, scripted_config(), None, build_model=script.build)
    assistant.respond("ACE field for last week", threading.Event())
    seen = [s.messages for s in script.seen if s.agent == "mission:ACE"][-1]
    listed = tool_returns(seen, "list_parameters")
    assert "Unknown dataset 'ACE_MAG_H2'" in listed[0] and "AC_H2_MFI" in listed[0]
    fetched = tool_returns(seen, "fetch_data")
    assert "no parameter 'B_GSE'" in fetched[0] and "Nearest: BGSEc" in fetched[0]
    assert workspace.session.store.labels() == ["AC_H2_MFI.BGSEc"]


# ------------------------------------------------------------------ the answer says so


def _field(ident: str, title: str, start: int, stop: int, *params: ParameterInfo) -> DatasetInfo:
    return DatasetInfo(
        ident,
        title,
        start=datetime(start, 1, 1, tzinfo=UTC),
        stop=datetime(stop, 1, 1, tzinfo=UTC),
        cadence="PT60S",
        parameters=params,
    )


_VECTOR = ParameterInfo("BGSE", units="nT", size=(3,), description="Magnetic field vector, GSE")


def test_a_better_worded_sibling_without_the_time_is_demoted_and_said() -> None:
    own = _field("ZZ_H0_FGM", "ZZ FGM magnetic field", 1998, 2003, _VECTOR)
    other = _field("ZZ_K0_MAG", "ZZ key parameters magnetic field", 1998, 2020, _VECTOR)
    wish = QuantityWish("magnetic_field", "field", 0)
    when = TimeRange(datetime(2010, 5, 1, tzinfo=UTC), datetime(2010, 5, 2, tzinfo=UTC))
    with open_catalog() as catalog:
        terms = request_terms("ZZ FGM field 2010-05-01", ())
        ranked = resolve(catalog, wish, [own, other], time_range=when, terms=terms)
        assert ranked[0].dataset_id == "ZZ_K0_MAG"
        assert any("ZZ_H0_FGM" in n and "no data for the" in n for n in ranked[0].notes)
        # Inside its coverage the named product wins and nothing needs saying.
        when = TimeRange(datetime(2001, 5, 1, tzinfo=UTC), datetime(2001, 5, 2, tzinfo=UTC))
        ranked = resolve(catalog, wish, [own, other], time_range=when, terms=terms)
    assert ranked[0].dataset_id == "ZZ_H0_FGM" and not ranked[0].notes


def test_product_words_the_drawn_parameter_lacks_are_said(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "Van Allen Probe B HOPE pitch angle resolved ion flux, 2014-01-01")
    fetched = [s.candidates[0] for s in plan.steps if s.kind == "fetch" and s.candidates]
    assert fetched
    drawn = vocab.catalog.parameter(fetched[0].dataset_id, fetched[0].parameter)
    if "pitch" not in drawn.description.lower():  # an omni flux stands in: said
        assert any("pitch angle" in n and "not drawn" in n for n in plan.notes), plan.notes


def test_product_words_no_dataset_holds_are_said(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "Wind MFI anti-sunward magnetic field 2015-03-17")
    assert _fetched(plan)
    assert any("'anti-sunward'" in n and "shown instead" in n for n in plan.notes), plan.notes
