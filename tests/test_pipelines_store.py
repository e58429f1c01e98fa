"""PipelineStore: JSON documents + SQLite index, search, vanilla filter, families."""

from __future__ import annotations

import json
import sqlite3

import pytest

from xhelio.config import load_settings
from xhelio.errors import UserError
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline, PipelineStep, PipelineVariable
from xhelio.pipelines.store import PipelineStore


def make(
    pid: str,
    name: str,
    params: tuple[str, ...] = ("Magnitude", "BGSEc", "BGSM"),
    dataset: str = "AC_H2_MFI",
    code: str | None = "result = df",
    color: str = "blue",
) -> Pipeline:
    steps = [
        PipelineStep(
            f"s{i:03d}",
            "fetch_data",
            {"dataset_id": dataset, "parameter_id": p, "time_range": TIME_RANGE_VAR},
            f"Fetch {p} from dataset {dataset}",
            [f"{dataset}.{p}"],
        )
        for i, p in enumerate(params, start=1)
    ]
    if code is not None:
        steps.append(
            PipelineStep(
                "s090",
                "custom_operation",
                {"source_labels": [f"{dataset}.{params[0]}"], "code": code, "output_label": "X"},
                "Smooth the field",
                ["X"],
                ["s001"],
            )
        )
    steps.append(
        PipelineStep(
            "s099",
            "render_plotly_json",
            {"figure": {"data": [{"data_label": "X", "line": {"color": color}}]}},
            "Plot",
            depends_on=["s090"] if code is not None else ["s001"],
            phase="presentation",
        )
    )
    variables = {TIME_RANGE_VAR: PipelineVariable("time_range", "", "2001-01-01 to 2001-01-02")}
    return Pipeline(pid, name, steps, f"{name} analysis", variables)


@pytest.fixture
def store() -> PipelineStore:
    return PipelineStore(load_settings())


def test_save_load_list_delete_round_trip(store: PipelineStore) -> None:
    p = make("pl_one", "ACE storm overview")
    row = store.save(p, ["ace"])
    assert (store.root / "pl_one.json").is_file()
    assert store.load("pl_one").to_dict() == p.to_dict()
    assert store.load("ace STORM overview").id == "pl_one"  # by name, any case
    assert row.missions == ["ac", "ace"] and row.datasets == ["AC_H2_MFI"]
    assert [r.id for r in store.list()] == ["pl_one"]
    store.delete("ACE storm overview")
    assert store.list() == [] and not (store.root / "pl_one.json").exists()
    with pytest.raises(UserError, match="no saved pipelines yet"):
        store.load("pl_one")


def test_unknown_name_suggests_close_ones(store: PipelineStore) -> None:
    store.save(make("pl_one", "ACE storm overview"))
    with pytest.raises(UserError, match="Did you mean 'ace storm overview'"):
        store.resolve("ace strom overview")


def test_search_by_text_mission_and_dataset(store: PipelineStore) -> None:
    store.save(make("pl_ace", "ACE storm overview"), ["ace"])
    store.save(
        make("pl_wind", "Wind field", dataset="WI_H0_MFI", params=("BF1", "BGSE", "BGSM")), ["wind"]
    )
    assert [h.family_id for h in store.search("storm")] == [store.row("pl_ace").family_id]
    assert [h.variants[0].id for h in store.search(mission="wind")] == ["pl_wind"]
    assert [h.variants[0].id for h in store.search(dataset="ac_h2_mfi")] == ["pl_ace"]
    assert [h.variants[0].id for h in store.search("smooth field", mission="ace")] == ["pl_ace"]
    assert store.search("nothing like this") == []


def test_vanilla_pipelines_are_saved_and_listed_but_not_searchable(store: PipelineStore) -> None:
    plain = make("pl_plain", "ACE quick look", params=("Magnitude",), code=None)
    assert plain.is_vanilla()
    row = store.save(plain)
    assert not row.to_dict()["indexed"]
    assert store.search("quick look") == []
    assert [r.id for r in store.list()] == ["pl_plain"]
    assert store.load("ACE quick look").id == "pl_plain"  # still replayable


def test_variants_with_the_same_data_logic_form_one_family(store: PipelineStore) -> None:
    store.save(make("pl_blue", "ACE smoothed blue", color="blue"))
    store.save(make("pl_red", "ACE smoothed red", color="red"))
    store.save(make("pl_other", "ACE smoothed differently", code="result = df * 2"))
    families = store.search("ACE smoothed")
    grouped = {tuple(v.id for v in h.variants) for h in families}
    assert grouped == {("pl_blue", "pl_red"), ("pl_other",)}
    # a search matching only one variant still lists the whole family
    hit = store.search("red")[0]
    assert [v.id for v in hit.variants] == ["pl_blue", "pl_red"]


def test_index_is_rebuilt_from_documents_after_a_schema_change(store: PipelineStore) -> None:
    store.save(make("pl_one", "ACE storm overview"))
    (store.root / "pl_broken.json").write_text("{not json")
    with sqlite3.connect(store.db_path) as db:
        db.execute("UPDATE meta SET value = '0' WHERE key = 'version'")
        db.execute("DELETE FROM pipelines")
    reopened = PipelineStore(load_settings())
    assert [r.id for r in reopened.list()] == ["pl_one"]  # the broken file hides nothing


def test_ids_cannot_escape_the_folder(store: PipelineStore) -> None:
    bad = make("pl_x", "x")
    bad.id = "../evil"
    with pytest.raises(UserError, match="not a pipeline id"):
        store.save(bad)
    assert not (store.root.parent / "evil.json").exists()
    saved = json.loads(json.dumps(make("pl_ok", "ok").to_dict()))
    assert saved["schema_version"] == 1
