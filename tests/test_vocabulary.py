"""The domain vocabulary as data.

It loads, the alias table and parser read it, and a probe shorthand or an instrument added
to the data is understood without code changes.
"""

from __future__ import annotations

from xhelio.catalog.aliases import AliasTable
from xhelio.catalog.model import Mission
from xhelio.language.doubts import find_doubts
from xhelio.language.resolve import probe_of_dataset, probe_wanted
from xhelio.vocabulary import load_vocabulary


def _table() -> AliasTable:
    ids = ("cluster", "themis", "mms", "stereo", "rbsp", "psp", "wind", "ace", "solar-orbiter")
    return AliasTable(Mission(i, i.upper(), 1) for i in ids)


def test_vocabulary_loads_every_section_once() -> None:
    v = load_vocabulary()
    assert v is load_vocabulary()
    assert v.missions["cluster"].probe_of("C3") == "3"
    assert v.missions["themis"].probe_of("THE") == "E"
    assert v.missions["rbsp"].probe_of("Van Allen Probe B") == "B"
    assert {"proton", "electron", "alpha", "oxygen"} <= {s.key for s in v.species}
    assert {"GSE", "GSM", "RTN"} <= set(v.frames)
    assert {d.key for d in v.derived} >= {"clock_angle", "plasma_beta", "alfven_speed"}
    assert any(e.words.search("the Halloween storm of 2003") for e in v.events)


def test_probe_shorthands_name_missions_and_probes() -> None:
    table = _table()
    for text, mission, probe in (
        ("C1", "cluster", "1"),
        ("THA", "themis", "A"),
        ("STB", "stereo", "B"),
        ("RBSP-A", "rbsp", "A"),
        ("MMS3", "mms", "3"),
    ):
        assert table.resolve(text) == mission
        assert probe_wanted(text) == probe
    assert probe_of_dataset("C3_CP_FGM_SPIN") == "3"
    assert probe_of_dataset("RBSP-B_MAGNETOMETER_1SEC-GSM_EMFISIS-L3") == "B"


def test_exact_case_shorthand_is_not_an_english_word() -> None:
    table = _table()
    found = [m.mission_id for m in table.find_mentions("The field from THE and C1")]
    assert found == ["themis", "cluster"]


def test_instrument_names_come_from_the_data() -> None:
    names = {n for i in load_vocabulary().instruments_of("psp") for n in i.names}
    assert {"SPAN-I", "SPC", "FIELDS", "EPI-Lo"} <= names
    hia = next(i for i in load_vocabulary().instruments_of("cluster") if "HIA" in i.names)
    assert hia.datasets.search("C1_CP_CIS-HIA_ONBOARD_MOMENTS")
    assert not hia.datasets.search("C1_CP_CIS-CODIF_HS_H1_PF")


def test_doubts_for_missing_probes_and_near_names() -> None:
    table = _table()
    assert "no 7" in find_doubts("MMS7 magnetic field 2017-07-11", table, [])[0]
    assert "no Z" in find_doubts("Themis Z field", table, [])[0]
    assert "PSP" in find_doubts("Parkr Solar Probe field", table, [])[0]
    for fine in ("MMS1 and MMS4 field", "THEMIS E field", "Solar wind speed at ACE"):
        assert find_doubts(fine, table, []) == ()
