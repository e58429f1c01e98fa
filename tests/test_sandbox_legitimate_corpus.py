"""Ordinary science runs: every snippet of the legitimate-analysis corpus, all layers on.

The corpus (`tests/sandbox_corpus/legitimate/*.py`, one `# %% name` cell per snippet)
is what a space physicist writes: filtering, spectra (Welch, FFT), wavelets, resampling,
merging, rolling statistics, interpolation, coordinate rotations, minimum variance,
detrending, cross-correlation, histograms, xarray operations. Where the OS layers are
present they are the boundary, so the Python layers must let all of it through; the
escape corpora (`tests/test_sandbox_escapes.py`, `..._escape_classes.py`,
`..._redteam.py`, `..._oslayers.py`, `..._hostile_replies.py`) show that nothing this
allows reopens an escape.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor

CORPUS = Path(__file__).parent / "sandbox_corpus" / "legitimate"
_CELL = re.compile(r"^# %% (\S+)\n", re.MULTILINE)


def _snippets() -> dict[str, str]:
    snippets: dict[str, str] = {}
    for path in sorted(CORPUS.glob("*.py")):
        parts = _CELL.split(path.read_text())
        for name, code in zip(parts[1::2], parts[2::2], strict=True):
            key = f"{path.stem}.{name}"
            assert key not in snippets, f"duplicate snippet {key}"
            snippets[key] = code.strip() + "\n"
    return snippets


SNIPPETS = _snippets()


def _sources() -> dict[str, pd.DataFrame | xr.DataArray]:
    rng = np.random.default_rng(2024)
    index = pd.date_range("2024-03-01", periods=2 * 1440, freq="1min", tz="UTC")
    t = np.arange(len(index)) / 1440.0
    mag = pd.DataFrame(
        {
            "bx": 3.0 * np.cos(2 * np.pi * t) + rng.normal(0, 0.8, len(t)),
            "by": -2.0 + 4.0 * np.sin(2 * np.pi * 3 * t) + rng.normal(0, 0.8, len(t)),
            "bz": 1.0 + np.cumsum(rng.normal(0, 0.1, len(t))),
        },
        index=index,
    )
    plasma_index = pd.date_range("2024-03-01", periods=2700, freq="64s", tz="UTC")
    plasma = pd.DataFrame(
        {
            "density": np.exp(rng.normal(1.6, 0.3, len(plasma_index))),
            "speed": rng.normal(420.0, 60.0, len(plasma_index)).clip(250.0, 900.0),
            "temperature": np.exp(rng.normal(11.5, 0.4, len(plasma_index))),
        },
        index=plasma_index,
    )
    spec_time = pd.date_range("2024-03-01", periods=480, freq="3min")
    energy = np.geomspace(10.0, 3e4, 32)
    flux = np.exp(rng.normal(0.0, 0.5, (len(spec_time), len(energy)))) * 1e6 / energy
    spec = xr.DataArray(
        flux,
        dims=("time", "energy"),
        coords={"time": spec_time, "energy": ("energy", energy, {"units": "eV"})},
        name="flux",
        attrs={"units": "1/(cm2 s sr eV)"},
    )
    return {"mag": mag, "plasma": plasma, "spec": spec}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=60.0)) as executor:
        if not executor.isolation().confined:
            pytest.skip("no confining OS layer on this machine (see `xhelio doctor`)")
        yield executor


def test_the_corpus_is_large_and_covers_the_kinds_of_work() -> None:
    assert len(SNIPPETS) >= 100
    kinds = {key.split(".")[0] for key in SNIPPETS}
    assert {"filtering", "spectra", "wavelets", "resampling", "merging", "rolling"} <= kinds
    assert {"interpolation", "coordinates", "mva", "detrending", "correlation"} <= kinds
    assert {"statistics", "xarray_ops"} <= kinds


@pytest.mark.parametrize("name", list(SNIPPETS))
def test_legitimate_analysis_code_runs(name: str, sandbox: SandboxExecutor) -> None:
    try:
        outcome = sandbox.run(SNIPPETS[name], _sources())
    except SandboxError as exc:
        pytest.fail(f"{name} was refused ({exc.category}): {exc.message}")
    assert outcome.kind in {"dataframe", "series", "dataarray", "scalar"}
