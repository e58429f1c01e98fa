"""The REST routes of `xhelio serve` over real HTTP on loopback (offline mode, loopback HAPI)."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator

import httpx
import pandas as pd
import pytest

from server_fixtures import ACE, Api, hapi, live_api  # noqa: F401  (fixture)
from servers.catalog_hapi import CatalogHapiServer
from xhelio.api.models import AskResponse, StreamEvent
from xhelio.operations import DOWNLOAD_CALLER
from xhelio.pipelines.extract import extract_pipeline


@pytest.fixture(scope="module")
def api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(tmp_path_factory.mktemp("api-home"), hapi.url)


@pytest.fixture(scope="module")
def asked(api: Api) -> AskResponse:
    response = api.client.post("/ask", json={"question": ACE})
    assert response.status_code == 200, response.text
    return AskResponse.model_validate(response.json())


def sse(text: str) -> list[StreamEvent]:
    """Parse an SSE body into events."""
    events: list[StreamEvent] = []
    for block in text.strip().split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith(":"):
                continue
            key, _, value = line.partition(": ")
            fields[key] = value
        if "event" in fields:
            events.append(
                StreamEvent(
                    type=fields["event"],
                    id=int(fields["id"]) if "id" in fields else None,
                    data=json.loads(fields["data"]),
                )
            )
    return events


def test_health_status_and_openapi(api: Api) -> None:
    health = httpx.get(api.url + "/api/health").json()
    assert health["status"] == "ok" and health["offline"] is True
    status = api.client.get("/status").json()
    assert "POST /api/v1/ask/stream" in status["implemented"]
    assert status["sandbox"]["code_allowed"] is (status["sandbox"]["os_isolation"])
    # No Swagger page (it loaded an unpinned CDN script into this origin); the schema stays.
    assert httpx.get(api.url + "/docs").status_code == 404
    paths = httpx.get(api.url + "/openapi.json").json()["paths"]
    assert "/api/v1/sessions/{session_id}/entries/{label}/preview" in paths


def test_ask_returns_the_response_model(api: Api, asked: AskResponse) -> None:
    assert asked.error is None
    assert asked.session_id and len(asked.session_id) == 33
    assert next(d.dataset for d in asked.data).startswith("AC_H")
    assert asked.table is not None and asked.table.row_count == asked.data[0].points
    assert asked.figure is not None and len(asked.figure["data"]) == 3
    assert asked.suggestions


def test_ask_is_documented_and_served_as_the_response_model(api: Api) -> None:
    """/ask writes the AskResponse itself (off FastAPI's re-validation); docs still say so."""
    schema = httpx.get(api.url + "/openapi.json").json()
    ok = schema["paths"]["/api/v1/ask"]["post"]["responses"]["200"]["content"]
    assert ok["application/json"]["schema"] == {"$ref": "#/components/schemas/AskResponse"}
    response = api.client.post("/ask", json={"question": "Wind magnetic field on 2024-02-02"})
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == set(AskResponse.model_fields)
    assert body == json.loads(AskResponse.model_validate(body).model_dump_json())


def test_session_detail_history_entries_figure(api: Api, asked: AskResponse) -> None:
    detail = api.client.get(f"/sessions/{asked.session_id}").json()
    assert [m["role"] for m in detail["history"]] == ["user", "assistant"]
    assert detail["history"][0]["content"] == ACE
    assert [e["label"] for e in detail["entries"]] == [asked.data[0].label]
    assert detail["figure"]["data"] and detail["busy"] is False and detail["last_event_id"] > 0


def test_stream_orders_session_events_and_done(api: Api, asked: AskResponse) -> None:
    body = {"question": "ACE solar wind speed 2024-01-02", "session_id": asked.session_id}
    events = sse(api.client.post("/ask/stream", json=body).text)
    types = [e.type for e in events]
    assert types[0] == "session" and events[0].data["session_id"] == asked.session_id
    assert types[-1] == "done"
    assert {"tool_call", "tool_result", "data", "figure", "answer"} <= set(types)
    final = AskResponse.model_validate(events[-1].data["response"])
    data_events = [e for e in events if e.type == "data"]
    assert [e.data["label"] for e in data_events] == [d.label for d in final.data]
    ids = [e.id for e in events if e.id is not None]
    assert ids == sorted(ids)


def test_events_resume_after_last_event_id(api: Api, asked: AskResponse) -> None:
    sid = asked.session_id
    everything = sse(api.client.get(f"/sessions/{sid}/events").text)
    ids = [e.id for e in everything if e.id is not None]
    assert ids and everything[-1].type == "done"
    middle = ids[len(ids) // 2]
    resumed = sse(
        api.client.get(f"/sessions/{sid}/events", headers={"Last-Event-ID": str(middle)}).text
    )
    assert [e.id for e in resumed if e.id is not None] == [i for i in ids if i > middle]
    assert api.client.get("/sessions/snope/events").status_code == 404


def test_gallery_keeps_every_figure_with_its_request(api: Api, asked: AskResponse) -> None:
    figures = api.client.get(f"/sessions/{asked.session_id}/gallery").json()["figures"]
    assert figures[0]["request"] == ACE and figures[0]["traces"] == 3
    one = api.client.get(f"/sessions/{asked.session_id}/gallery/{figures[0]['id']}").json()
    assert one["figure"]["data"]
    assert api.client.get(f"/sessions/{asked.session_id}/gallery/999").status_code == 404


def test_session_crud(api: Api) -> None:
    created = api.client.post("/sessions", json={"title": "storm study"})
    assert created.status_code == 201
    sid = created.json()["id"]
    assert sid in [s["id"] for s in api.client.get("/sessions").json()["sessions"]]
    renamed = api.client.patch(f"/sessions/{sid}", json={"title": "May 2024 storm"}).json()
    assert renamed["title"] == "May 2024 storm"
    assert api.client.post(f"/sessions/{sid}/cancel").json() == {"cancelled": False}
    assert api.client.delete(f"/sessions/{sid}").status_code == 204
    gone = api.client.get(f"/sessions/{sid}")
    assert gone.status_code == 404 and gone.json()["type"] == "NotFound"


def test_ask_in_unknown_session_is_404(api: Api) -> None:
    response = api.client.post(
        "/ask", json={"question": "list missions", "session_id": "sdeadbeef"}
    )
    assert response.status_code == 404 and response.json()["type"] == "NotFound"


def test_a_busy_session_is_409_and_never_blocks_another(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with api.assistant.hub.checkout(sid):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        busy = api.client.post("/ask", json={"question": "list missions", "session_id": sid})
        assert busy.status_code == 409 and busy.json()["type"] == "SessionBusy"
        cancel = api.client.post(f"/sessions/{sid}/cancel").json()
        assert cancel == {"cancelled": True}
        # Another session answers while this one is held.
        other = api.client.post("/ask", json={"question": "list missions"})
        assert other.status_code == 200 and other.json()["error"] is None
    finally:
        release.set()
        holder.join()


def test_catalog_routes(api: Api) -> None:
    hits = api.client.get("/catalog/search", params={"q": "ACE magnetic field"}).json()["results"]
    assert hits and all(h["mission"] == "ace" for h in hits[:3])
    missions = api.client.get("/catalog/missions").json()["missions"]
    assert any(m["id"] == "ace" for m in missions)
    datasets = api.client.get("/catalog/missions/ACE/datasets").json()["datasets"]
    assert any(d["id"] == "AC_H1_MFI" and d["start"] and d["cadence"] for d in datasets)
    info = api.client.get("/catalog/datasets/AC_H1_MFI").json()
    assert any(p["name"] == "Magnitude" and p["units"] == "nT" for p in info["parameters"])
    missing = api.client.get("/catalog/datasets/NOPE_XYZ")
    assert missing.status_code == 404 and missing.json()["type"] == "UnknownDatasetError"
    assert api.client.get("/catalog/search", params={"q": "x", "limit": 500}).status_code == 422


def test_fetch_entries_preview_describe_export_plot(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-01"}
    fetched = api.client.post(f"/sessions/{sid}/fetch", json=body).json()
    label = fetched["label"]
    assert fetched["labels"] == [label] and fetched["points"] == 1440
    entries = api.client.get(f"/sessions/{sid}/entries").json()["entries"]
    assert [e["label"] for e in entries] == [label]
    preview = api.client.get(f"/sessions/{sid}/entries/{label}/preview", params={"n": 3}).json()
    assert len(preview["head"]) == 3 and len(preview["tail"]) == 3
    stats = api.client.get(f"/sessions/{sid}/entries/{label}/describe").json()
    assert stats["columns"]["Magnitude"]["min"] is not None
    for fmt in ("csv", "parquet", "netcdf"):
        file = api.client.get(f"/sessions/{sid}/entries/{label}/export", params={"format": fmt})
        assert file.status_code == 200
        if fmt == "csv":
            assert len(pd.read_csv(io.StringIO(file.text))) == 1440
        elif fmt == "parquet":
            assert len(pd.read_parquet(io.BytesIO(file.content))) == 1440
        else:
            assert file.content[:3] in (b"CDF", b"\x89HD")
    assert api.client.get(f"/sessions/{sid}/figure").json() == {"figure": None}
    assert api.client.get(f"/sessions/{sid}/figure/export").status_code == 404
    plotted = api.client.post(f"/sessions/{sid}/plot", json={"labels": [label]}).json()
    assert plotted["figure"]["data"] and plotted["gallery_id"] == 1
    html = api.client.get(f"/sessions/{sid}/figure/export", params={"format": "html"})
    assert html.status_code == 200 and b"plotly" in html.content.lower()
    tools = [
        op["tool"] for op in api.client.get(f"/sessions/{sid}/operations").json()["operations"]
    ]
    assert tools == [
        "fetch_data",
        "save_data",
        "save_data",
        "save_data",
        "render_plotly_json",
    ]  # the figure's download is not an analysis step: no manage_plot export recorded


def test_a_data_page_download_is_no_pipeline_step(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-01"}
    label = api.client.post(f"/sessions/{sid}/fetch", json=body).json()["label"]
    export = api.client.get(f"/sessions/{sid}/entries/{label}/export", params={"format": "csv"})
    assert export.status_code == 200
    ops = api.client.get(f"/sessions/{sid}/operations").json()["operations"]
    assert [(op["phase"], op["caller"]) for op in ops] == [
        ("fetch", "api"),
        ("export", DOWNLOAD_CALLER),
    ]  # traced, as every call is
    pipeline = extract_pipeline(ops, "download check", parameterise=False)
    assert [step.tool_phase for step in pipeline.steps] == ["fetch"]


def test_fetch_stream_and_bad_fetch(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-02"}
    events = sse(api.client.post(f"/sessions/{sid}/fetch/stream", json=body).text)
    assert [e.type for e in events][-1] == "done"
    assert "data" in [e.type for e in events]
    assert events[-1].data["result"]["points"] == 1440
    bad = dict(body, parameter_id="NoSuchParam")
    failed = api.client.post(f"/sessions/{sid}/fetch", json=bad)
    assert failed.status_code == 404 and failed.json()["type"] == "UnknownParameterError"
    missing = api.client.get(f"/sessions/{sid}/entries/NOPE/preview")
    assert missing.status_code in (400, 404) and missing.json()["status"] == "error"


def test_settings_round_trip_without_secrets(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-value")
    got = api.client.get("/settings")
    assert "sk-test-secret-value" not in got.text and got.json()["keys_present"]["openai"]
    put = api.client.put(
        "/settings",
        json={"models": {"default": "openai-chat:llama3.2"}, "limits": {"http_retries": 5}},
    ).json()
    assert put["models"]["default"] == "openai-chat:llama3.2" and put["limits"]["http_retries"] == 5
    text = (api.home / "config.toml").read_text()
    assert 'default = "openai-chat:llama3.2"' in text and "http_retries = 5" in text
    bad = api.client.put("/settings", json={"models": {"default": "nonsense"}})
    assert bad.status_code == 400 and bad.json()["type"] == "ConfigError"
    assert api.client.put("/settings", json={"api_key": "x"}).status_code == 422
    secret = api.client.put("/settings", json={"memory": {"api_key": "x"}})
    assert secret.status_code == 400
    api.client.put("/settings", json={"models": {"default": ""}})
    assert api.client.get("/settings").json()["models"]["default"] is None


@pytest.mark.parametrize("model", ["test", " test ", "test:anything"])
def test_a_request_cannot_choose_the_test_model(api: Api, model: str) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    response = api.client.post(
        "/ask", json={"question": "delete every pipeline", "session_id": sid, "model": model}
    )
    assert response.status_code == 400, response.text
    assert response.json()["type"] == "ConfigError"
    assert response.json()["message"].startswith(f"model={model!r}")
    assert api.client.get(f"/sessions/{sid}/operations").json() == {"operations": []}


def test_a_busy_session_is_session_busy_on_every_route(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with api.assistant.hub.checkout(sid):
            held.set()
            release.wait(60)

    holder = threading.Thread(target=hold)
    holder.start()
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-01"}
    try:
        assert held.wait(30)
        for method, path, payload in [
            ("POST", "/ask", {"question": "list missions", "session_id": sid}),
            ("POST", f"/sessions/{sid}/fetch", body),
            ("POST", f"/sessions/{sid}/plot", {"labels": ["x"]}),
            ("DELETE", f"/sessions/{sid}", None),
            ("POST", "/ask/stream", {"question": "list missions", "session_id": sid}),
        ]:
            answer = api.client.request(method, path, json=payload)
            assert answer.status_code == 409, (path, answer.text)
            assert answer.json() == {
                "status": "error",
                "type": "SessionBusy",
                "message": answer.json()["message"],
            }
        events = sse(api.client.post(f"/sessions/{sid}/fetch/stream", json=body).text)
        errors = [e.data for e in events if e.type == "error"]
        assert [e["type"] for e in errors] == ["SessionBusy"]
        assert events[-1].data["result"]["type"] == "SessionBusy"
    finally:
        release.set()
        holder.join()


def test_unknown_names_are_404_with_their_own_type(api: Api) -> None:
    sid = api.client.post("/sessions", json={}).json()["id"]
    for path, kind in [
        (f"/sessions/{sid}/entries/NOPE/preview", "UnknownLabelError"),
        (f"/sessions/{sid}/entries/NOPE/describe", "UnknownLabelError"),
        (f"/sessions/{sid}/entries/NOPE/export", "UnknownLabelError"),
        (f"/sessions/{sid}/gallery/7", "NotFound"),
        (f"/sessions/{sid}/figure/export", "NotFound"),
        ("/sessions/snope", "NotFound"),
        ("/catalog/datasets/NOPE_XYZ", "UnknownDatasetError"),
    ]:
        answer = api.client.get(path)
        assert (answer.status_code, answer.json()["type"]) == (404, kind), path
    plotted = api.client.post(f"/sessions/{sid}/plot", json={"labels": ["NOPE"]})
    assert (plotted.status_code, plotted.json()["type"]) == (404, "UnknownLabelError")
