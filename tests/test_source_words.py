"""Each quantity of a request reads its own product words, and fitness comes before them.

"Wind MFI |B| and SWE density": 'MFI' is said of |B| and 'SWE' of the density; neither
constrains nor annotates the other (before: the density's answer said "the 'MFI'
product ... has no parameter read as what was asked"). A spectrogram's fit to what was
asked (axis, look direction, field) ranks before the product words its dataset says: a
word in an id ("ELECTRON", "ION") never lifts one sensor's intensity over the omni
spectrum, while a product named among equally fit ones ("FBK", "FFT", "FEEPS") wins.
Plans only (no fetch), read with the shipped catalog.
"""

from __future__ import annotations

import re

import pytest

from plan_helpers import fetched as _fetched
from plan_helpers import plan_of as _plan
from xhelio.language.parse import Vocabulary
from xhelio.language.products import title_words
from xhelio.language.resolve import Candidate, rank_key


@pytest.mark.parametrize(
    ("text", "datasets"),
    [
        ("Wind MFI |B| and SWE density on 2019-06-01", (r"^WI_H0_MFI$", r"^WI_H\d_SWE$")),
        ("ACE SWEPAM speed with MAG Bz on 2012-07-14", (r"^AC_H0_SWE$", r"^AC_H\d_MFI$")),
        ("PSP SPAN-I density vs FIELDS B 2021-04-29", (r"^PSP_SWP_SPI_", r"^PSP_FLD_L2_MAG")),
        (
            "Wind SWE density and temperature and MFI |B| on 2019-06-01",
            (r"^WI_H\d_SWE$", r"^WI_H\d_SWE$", r"^WI_H0_MFI$"),
        ),
    ],
)
def test_an_instrument_said_of_one_quantity_never_annotates_another(
    vocab: Vocabulary, text: str, datasets: tuple[str, ...]
) -> None:
    plan = _plan(vocab, text)
    fetched = _fetched(plan)
    assert len(fetched) == len(datasets), (fetched, plan.notes)
    for (dataset, _), pattern in zip(fetched, datasets, strict=True):
        assert re.search(pattern, dataset), fetched
    assert not any("Differs from the request" in n for n in plan.notes), plan.notes


def test_an_instrument_said_after_every_quantity_is_said_of_each(vocab: Vocabulary) -> None:
    plan = _plan(vocab, "Wind density and temperature from SWE on 2019-06-01")
    fetched = _fetched(plan)
    assert len(fetched) == 2 and all(re.match(r"WI_H\d_SWE", d) for d, _ in fetched), fetched


@pytest.mark.parametrize(
    ("text", "dataset", "parameter"),
    [
        # Fitness first: an id saying ELECTRON/ION is no reason to leave the omni spectrum.
        ("MMS2 electron energy spectrogram 2017-07-11", "MMS2_FPI_", r"energyspectr_omni"),
        ("MMS1 ion energy spectrogram 2017-07-11", "MMS1_FPI_", r"energyspectr_omni"),
        # A product named among equally fit ones: the one named.
        ("FEEPS electron spectrogram from MMS1 on 2017-07-11", "MMS1_FEEPS_", r"feeps"),
        ("THEMIS C FBK search coil spectrogram 2010-05-01", "THC_L2_FBK", r"_fb_scm\d$"),
        # Equal SCM spectra: the first the dataset lists, named in the answer with the others
        # (its field-aligned delta-B or an axis, both of the search coil).
        ("THEMIS C FFT search coil spectrogram 2010-05-01", "THC_L2_FFT", r"_scm\d$|_dbpara$"),
        # Named over fitter: a radio receiver over an omni particle spectrum, and a
        # pitch-angle x energy array over a 1-D one.
        ("Wind RAD2 spectrogram 2012-07-23", "WI_L2_WAV_RAD2", r"^PSD"),
        ("FAST TEAMS O+ pitch angle distribution 1998-05-01", "FAST_TEAMS_PA_L2", r"oxygen"),
    ],
)
def test_a_spectrogram_is_the_fittest_then_the_product_named(
    vocab: Vocabulary, text: str, dataset: str, parameter: str
) -> None:
    plan = _plan(vocab, text)
    fetched = _fetched(plan)
    assert fetched and fetched[0][0].startswith(dataset), (fetched, plan.notes)
    assert re.search(parameter, fetched[0][1]), fetched
    assert not any("Differs from the request" in n for n in plan.notes), plan.notes


def test_a_product_named_then_fitness_then_other_words_said_order_candidates() -> None:
    said = Candidate("A", "a", "", 32, 9.0, "", said=1, fit=2.0)
    fit = Candidate("B", "b", "", 32, 5.0, "", said=0, fit=3.0)
    tied = Candidate("C", "c", "", 32, 1.0, "", said=1, fit=3.0)
    named = Candidate("D", "d", "", 32, 0.0, "", said=1, named=1, fit=1.0)
    assert sorted([said, fit, tied, named], key=rank_key) == [named, tied, fit, said]


def test_an_instrument_title_says_its_spaced_name_but_a_marker_only_its_own_spelling() -> None:
    assert "SEARCH-COIL" in title_words("Filter Bank spectra of the Search Coil Magnetometer")
    assert "HIGH-RESOLUTION" not in title_words("Magnetic Field High Resolution data")


def test_a_product_spelled_out_is_the_one_its_title_names(vocab: Vocabulary) -> None:
    # "filter bank" is THEMIS FBK ("... Filter Bank spectra"), not the FFT spectra.
    plan = _plan(vocab, "THEMIS-D search coil filter bank spectrogram 2011-03-02")
    assert _fetched(plan)[0][0] == "THD_L2_FBK", (_fetched(plan), plan.notes)
