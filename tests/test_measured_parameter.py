"""The measured value of a quantity, not a model, a corotation field, a flag or a raw copy.

A catalog audit over every shipped dataset: where a dataset holds both a measured
parameter and one the vocabulary's `[[auxiliary]]` table marks (IGRF model, corotation
E field, roughness, uncertainty, quality flag, raw copy, spacecraft-frame copy,
time-lagged upstream data) of the same quantity, the resolver picks the measured one.
Then the words themselves, the LLM agents' parameter order, and requests run end to end
through the offline assistant against the catalog-wide loopback HAPI server.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from eval.harness import Case, run_case, served_home
from xhelio.catalog.index import Catalog
from xhelio.catalog.model import ParameterInfo
from xhelio.language.grounding import order_parameters
from xhelio.language.intent import QuantityWish
from xhelio.language.measured import auxiliary_kind, auxiliary_penalty
from xhelio.language.parse import Vocabulary, parse_request
from xhelio.language.quantities import quantity
from xhelio.language.resolve import resolve

# The quantities a dataset measures beside its companions (a model field, a corotation
# field, a density's roughness): the ones the audit walks.
_MEASURED = ("magnetic_field", "electric_field", "velocity", "density", "temperature", "pressure")


def _kind(name: str, description: str, units: str = "") -> str | None:
    kind = auxiliary_kind(ParameterInfo(name, units=units, description=description))
    return kind.key if kind is not None else None


@pytest.mark.parametrize(
    ("name", "description", "kind"),
    [
        ("ductdensrough", "----> roughness parameter of SM density", "roughness"),
        ("bx", "north component of Earths magnetic field (IGRF)", "model"),
        ("igrf_8sec_gse", "8 sec resolution IGRF B in GSE", "model"),
        ("VxB_efield_of_earth_mgse", "Corotation Efield(MGSE)", "corotation"),
        ("efield_coro_mgse", "---> Corotation Efield (MGSE)", "corotation"),
        ("VscxB_motional_efield_mgse", "Vsc x B (MGSE)", "motional"),
        ("Imf_Gsm", "Time delayed Wind IFM Magnetic Field from WIND in GSM", "borrowed"),
        ("vxraw", "Vx - original unfiltered Vx flow", "raw"),
        ("OB_BDPL", "OUTBOARD BD PAYLOAD", "spacecraft_frame"),
        # Measured, though a mark's word is in them: said so by their own words.
        ("efield_in_corotation_frame_spinfit_mgse", "Ecoro(12,MGSE) spinfit", None),
        ("efield_spinfit_mgse", "Spinfit E-field in MGSE (autoscale, VxB subtracted)", None),
        ("dens", "Ni calculated from the RPA", None),
        ("flux_Fe", "---> Fe intensity, 2.7-10.9 MeV/nuc (time-series with uncertainties)", None),
        ("V_GSE", "proton velocity x,y,z-component (w/o error bars)", None),
        ("MAG_field_MSO", "Magnetic field vector component in MSO coordinates (MAG)", None),
    ],
)
def test_the_words_mark_what_is_not_the_measured_value(
    name: str, description: str, kind: str | None
) -> None:
    assert _kind(name, description) == kind


def test_a_request_asking_for_the_kind_lifts_its_mark() -> None:
    igrf = ParameterInfo("bx", units="nT", description="north component (IGRF)")
    payload = ParameterInfo("OB_BDPL", units="nT", description="OUTBOARD BD PAYLOAD")
    assert auxiliary_penalty(igrf, "DMSP magnetic field") > 0
    assert auxiliary_penalty(igrf, "DMSP IGRF model field") == 0
    assert auxiliary_penalty(payload, "MAVEN magnetic field") > 0
    assert auxiliary_penalty(payload, "MAVEN magnetic field", frame="SC") == 0


@pytest.mark.parametrize(
    "text", ["MAVEN B in payload coordinates", "the field in s/c frame", "B in spacecraft axes"]
)
def test_payload_and_spacecraft_coordinates_are_the_spacecraft_frame(
    vocab: Vocabulary, text: str
) -> None:
    intent = parse_request(text, vocab, datetime(2026, 11, 22, tzinfo=UTC))
    assert [w.frame for w in intent.quantities] == ["SC"]


def test_catalog_audit_the_measured_parameter_is_picked(catalog: Catalog) -> None:
    """Every shipped dataset, every measured quantity: a marked pick means no measured one.

    Where the pick is a marked parameter, the dataset without its marked parameters must
    serve no parameter of that quantity: else the measured one lost to its companion.
    """
    picked_marked: list[str] = []
    checked = 0
    for dataset_id in catalog.dataset_ids():
        info = catalog.dataset(dataset_id)
        if not any(auxiliary_kind(p) for p in info.data_parameters):
            continue
        measured = replace(
            info, parameters=tuple(p for p in info.parameters if auxiliary_kind(p) is None)
        )
        for key in _MEASURED:
            wish = QuantityWish(key, quantity(key).label, 0)
            top = resolve(catalog, wish, [info], limit=1)
            if not top:
                continue
            checked += 1
            drawn = info.parameter(top[0].parameter)
            if drawn is None or auxiliary_kind(drawn) is None:
                continue
            instead = resolve(catalog, wish, [measured], limit=1)
            if instead:
                picked_marked.append(
                    f"{dataset_id} {key}: {drawn.name}, not {instead[0].parameter}"
                )
    assert checked > 500, "the audit walks the catalog"
    assert picked_marked == []


def test_the_llm_agents_see_the_measured_parameter_first(catalog: Catalog) -> None:
    ssies = catalog.dataset("DMSP-F17_SSIES-3_THERMAL-PLASMA")
    assert order_parameters(ssies, "ion density")[0].name != "ductdensrough"
    efw = catalog.dataset("RBSPA_EFW-L3")
    first = order_parameters(efw, "electric field")[0].name
    assert first.startswith("efield_in_"), first


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_home(tmp_path_factory.mktemp("measured-home")) as server:
        yield server.url


@pytest.mark.parametrize(
    "case",
    [
        Case(
            "single",
            "DMSP F17 ion density on 2014-02-20",
            params=("^(dens|ductdens|dmdens|dens0v)$",),
        ),
        # Payload-frame copy beside the J2000 one: the physical frame, unless asked.
        Case(
            "single",
            "MAVEN magnetic field 2016-01-10 12:00 to 13:00",
            params=("^(MAG_field_MSO|OB_B)$",),
        ),
        Case(
            "single",
            "MAVEN magnetic field in payload coordinates 2016-01-10 12:00 to 13:00",
            params=("^OB_BDPL$",),
        ),
        Case("single", "RBSP-A electric field on 2015-03-17", params=("^efield_(?!coro)",)),
        # The catalog's flow pressure, not recomputed from n and V, whatever its name.
        Case("single", "OMNI ram pressure 2015-03-17", datasets=("^OMNI",), params=("^Pressure$",)),
        Case(
            "single",
            "New Horizons solar wind dynamic pressure 2015-07-14",
            params=("^pdyn$",),
        ),
        # The magnetometer's data, not the time-lagged Wind IMF in an ion spectrometer's file.
        Case("single", "Polar magnetic field on 1998-05-04", datasets=("^PO_(K0|H0)_MFE$",)),
        # The magnetometer has no data that day: the IGRF field is drawn and said to be one.
        Case(
            "single",
            "DMSP F18 magnetic field 2015-03-17",
            answer=("(?i)differs from the request[^\n]*model",),
        ),
    ],
    ids=lambda c: c.text,
)
def test_end_to_end(served: str, case: Case, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XHELIO_HAPI_URL", served)
    outcome = run_case(case)
    assert outcome.verdict == "PASS", f"{outcome.reasons}\n{outcome.answer}"
