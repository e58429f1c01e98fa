"""The offline catalog: snapshot loading, the FTS5 index, ranked search and the Catalog API."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from xhelio.catalog.aliases import AliasTable, plan_query
from xhelio.catalog.index import Catalog, open_catalog
from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.catalog.snapshot import cadence_from_text, load_snapshot, parse_parameters
from xhelio.config import Settings
from xhelio.errors import UnknownDatasetError, UnknownParameterError, UserError


@pytest.fixture(scope="module")
def catalog_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index built from the real snapshot, shared by the read-only tests."""
    return tmp_path_factory.mktemp("catalog-home")


@pytest.fixture(scope="module")
def catalog(catalog_home: Path) -> Iterator[Catalog]:
    with open_catalog(Settings(home=catalog_home)) as opened:
        yield opened


def top_ids(catalog: Catalog, query: str, n: int = 5, **kwargs: str) -> list[str]:
    return [h.dataset_id for h in catalog.search(query, limit=n, **kwargs)]


# snapshot -------------------------------------------------------------------------------


def test_snapshot_has_every_dataset_with_info_and_every_observatory() -> None:
    snapshot = load_snapshot()
    assert snapshot.observatory_files == 65
    assert len(snapshot.datasets) == 2889
    mission_ids = {m.id for m in snapshot.missions}
    # The 65 observatories, plus OMNI split out of Wind's magnetometer group.
    assert len(mission_ids) == 66
    assert {"ace", "wind", "psp", "solar-orbiter", "mms", "omni"} <= mission_ids
    owners = {d.info.id: d.info.mission_id for d in snapshot.datasets}
    assert owners["OMNI_HRO_1MIN"] == "omni"
    assert owners["WI_H0_MFI"] == "wind"
    assert sum(len(m.dataset_ids) for m in snapshot.missions) == 2889


def test_snapshot_reads_data_files_without_running_the_package_code() -> None:
    code = (
        "import sys; from xhelio.catalog.snapshot import load_snapshot; load_snapshot(); "
        "print('cdawebmcp' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_snapshot_parameters_are_kept_faithfully(catalog: Catalog) -> None:
    info = catalog.dataset("AC_H0_MFI")
    assert info.title.startswith("H0 - ACE Magnetic Field 16-Second")
    assert info.mission_id == "ace"
    assert info.instrument == "Magnetic Fields"
    assert info.pi_name == "N. Ness"
    assert info.parameters[0].is_time
    bgse = catalog.parameter("AC_H0_MFI", "BGSEc")
    assert bgse.units == "nT"
    assert bgse.size == (3,)
    assert bgse.fill == "-9.999999848243207e+30"
    assert bgse.description.startswith("Magnetic Field Vector in GSE")
    assert catalog.parameter("AC_H0_MFI", "Magnitude").size is None


def test_hapi_parameter_parsing_handles_lists_nulls_and_bins() -> None:
    parsed = parse_parameters(
        [
            {"name": "Time", "type": "isotime", "units": "UTC", "fill": None, "length": 24},
            {"name": "B", "type": "double", "units": ["nT", "nT", "nT"], "size": [3]},
            {"name": "flag", "type": "integer", "units": None, "fill": -1},
            {
                "name": "flux",
                "type": "double",
                "units": "1/(cm^2 s sr keV)",
                "size": [2],
                "label": ["low", "high"],
                "bins": [{"name": "energy", "units": "keV", "centers": [1.5, 3]}],
            },
            {"no_name": True},
        ]
    )
    assert [p.name for p in parsed] == ["Time", "B", "flag", "flux"]
    assert parsed[1].units == "nT" and parsed[1].size == (3,)
    assert parsed[2].units == "" and parsed[2].fill == "-1"
    assert parsed[3].labels == ("low", "high")
    assert parsed[3].bins == (1.5, 3.0)
    assert (parsed[3].bins_name, parsed[3].bins_units) == ("energy", "keV")


@pytest.mark.parametrize(
    ("title", "dataset_id", "expected"),
    [
        ("K0 - ACE SIS 1-Hour Key Parameters", "AC_K0_SIS", "PT1H"),
        ("ACE Magnetic Field 16-Second Level 2 Data", "AC_H0_MFI", "PT16S"),
        ("ACE/SWEPAM Solar Wind Experiment 64-Second Level 2", "AC_H0_SWE", "PT64S"),
        ("K0 - ACE Solar Wind Experiment 5-Minute Key Parameters", "AC_K0_SWE", "PT5M"),
        ("Fast time resolution (50ms) X-ray spectrum", "BAR_1A_L2_FSPC", "PT0.05S"),
        ("Slow time resolution (32s) X-ray spectrum", "BAR_1A_L2_SSPC", "PT32S"),
        ("Ground-based magnetic field at Tartu, 10 sec", "THG_L2_MAG_TAR", "PT10S"),
        ("OMNI Combined, Definitive, Hourly IMF and Plasma Data", "OMNI2_H0_MRG1HR", "PT1H"),
        ("ACE/CRIS Daily-averaged Level 2 Data", "AC_H3_CRIS", "P1D"),
        ("MAVEN In-situ Key Parameters", "MVN_INSITU_KP-4SEC", "PT4S"),
        ("Analog Housekeeping Data", "BAR_1H_L2_HKPG", None),
        ("PMC-Turbo lidar PMC data 20m vertical", "PMC_X", None),
        ("Solar Orbiter Magnetometer L2 Data", "SOLO_L2_MAG-RTN-NORMAL", None),
    ],
)
def test_cadence_is_derived_only_when_stated(
    title: str, dataset_id: str, expected: str | None
) -> None:
    assert cadence_from_text(title, dataset_id) == expected


# ranked search ---------------------------------------------------------------------------


def test_ace_magnetic_field_ranks_mfi_first(catalog: Catalog) -> None:
    ids = top_ids(catalog, "ACE magnetic field", n=7)
    assert all(re.fullmatch(r"AC_[HK]\d_MFI", i) for i in ids), ids
    assert {"AC_H0_MFI", "AC_H1_MFI", "AC_H2_MFI", "AC_K0_MFI"} <= set(ids)
    top = catalog.search("ACE magnetic field", limit=1)[0]
    assert "BGSEc" in top.matched_parameters


def test_solar_wind_speed_omni_finds_omni_plasma(catalog: Catalog) -> None:
    hits = catalog.search("solar wind speed OMNI", limit=6)
    assert all(h.mission_id == "omni" for h in hits)
    assert {"OMNI_HRO_1MIN", "OMNI2_H0_MRG1HR"} <= {h.dataset_id for h in hits}
    for hit in hits:
        if hit.dataset_id == "OMNI_HRO_1MIN":
            assert "flow_speed" in hit.matched_parameters
        if hit.dataset_id == "OMNI2_H0_MRG1HR":
            assert "V" in hit.matched_parameters


def test_psp_magnetic_field_finds_fields_mag(catalog: Catalog) -> None:
    ids = top_ids(catalog, "PSP magnetic field", n=5)
    assert all(i.startswith("PSP_") for i in ids)
    assert sum(i.startswith("PSP_FLD_L2_MAG_") for i in ids) >= 3, ids


def test_solo_mag_finds_solo_l2_mag(catalog: Catalog) -> None:
    ids = top_ids(catalog, "SolO mag", n=5)
    assert all(i.startswith("SOLO_L2_MAG-") for i in ids), ids


def test_wind_plasma_finds_swe_and_3dp(catalog: Catalog) -> None:
    for query in ("Wind plasma", "wind plasma"):
        ids = top_ids(catalog, query, n=10)
        assert ids[0] == "WI_PM_3DP" or "SWE" in ids[0], ids
        assert all(i.startswith(("WI_", "WIND_")) for i in ids), ids
        assert any(re.fullmatch(r"WI_.*SWE.*", i) for i in ids), ids


def test_proton_density_is_not_neon(catalog: Catalog) -> None:
    # `Ne` in ISOIS rate names is neon; only "electron density" may reach for it.
    for hit in catalog.search("proton density", limit=5):
        assert any(re.match(r"(?i)n_?p(\W|_|$)", p) for p in hit.matched_parameters), hit
    wind = top_ids(catalog, "Wind proton density", n=2)
    assert all(re.fullmatch(r"WI_K0_SWE.*", i) for i in wind), wind
    electron = catalog.search("electron density", limit=5)
    assert sum("Ne" in h.matched_parameters for h in electron) >= 2, electron


@pytest.mark.parametrize(("query", "parameter"), [("Dst", "DST"), ("Kp", "KP"), ("dst", "DST")])
def test_geomagnetic_indices_find_omni(catalog: Catalog, query: str, parameter: str) -> None:
    top = catalog.search(query, limit=3)[0]
    assert top.dataset_id == "OMNI2_H0_MRG1HR"
    assert parameter in top.matched_parameters


def test_exact_dataset_id_ranks_first(catalog: Catalog) -> None:
    assert top_ids(catalog, "ac_h0_mfi", n=3)[0] == "AC_H0_MFI"
    assert top_ids(catalog, "OMNI_HRO_1MIN flow speed", n=3)[0] == "OMNI_HRO_1MIN"
    assert top_ids(catalog, "magnetic field WI_H0_MFI", n=3)[0] == "WI_H0_MFI"


def test_dataset_id_prefix_ranks_its_family_first(catalog: Catalog) -> None:
    ids = top_ids(catalog, "PSP_FLD_L2_MAG", n=7)
    assert all(i.startswith("PSP_FLD_L2_MAG") for i in ids), ids


def test_mission_filter_restricts_results(catalog: Catalog) -> None:
    hits = catalog.search("magnetic field", limit=15, mission="Wind")
    assert hits and all(h.mission_id == "wind" for h in hits)
    assert "WI_H0_MFI" in {h.dataset_id for h in hits}
    with pytest.raises(UserError, match="Unknown mission 'Atlantis'"):
        catalog.search("magnetic field", mission="Atlantis")


def test_parameter_names_with_punctuation_are_found(catalog: Catalog) -> None:
    # Exactly two snapshot datasets have a parameter named B_GSE; both must come first.
    hits = catalog.search("B_GSE (nT)", limit=5)
    assert {h.dataset_id for h in hits[:2]} == {"IT_K0_MFI", "PO_K0_MFE"}
    assert all("B_GSE" in h.matched_parameters for h in hits[:2])


@pytest.mark.parametrize(
    "query",
    [
        "B_GSE (nT)",
        '"',
        "'",
        '"unbalanced quote',
        "*",
        "mag*",
        "AND",
        "OR NOT AND",
        "NEAR(",
        "title:mag",
        "^mag",
        "{ident}: x",
        "((((",
        "-",
        "",
        "   ",
        "\u00e9lectron d\u00e9nsit\u00e9",
        "a" * 500,
    ],
)
def test_hostile_input_never_breaks_search(catalog: Catalog, query: str) -> None:
    hits = catalog.search(query, limit=5)
    assert isinstance(hits, list)
    assert len(hits) <= 5
    if not query.strip():
        assert hits == []


def test_search_limit_is_respected(catalog: Catalog) -> None:
    assert len(catalog.search("magnetic field", limit=3)) == 3
    assert catalog.search("magnetic field", limit=0) == []


def test_mission_only_query_lists_science_data_first(catalog: Catalog) -> None:
    hits = catalog.search("ACE", limit=100)
    ids = [h.dataset_id for h in hits]
    assert set(ids) == set(catalog.mission("ACE").dataset_ids)
    assert ids.index("AC_H0_MFI") < ids.index("AC_OR_SSC")


# aliases ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "mission_id"),
    [
        ("PSP", "psp"),
        ("Parker Solar Probe", "psp"),
        ("parker solar probe", "psp"),
        ("SolO", "solar-orbiter"),
        ("Solar Orbiter", "solar-orbiter"),
        ("STA", "stereo"),
        ("STEREO-A", "stereo"),
        ("Van Allen Probes", "rbsp"),
        ("RBSP", "rbsp"),
        ("Arase", "erg"),
        ("ERG", "erg"),
        ("IMP-8", "imp"),
        ("imp8", "imp"),
        ("OMNI", "omni"),
        ("Magnetospheric Multiscale", "mms"),
        ("wind", "wind"),
        ("ACE", "ace"),
        ("Ulysses", "ulysses"),
        ("Voyager 1", "voyager"),
        ("Cluster", "cluster"),
        ("TIMED", "timed"),
        ("Geotail", "geotail"),
    ],
)
def test_mission_aliases_resolve(catalog: Catalog, name: str, mission_id: str) -> None:
    assert catalog.mission(name).id == mission_id


def test_unknown_mission_lists_known_ones(catalog: Catalog) -> None:
    with pytest.raises(UserError) as caught:
        catalog.mission("Enterprise")
    message = caught.value.message
    assert "Unknown mission 'Enterprise'" in message
    assert "ACE" in message and "xhelio catalog missions" in message


def test_missions_carry_aliases_and_datasets(catalog: Catalog) -> None:
    missions = {m.id: m for m in catalog.missions()}
    assert len(missions) == 66
    assert "Parker Solar Probe" in missions["psp"].aliases
    assert "SolO" in missions["solar-orbiter"].aliases
    assert "AC_H0_MFI" in missions["ace"].dataset_ids
    assert sum(len(m.dataset_ids) for m in missions.values()) == 2889


def test_mentions_skip_physics_phrases_and_lower_case_words(catalog: Catalog) -> None:
    table = AliasTable(catalog.missions())

    def mentioned(text: str) -> list[str]:
        return [m.mission_id for m in table.find_mentions(text)]

    assert mentioned("solar wind speed OMNI") == ["omni"]
    assert mentioned("Solar Wind density at ACE") == ["ace"]
    assert mentioned("fast ions in the polar cap") == []
    assert mentioned("FAST ions") == ["fast"]
    assert mentioned("Polar cap index") == []
    assert mentioned("Wind and STEREO-A plasma") == ["wind", "stereo"]


def test_synonyms_expand_physics_words() -> None:
    plan = plan_query("proton density", AliasTable([]))
    expression = plan.concept_expressions[0]
    assert '"density"' in expression and 'units : "cm 3"' in expression
    plan = plan_query("magnetic field", AliasTable([]))
    assert '"mfi"' in plan.concept_expressions[0] and 'units : "nt"' in plan.concept_expressions[0]


# datasets, parameters, browse ------------------------------------------------------------


def test_dataset_lookup_is_case_insensitive_and_suggests(catalog: Catalog) -> None:
    assert catalog.dataset("ac_h0_mfi").id == "AC_H0_MFI"
    with pytest.raises(UnknownDatasetError) as caught:
        catalog.dataset("AC_H0_MFX")
    assert "AC_H0_MFI" in caught.value.suggestions
    assert "Did you mean" in caught.value.message


def test_unknown_parameter_lists_available(catalog: Catalog) -> None:
    assert catalog.parameter("ac_h0_mfi", "bgsec").name == "BGSEc"
    with pytest.raises(UnknownParameterError) as caught:
        catalog.parameter("AC_H0_MFI", "Bz")
    assert "BGSEc" in caught.value.available
    assert "Time" not in caught.value.available


def test_availability_comes_from_the_snapshot(catalog: Catalog) -> None:
    start, stop = catalog.availability("AC_H0_MFI")
    assert start == datetime(1997, 9, 2, 0, 0, 12, tzinfo=UTC)
    assert start is not None and stop is not None
    assert stop > start


def test_browse_excludes_support_data_unless_asked(catalog: Catalog) -> None:
    science = {d.id for d in catalog.browse("ACE")}
    everything = {d.id for d in catalog.browse("ACE", include_auxiliary=True)}
    assert "AC_H0_MFI" in science and "AC_H0_SWE" in science
    for support in ("AC_OR_SSC", "AC_OR_DEF", "AC_AT_DEF", "AC_K0_GIFWALK"):
        assert support not in science
        assert support in everything
    barrel = {d.id for d in catalog.browse("BARREL")}
    assert barrel and not any(i.endswith("_HKPG") for i in barrel)
    solo = {d.id for d in catalog.browse("SolO")}
    assert "SOLO_L2_SWA-HIS-HK" not in solo and "SOLO_L2_MAG-RTN-NORMAL" in solo
    psp = catalog.browse("Parker Solar Probe")
    assert "PSP_HELIO1HR_POSITION" not in {d.id for d in psp}
    assert all(d.parameters for d in psp)


# index lifecycle -------------------------------------------------------------------------


def _stamp(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'stamp'").fetchone()[0])
    finally:
        conn.close()


def test_index_is_reused_then_rebuilt_when_deleted_stale_or_corrupt(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path)
    path = settings.catalog_db
    with open_catalog(settings) as first:
        assert len(first.dataset_ids()) == 2889
    built = path.stat()
    with open_catalog(settings):
        pass
    again = path.stat()
    assert (again.st_ino, again.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)

    path.unlink()
    with open_catalog(settings) as rebuilt:
        assert rebuilt.dataset("AC_H0_MFI").id == "AC_H0_MFI"

    good_stamp = _stamp(path)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = 'schema=0;snapshot=0.0.1' WHERE key = 'stamp'")
    conn.commit()
    conn.close()
    with open_catalog(settings):
        pass
    assert _stamp(path) == good_stamp

    path.write_bytes(b"this is not a database" * 100)
    with open_catalog(settings) as recovered:
        assert len(recovered.dataset_ids()) == 2889
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # every build's temp file was renamed into place


def test_open_catalog_uses_xhelio_home(xhelio_home: Path) -> None:
    with open_catalog() as opened:
        assert opened.path == xhelio_home / "catalog.sqlite"
    assert (xhelio_home / "catalog.sqlite").is_file()


def test_upsert_adds_searchable_dataset_and_guesses_mission(tmp_path: Path) -> None:
    with open_catalog(Settings(home=tmp_path)) as opened:
        new = DatasetInfo(
            id="AC_H9_ZETA",
            title="ACE zeta-meter 2-second test data",
            start=datetime(2020, 1, 1, tzinfo=UTC),
            cadence="PT2S",
            parameters=(
                ParameterInfo(name="Time", type="isotime", units="UTC"),
                ParameterInfo(name="Zeta", units="furlong", size=(2,), fill="-1e31"),
            ),
        )
        assert opened.upsert([new]) == 1
        stored = opened.dataset("ac_h9_zeta")
        assert stored.mission_id == "ace"
        assert stored.parameter("zeta") == new.parameters[1]
        assert "AC_H9_ZETA" in opened.mission("ACE").dataset_ids
        assert top_ids(opened, "zeta furlong", n=1) == ["AC_H9_ZETA"]
        opened.upsert([DatasetInfo(id="AC_H9_ZETA", title="renamed", mission_id="ace")])
        assert opened.dataset("AC_H9_ZETA").title == "renamed"
        assert top_ids(opened, "furlong", n=1) != ["AC_H9_ZETA"]
