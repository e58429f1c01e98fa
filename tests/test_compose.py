"""The answer composer on realistic answers: short answer first, detail apart, no repeats."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from xhelio.api.compose import compose_answer
from xhelio.api.key_numbers import key_numbers
from xhelio.data.entry import DataEntry
from xhelio.data.store import DataStore
from xhelio.render.plot_state import PlotState

SINGLE = "\n".join(
    [
        "Offline mode understood: mission ACE; quantity magnetic field (magnitude); "
        "time range 2024-01-15 to 2024-01-17.",
        "Time range: 2024-01-15 to 2024-01-17.",
        "Plotted ACE magnetic field (magnitude) (nT) in one panel.",
        "Fetched ACE magnetic field (magnitude) as AC_H1_MFI.Magnitude (dataset AC_H1_MFI, "
        "parameter Magnitude, nT): 2000 points over 2024-01-15 00:00:00 to 2024-01-17 "
        "23:57:50 UTC, cadence 129.6 s.",
        "AC_H1_MFI.Magnitude is already a single series; used it as it is.",
    ]
)

MULTI = "\n".join(
    [
        "Offline mode understood: missions Wind, ACE; quantity solar wind speed (proton), "
        "density (proton).",
        "Time range: 2000-07-14 to 2000-07-17.",
        "Plotted 2 stacked panels, top to bottom: Wind speed, ACE speed (km/s); "
        "Wind density, ACE density (cm^-3).",
        "Fetched Wind solar wind speed (proton) as WI_H1_SWE.V (dataset WI_H1_SWE, "
        "parameter V, km/s): 2000 points over 2000-07-14 to 2000-07-17, cadence 92 s.",
        "Used AC_H0_SWE because earlier candidates were skipped: AC_H2_SWE.Np "
        "(NoDataError: no data).",
        "Shown in 2 stacked panels (different quantities or a derived series).",
        "Skipped datasets that do not cover the time: AC_H3_SWE, WI_K0_SWE. "
        "Use `xhelio catalog search WORDS` to find others.",
    ]
)


def test_a_single_plot_says_what_was_shown_first_and_moves_the_log_to_details() -> None:
    numbers = ["ACE |B|, 2024-01-15 to 2024-01-17 (2,000 points): from 4.0 nT to 6.0 nT."]
    composed = compose_answer(SINGLE, numbers)
    first = composed.text.split("\n\n")[0]
    assert first.startswith("Plotted ACE magnetic field (magnitude) (nT) in one panel.")
    assert first.endswith(numbers[0])
    assert "Fetched" not in composed.text and "Offline mode understood" not in composed.text
    assert any(d.startswith("Fetched ACE") for d in composed.details)
    assert any("already a single series" in d for d in composed.details)


def test_a_multi_panel_answer_has_no_second_panel_count_and_no_cli_advice() -> None:
    composed = compose_answer(MULTI, ["Wind speed ...", "ACE speed ..."])
    assert composed.text.startswith("Plotted 2 stacked panels, top to bottom:")
    assert composed.text.count("stacked panels") == 1  # the plan's layout note is detail
    assert "- Wind speed ..." in composed.text and "- ACE speed ..." in composed.text
    assert "xhelio catalog" not in composed.text and "XHELIO_" not in composed.text
    assert "Skipped datasets that do not cover the time: AC_H3_SWE, WI_K0_SWE." in composed.text
    assert any("xhelio catalog search" in d for d in composed.details)


def test_a_follow_up_does_not_repeat_what_an_earlier_answer_said() -> None:
    follow = MULTI.replace("Plotted 2 stacked", "Plotted 3 stacked")
    composed = compose_answer(follow, earlier=[MULTI])
    assert "Skipped datasets" not in composed.text
    assert "Plotted 3 stacked panels" in composed.text
    # The same figure again (a zoom): its short answer is said again all the same.
    again = compose_answer(MULTI, earlier=[MULTI])
    assert again.text.startswith("Plotted 2 stacked panels")
    assert "Skipped datasets" not in again.text
    assert any("Skipped datasets" in d for d in composed.details)


def test_a_partial_failure_says_each_error_once_and_leaves_the_error_to_its_box() -> None:
    problem = "Could not get ACE density: every candidate failed: AC_H0_SWE.Np (NoDataError)."
    text = "\n".join(
        [
            "Plotted Wind solar wind speed (km/s) in one panel.",
            problem,
            problem,
            "Differs from the request: No ACE density data was fetched.",
        ]
    )
    composed = compose_answer(text)
    assert composed.text.count(problem) == 1
    paragraphs = composed.text.split("\n\n")
    assert paragraphs[0] == "Plotted Wind solar wind speed (km/s) in one panel."
    assert paragraphs[1].startswith("Differs from the request:")  # right after the answer
    failed = compose_answer(problem + "\nNothing was plotted.", error=f"Nothing: {problem}")
    assert problem not in failed.text and failed.text == "Nothing was plotted."


def test_a_computation_gives_its_result_not_its_log() -> None:
    text = "\n".join(
        [
            "Computed ACE_B_mean: mean of ACE |B| over the interval (1 points, nT).",
            "The mean ACE field magnitude is 5.01 nT.",
        ]
    )
    composed = compose_answer(text)
    assert composed.text == "The mean ACE field magnitude is 5.01 nT."
    assert composed.details[0].startswith("Computed ACE_B_mean")


def test_an_llm_answer_keeps_its_words_and_markdown_and_gets_the_same_structure() -> None:
    text = (
        "The solar wind speed rose from 350 to 620 km/s on 2024-01-16.\n\n"
        "I fetched 3 datasets. Set XHELIO_HAPI_URL to use a mirror.\n\n"
        "| quantity | peak |\n|---|---|\n| V | 620 km/s |\n\n"
        "```python\nprint('Fetched V')\n```\n\n"
        "**Differs from the request:** Wind has no data then, so ACE is shown."
    )
    composed = compose_answer(text)
    paragraphs = composed.text.split("\n\n")
    assert paragraphs[0] == "The solar wind speed rose from 350 to 620 km/s on 2024-01-16."
    assert paragraphs[1].startswith("**Differs from the request:**")
    assert "| V | 620 km/s |" in composed.text and "print('Fetched V')" in composed.text
    assert "I fetched 3 datasets." in composed.text  # not a log line: kept
    assert composed.details == ("Set XHELIO_HAPI_URL to use a mirror.",)


def test_an_empty_answer_stays_empty() -> None:
    assert compose_answer("").text == ""


def _store() -> DataStore:
    index = pd.date_range("2000-07-14", "2000-07-17 23:00", freq="1h", tz="UTC")
    values = np.linspace(300.0, 700.0, len(index))
    values[10] = np.nan
    store = DataStore()
    frame = pd.DataFrame({"V": values}, index=index)
    store.put(DataEntry("WI.V", frame, units={"V": "km/s"}))
    return store


def test_key_numbers_give_range_extremes_with_times_mean_and_the_inclusive_days() -> None:
    [sentence] = key_numbers(_store(), None, ["WI.V"])
    assert sentence.startswith("WI.V, 2000-07-14 to 2000-07-17 (95 points): ")
    assert "from 300 km/s (2000-07-14 00:00 UTC) to 700 km/s (2000-07-17 23:00 UTC)" in sentence
    assert "mean 50" in sentence


def test_key_numbers_follow_the_figure_and_its_zoom(tmp_path: Path) -> None:
    store = _store()
    plot = PlotState(store, tmp_path)
    figure = {"data": [{"type": "scatter", "data_label": "WI.V", "name": "Wind speed"}]}
    plot.render(figure)
    assert plot.current is not None
    [sentence] = key_numbers(store, plot.current, [])
    assert sentence.startswith("Wind speed, 2000-07-14 to 2000-07-17")
    plot.zoom("2000-07-15T06:00 to 2000-07-15T12:00")
    [zoomed] = key_numbers(store, plot.current, [])
    assert zoomed.startswith("Wind speed, 2000-07-15 06:00 to 11:00 UTC (6 points)")


def test_tool_style_iso_ranges_read_as_inclusive_ranges_in_answers_and_titles(
    tmp_path: Path,
) -> None:
    text = "Wind data for 2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z shows the shock."
    composed = compose_answer(
        f"{text}\n\n```\nrange = '2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z'\n```"
    )
    assert composed.text.startswith("Wind data for 2000-07-14 to 2000-07-17 shows the shock.")
    assert "range = '2000-07-14T00:00:00Z to 2000-07-18T00:00:00Z'" in composed.text  # code
    plot = PlotState(_store(), tmp_path)
    title = "Wind speed, 2000-07-15T06:00:00Z to 2000-07-15T12:00:00Z"
    plot.render({"data": [{"data_label": "WI.V"}], "layout": {"title": {"text": title}}})
    assert plot.current is not None
    assert plot.current.figure["layout"]["title"]["text"] == (
        "Wind speed, 2000-07-15 06:00 to 12:00 UTC"
    )


def test_a_failure_quoted_by_the_error_is_left_to_the_error_whole_not_in_pieces() -> None:
    problem = (
        "Could not get ACE magnetic field: every candidate failed: AC_H1_MFI.BGSEc "
        "(DataUnavailableError: no data in 1990-01-01T00:00:00Z to 1990-01-02T00:00:00Z. "
        "Pick a time range inside that window.); AC_H0_MFI.BGSEc (DataUnavailableError: "
        "no data. Pick a time range inside that window.)."
    )
    composed = compose_answer(f"Offline mode understood: mission ACE.\n{problem}", error=problem)
    assert composed.text == ""
    kept = compose_answer(problem)  # without the error it stays whole, its range readable
    assert kept.text == problem.replace(
        "1990-01-01T00:00:00Z to 1990-01-02T00:00:00Z", "1990-01-01"
    )


def test_a_saved_pipeline_is_the_answer_and_an_answer_of_only_detail_still_answers() -> None:
    saved = compose_answer(
        "Saved pipeline 'ACE overview' (pl_1) with 3 steps:\n- fetch\n- fetch\n- plot"
    )
    assert saved.text.startswith("Saved pipeline 'ACE overview' (pl_1)"), saved
    only_detail = compose_answer("Figure saved to /tmp/x.png.")
    assert only_detail.text == "Figure saved to /tmp/x.png." and not only_detail.details
