"""Offline mode answers analysis requests through the analysis skill (synthetic HAPI data).

The loopback server serves synthetic data for whatever dataset is picked, so these tests
check that the right series are fetched and the method's answer (numbers, method,
reference) comes back, not the physics (tests/test_analysis_methods.py does that).
"""

from __future__ import annotations

from conftest import OfflineSession
from xhelio.agents.offline.analysis_skill import answer


def test_minimum_variance_on_the_wind_field(session: OfflineSession) -> None:
    turn = session.ask("minimum variance on the Wind field from 10:15 to 10:25 on 2015-03-17")
    assert turn.error is None, turn.answer
    assert "WI_H0_MFI" in turn.answer and "Minimum variance normal n = (" in turn.answer
    assert "λ2/λ3" in turn.answer and "Sonnerup" in turn.answer
    assert any(d.label.endswith(".LMN") for d in turn.data)


def test_theta_bn_of_a_shock_from_wind(session: OfflineSession) -> None:
    turn = session.ask("θBn of the shock at 2015-03-17 04:00 from Wind")
    assert "WI_H0_MFI" in turn.answer
    assert "θBn = " in turn.answer and "Schwartz" in turn.answer, turn.answer


def test_psd_of_the_ace_field(session: OfflineSession) -> None:
    turn = session.ask("PSD of the ACE field on 2020-01-01")
    assert turn.error is None, turn.answer
    assert "AC_H" in turn.answer and "degrees of freedom" in turn.answer
    assert "Welch" in turn.answer and any(d.label.endswith(".PSD") for d in turn.data)


def test_proton_gyrofrequency_from_omni_is_a_derived_series(session: OfflineSession) -> None:
    # A plasma scale is computed over time from the fetched |B| (derived.py), its formula
    # said; the skill's medians answer only the quantities it alone computes.
    turn = session.ask("proton gyrofrequency from OMNI for March 2015")
    assert turn.error is None, turn.answer
    assert "OMNI" in turn.answer and "f_cp = e B / (2 pi m_p)" in turn.answer, turn.answer
    assert turn.figures  # the asked quantity over time is drawn


def test_a_derived_quantity_is_left_to_the_planned_series(session: OfflineSession) -> None:
    # Plasma beta, Mach numbers, pressures: computed over time as sandbox code (derived.py).
    assert answer(session.assistant, "plasma beta from OMNI for March 2015") is None


def test_other_requests_are_left_to_the_ordinary_reader(session: OfflineSession) -> None:
    assert answer(session.assistant, "plot the ACE magnetic field on 2020-01-01") is None
    assert answer(session.assistant, "shock normal please") is None  # no time: not ours
