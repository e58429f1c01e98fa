"""Generated code calls the analysis methods as `analysis.*` in the sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from xhelio.config import Settings
from xhelio.errors import SandboxError
from xhelio.sandbox import SandboxExecutor
from xhelio.sandbox.function_docs import get_function_docs, search_function_docs


@pytest.fixture(scope="module")
def executor() -> Iterator[SandboxExecutor]:
    with SandboxExecutor(replace(Settings(), sandbox_timeout_s=60.0)) as sandbox:
        yield sandbox


def _sheet() -> pd.DataFrame:
    index = pd.date_range("2015-03-17T10:15", periods=300, freq="1s", tz="UTC")
    z = np.linspace(-3, 3, 300)
    rng = np.random.default_rng(0)
    values = np.column_stack([20 * np.tanh(z), 5 / np.cosh(z), np.full(300, 2.0)])
    return pd.DataFrame(values + rng.normal(scale=0.2, size=(300, 3)), index=index,
                        columns=["bx", "by", "bz"])  # fmt: skip


def test_minimum_variance_and_psd_run_in_the_sandbox(executor: SandboxExecutor) -> None:
    code = (
        "r = analysis.minimum_variance(df[['bx', 'by', 'bz']])\n"
        "result = pd.DataFrame({'normal': r['normal'], 'ratio': [r['ratio']] * 3})"
    )
    outcome = executor.run(code, {"b": _sheet()})
    assert isinstance(outcome.value, pd.DataFrame)
    normal = outcome.value["normal"].to_numpy()
    assert abs(abs(normal[2]) - 1) < 0.01 and outcome.value["ratio"].iloc[0] > 10
    psd = executor.run("result = analysis.welch_psd(df['bx'])", {"b": _sheet()})
    assert isinstance(psd.value, pd.DataFrame) and list(psd.value.columns) == [
        "psd", "lower", "upper"
    ]  # fmt: skip


def test_the_analysis_module_cannot_be_replaced_or_opened(executor: SandboxExecutor) -> None:
    with pytest.raises(SandboxError):
        executor.run("analysis.minimum_variance = print\nresult = 1", {"b": _sheet()})
    with pytest.raises(SandboxError):
        executor.run("result = analysis.__dict__", {"b": _sheet()})


def test_function_docs_list_the_analysis_methods() -> None:
    names = [r["name"] for r in search_function_docs("minimum variance normal")]
    assert "analysis.minimum_variance" in names
    doc = get_function_docs("analysis.shock_normal")
    assert "Schwartz" in doc["doc"]
