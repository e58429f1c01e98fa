"""The request-vs-data check, in both modes: a wrong choice is said, never silent.

The LLM path runs scripted models (FunctionModel via `agent_script.Script`) whose mission
agent fetches the wrong spacecraft or window; the offline path is driven through
`run_turn` against the catalog-wide loopback HAPI server. The unit tests feed the check
funnel records directly.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_script import Script, scripted_config
from check_support import catalog_workspace, fetch_record  # noqa: F401  (fixture)
from xhelio.agents.check import HEADING, check_turn
from xhelio.agents.orchestrator import AgentAssistant
from xhelio.agents.turn import run_turn
from xhelio.tools.workspace import Workspace

HALLOWEEN = "2003-10-28T00:00:00Z to 2003-11-02T00:00:00Z"


def test_check_names_another_mission_probe_species_frame_and_window(
    workspace: Workspace,
) -> None:
    catalog = workspace.context.catalog
    say = lambda text, *ops: " ".join(check_turn(text, list(ops), catalog))  # noqa: E731
    assert "AC_H1_MFI" in say(
        "Wind magnetic field 2003-10-29", fetch_record("AC_H1_MFI", "BGSEc", "2003-10-29")
    )
    assert "spacecraft 1" in say(
        "C3 magnetic field 2003-10-29",
        fetch_record("C1_CP_FGM_SPIN", "B_vec_xyz_gse__C1_CP_FGM_SPIN", "2003-10-29"),
    )
    assert "was asked" in say(
        "ACE magnetic field during the Halloween storm",
        fetch_record("AC_H1_MFI", "BGSEc", "2003-01-01 to 2004-01-01"),
    )
    assert "electron" in say(
        "Wind proton density 2019-06-01", fetch_record("WI_K0_3DP", "elect_density", "2019-06-01")
    )
    assert "GSE" in say(
        "ACE Bz in GSM 2015-03-17", fetch_record("AC_H0_MFI", "BGSEc", "2015-03-17")
    )
    # What the request asks, fetched as asked: nothing to say.
    assert (
        say(
            "ACE magnetic field during the Halloween storm",
            fetch_record("AC_H1_MFI", "BGSEc", HALLOWEEN),
        )
        == ""
    )


def test_a_frame_named_in_the_parameter_name_decides(workspace: Workspace) -> None:
    """The parameter's own name says its frame, whatever else its title mentions.

    A frame typed with no quantity word ("MGF data in GSM") is checked too.
    """
    catalog = workspace.context.catalog
    say = lambda text, *ops: " ".join(check_turn(text, list(ops), catalog))  # noqa: E731
    assert "not GSE as asked" in say(
        "THEMIS-A Bz in GSE 2008-03-10", fetch_record("THA_L2_FGM", "tha_fgs_gsm", "2008-03-10")
    )
    assert "not GSM as asked" in say(
        "Geotail Editor-B MGF data in GSM 1999-02-18",
        fetch_record("GE_EDB3SEC_MGF", "BGSE", "1999-02-18"),
    )
    assert "as asked" not in say(
        "THEMIS-A Bz in GSM 2008-03-10", fetch_record("THA_L2_FGM", "tha_fgs_gsm", "2008-03-10")
    )
    assert "as asked" not in say(
        "ACE field in GSE 2015-03-17", fetch_record("AC_H0_MFI", "BGSEc", "2015-03-17")
    )


def test_offline_mode_is_checked_and_fine_when_honoured(workspace: Workspace) -> None:
    from xhelio.agents.offline import OfflineAssistant

    result = run_turn(
        workspace, OfflineAssistant(workspace), "ACE |B| for 2015-03-16 to 2015-03-18"
    )
    assert result.error is None and result.data
    assert HEADING not in result.answer


def _wrong_mission_script(fetch: dict[str, Any]) -> Script:
    return Script(
        {
            "orchestrator": [
                [("delegate_to_mission", {"mission_id": "ACE", "request": "magnetic field"})],
                "Here is the ACE magnetic field for the Halloween storm.",
            ],
            "mission:ACE": [[("fetch_data", fetch)], "Fetched it."],
        }
    )


@pytest.mark.parametrize(
    ("fetch", "said"),
    [
        # The model picked Wind's magnetometer for an ACE request.
        (
            {"dataset_id": "WI_H0_MFI", "parameter_id": "B3GSE", "time_range": HALLOWEEN},
            "WI_H0_MFI",
        ),
        # The model read "the Halloween storm of 2003" as all of 2003.
        (
            {
                "dataset_id": "AC_H1_MFI",
                "parameter_id": "BGSEc",
                "time_range": "2003-01-01 to 2003-12-31",
            },
            "2003-01-01",
        ),
    ],
)
def test_llm_path_wrong_choice_is_caught(
    workspace: Workspace, fetch: dict[str, Any], said: str
) -> None:
    script = _wrong_mission_script(fetch)
    assistant = AgentAssistant(workspace, scripted_config(), None, build_model=script.build)
    result = run_turn(
        workspace, assistant, "Show ACE magnetic field during the Halloween storm of 2003"
    )
    fetched = [op for op in workspace.session.operations if op["tool"] == "fetch_data"]
    assert fetched and fetched[-1]["status"] == "ok", fetched
    assert HEADING in result.answer
    assert said in result.answer.split(HEADING, 1)[1]


def test_each_clause_and_each_follow_up_is_judged_by_its_own_series(
    workspace: Workspace,
) -> None:
    """|B| beside an electron density holds no species; a follow-up's redrawn |B| is no HOPE."""
    catalog = workspace.context.catalog
    day = "2015-03-17"
    field = fetch_record("RBSP-A_MAGNETOMETER_4SEC-GSE_EMFISIS-L3", "Mag", day)
    density = fetch_record("RBSPA_REL04_ECT-HOPE-MOM-L3", "Dens_e_200", day)
    both = check_turn(
        "RBSP-A EMFISIS |B| and HOPE electron density, 2015-03-17", [field, density], catalog
    )
    assert not [n for n in both if "electrons" in n], both
    added = check_turn("add the HOPE electron density", [field, density], catalog, follow_up=True)
    assert added == [], added
    wrong = check_turn("add the HOPE electron density", [field], catalog, follow_up=True)
    assert any("not from HOPE" in n for n in wrong), wrong
