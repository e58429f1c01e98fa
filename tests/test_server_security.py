"""Safe by default: every guard of the REST server, each tested.

Bind refusal, bearer token, Host/Origin, CORS, body/upload/stream limits, unguessable ids,
file policy, code policy and JSON errors without stack traces.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from server_fixtures import ACE, Api, hapi, live_api  # noqa: F401  (fixture)
from servers.catalog_hapi import CatalogHapiServer
from xhelio.api import policy as policy_module
from xhelio.api.hub import new_secret_id
from xhelio.api.policy import server_policy
from xhelio.cli.main import app as cli_app
from xhelio.errors import ConfigError
from xhelio.server import ServerConfig, create_app
from xhelio.tools.toolset import default_registry

TOKEN = "Vb7-qK2mZx9LwR4tYp1sNd8hGc6FjE3u"


@pytest.fixture(scope="module")
def open_api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(
        tmp_path_factory.mktemp("open"),
        hapi.url,
        max_body_bytes=4096,
        max_upload_bytes=10_000,
        max_stream_events=3,
    )


@pytest.fixture(scope="module")
def token_api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(tmp_path_factory.mktemp("token"), hapi.url, token=TOKEN)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.org"])
def test_non_loopback_bind_refuses_without_token(host: str) -> None:
    with pytest.raises(ConfigError, match="XHELIO_API_TOKEN"):
        create_app(ServerConfig(host=host))


def test_non_loopback_bind_starts_with_a_token_and_short_tokens_are_refused() -> None:
    assert create_app(ServerConfig(host="0.0.0.0", token=TOKEN)) is not None
    with pytest.raises(ConfigError, match="too short"):
        create_app(ServerConfig(host="0.0.0.0", token="abc"))


WEAK_TOKENS = [
    "",
    " " * 16,
    " " * 40,
    "\t" * 20,
    "a" * 16,
    "x" * 64,
    "abababababababab",
    "0123456789abcdef",
    "abcdefghijklmnopqrstuvwxyz",
    "t0k3n-" + "x" * 30,
    " " + TOKEN,
    TOKEN + "\n",
    "Vb7-qK2m Zx9LwR4t",
    "Vb7-qK2m\x00Zx9LwR4t",
    "short",
]


@pytest.mark.parametrize("token", WEAK_TOKENS)
def test_weak_or_blank_tokens_are_refused_with_a_clear_message(token: str) -> None:
    with pytest.raises(
        ConfigError, match=r"XHELIO_API_TOKEN (is|contains) .*secrets\.token_urlsafe"
    ):
        ServerConfig(token=token)
    with pytest.raises(ConfigError, match="XHELIO_API_TOKEN"):
        create_app(ServerConfig.from_env(host="0.0.0.0", token=token or " "))


@pytest.mark.parametrize("token", [t for t in WEAK_TOKENS if t and "\x00" not in t])
def test_serve_refuses_a_weak_token_from_the_environment(
    token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never_serve(*_: object, **__: object) -> None:
        raise AssertionError("the server started with a weak token")

    monkeypatch.setattr(uvicorn, "run", never_serve)
    monkeypatch.setenv("XHELIO_API_TOKEN", token)
    result = CliRunner().invoke(cli_app, ["serve", "--port", "1"])
    assert result.exit_code != 0
    assert "XHELIO_API_TOKEN" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("seed", range(20))
def test_random_tokens_are_accepted(seed: int) -> None:
    for size in (12, 16, 32):
        assert ServerConfig(token=secrets.token_urlsafe(size)).token
    assert ServerConfig(token=secrets.token_hex(8 + seed % 8)).token


def test_token_env_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XHELIO_API_TOKEN", TOKEN)
    assert ServerConfig.from_env(host="0.0.0.0").token == TOKEN


def test_every_route_needs_the_bearer_token(token_api: Api) -> None:
    bare = httpx.Client(base_url=token_api.url)
    for method, path in [
        ("GET", "/api/v1/sessions"),
        ("POST", "/api/v1/ask"),
        ("POST", "/api/v1/ask/stream"),
        ("GET", "/api/v1/catalog/missions"),
        ("GET", "/api/v1/settings"),
        ("GET", "/openapi.json"),
    ]:
        response = bare.request(method, path, json={"question": "x"})
        assert response.status_code == 401, path
        assert response.json()["type"] == "Unauthorized"
    wrong = bare.get("/api/v1/sessions", headers={"Authorization": "Bearer " + "y" * 36})
    assert wrong.status_code == 401
    assert bare.get("/api/health").status_code == 200
    assert token_api.client.get("/sessions").status_code == 200


def test_dns_rebinding_host_and_foreign_origin_are_refused(open_api: Api) -> None:
    evil_host = httpx.get(open_api.url + "/api/v1/sessions", headers={"Host": "evil.example"})
    assert evil_host.status_code == 403 and evil_host.json()["type"] == "Forbidden"
    evil_origin = open_api.client.post(
        "/sessions", json={}, headers={"Origin": "https://evil.example"}
    )
    assert evil_origin.status_code == 403
    same = open_api.client.get("/sessions", headers={"Origin": open_api.url})
    assert same.status_code == 200
    assert "access-control-allow-origin" not in same.headers


def test_cors_is_open_only_to_configured_origins(
    hapi: CatalogHapiServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    origin = "http://localhost:5173"
    for api in live_api(tmp_path, hapi.url, cors_origins=(origin,)):
        allowed = api.client.get("/sessions", headers={"Origin": origin})
        assert allowed.headers["access-control-allow-origin"] == origin
        preflight = api.client.options(
            "/sessions",
            headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
        )
        assert preflight.status_code == 200
        other = api.client.get("/sessions", headers={"Origin": "http://localhost:9999"})
        assert other.status_code == 403


def test_body_limit_declared_and_streamed(open_api: Api) -> None:
    big = {"question": "x" * 10_000}
    declared = open_api.client.post("/ask", json=big)
    assert declared.status_code == 413 and declared.json()["type"] == "PayloadTooLarge"

    def chunks() -> Iterator[bytes]:
        yield b'{"question": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}'

    streamed = open_api.client.post(
        "/ask", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413


def test_uploads_land_in_the_session_folder_within_limits(open_api: Api) -> None:
    sid = open_api.client.post("/sessions", json={}).json()["id"]
    ok = open_api.client.put(f"/sessions/{sid}/uploads/notes.pdf", content=b"%PDF-1.4 tiny")
    assert ok.json() == {"name": "notes.pdf", "bytes": 13}
    assert (open_api.home / "sessions" / sid / "uploads" / "notes.pdf").read_bytes()[:4] == b"%PDF"
    big = open_api.client.put(f"/sessions/{sid}/uploads/big.bin", content=b"0" * 20_000)
    assert big.status_code == 413
    assert not (open_api.home / "sessions" / sid / "uploads" / "big.bin").exists()
    for name in (".hidden", "a..b", "%2e%2e%2fconfig.toml", "..%2Fx"):
        bad = open_api.client.put(f"/sessions/{sid}/uploads/{name}", content=b"x")
        assert bad.status_code in (400, 404), name
    assert not (open_api.home / "config.toml").exists()
    nobody = open_api.client.put("/sessions/snobody/uploads/a.txt", content=b"x")
    assert nobody.status_code == 404


def _open_files_under(folder: Path) -> int:
    """How many file descriptors of this process (the server runs in a thread) are in `folder`."""
    count = 0
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):
            count += os.readlink(fd).startswith(str(folder))
    return count


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_parallel_uploads_of_one_name_all_succeed_and_never_mix(open_api: Api) -> None:
    sid = open_api.client.post("/sessions", json={}).json()["id"]
    folder = open_api.home / "sessions" / sid / "uploads"
    clients = 6
    first_chunks_sent = threading.Barrier(clients, timeout=60)
    bodies = [bytes([65 + i]) * 3000 for i in range(clients)]

    def chunks(i: int) -> Iterator[bytes]:
        yield bodies[i][:1000]
        first_chunks_sent.wait()
        # Let the server start writing every upload before any of them ends (bounded wait:
        # a server that writes nothing before the end simply goes on).
        deadline = time.monotonic() + 10
        while _open_files_under(folder) < clients and time.monotonic() < deadline:
            time.sleep(0.01)
        yield bodies[i][1000:2000]
        yield bodies[i][2000:]

    answers: list[httpx.Response] = []

    def upload(i: int) -> None:
        answers.append(open_api.client.put(f"/sessions/{sid}/uploads/same.csv", content=chunks(i)))

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [a.status_code for a in answers] == [200] * clients, [a.text for a in answers]
    assert all(a.json() == {"name": "same.csv", "bytes": 3000} for a in answers)
    assert (folder / "same.csv").read_bytes() in bodies
    assert [p.name for p in folder.iterdir()] == ["same.csv"]


def test_session_ids_are_unguessable() -> None:
    ids = {new_secret_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 33 and int(i[1:], 16) >= 0 for i in ids)


def test_stream_event_limit_ends_the_stream(open_api: Api) -> None:
    text = open_api.client.post("/ask/stream", json={"question": ACE}).text
    assert text.count("event: ") == 4
    assert '"type": "StreamLimit"' in text


def test_model_written_code_is_refused_without_os_isolation(
    open_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As on a machine whose kernel offers no OS layer (this one may well have them);
    # asked when code first runs, and no earlier test here runs code.
    monkeypatch.setattr(policy_module, "os_isolation_available", _no_isolation)
    sid = open_api.client.post("/sessions", json={}).json()["id"]
    body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-01"}
    label = open_api.client.post(f"/sessions/{sid}/fetch", json=body).json()["label"]
    code = {"code": "result = df * 2", "inputs": [label], "label": "doubled"}
    refused = open_api.client.post(f"/sessions/{sid}/compute", json=code)
    assert refused.status_code == 503 and refused.json()["type"] == "SandboxUnavailable"
    entries = open_api.client.get(f"/sessions/{sid}/entries").json()["entries"]
    assert [e["label"] for e in entries] == [label]


def _no_isolation(_services: object = None) -> bool:
    return False


def test_code_runs_when_the_operator_opts_in(hapi: CatalogHapiServer, tmp_path: Path) -> None:  # noqa: F811
    for api in live_api(tmp_path, hapi.url, allow_unsandboxed_code=True):
        sid = api.client.post("/sessions", json={}).json()["id"]
        body = {"dataset_id": "AC_H1_MFI", "parameter_id": "Magnitude", "time_range": "2024-01-01"}
        label = api.client.post(f"/sessions/{sid}/fetch", json=body).json()["label"]
        code = {"code": "result = df * 2", "inputs": [label], "label": "doubled"}
        done = api.client.post(f"/sessions/{sid}/compute", json=code)
        assert done.status_code == 200 and done.json()["labels"] == ["doubled"]


def test_read_document_policy_keeps_to_the_session_folder(tmp_path: Path) -> None:
    (tmp_path / "uploads").mkdir()
    (tmp_path / "uploads" / "paper.pdf").write_bytes(b"%PDF")
    policy = server_policy(tmp_path, allow_unsandboxed_code=False)
    tools = default_registry()
    reader, fetcher = tools.get("read_document"), tools.get("fetch_data")
    assert reader is not None and fetcher is not None
    assert policy(reader, {"path": str(tmp_path / "uploads" / "paper.pdf")}) is None
    for path in ("/etc/passwd", "../../x.pdf", "~/.ssh/id_rsa", "", "uploads/paper.pdf"):
        refused = policy(reader, {"path": path})
        assert refused is not None and not refused.ok, path
    assert policy(fetcher, {}) is None


def test_errors_are_json_without_stack_traces(
    open_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(session_id: str) -> None:
        raise RuntimeError("secret internals /home/user/.env")

    sid = open_api.client.post("/sessions", json={}).json()["id"]
    monkeypatch.setattr(open_api.assistant.hub, "summary", boom)
    failed = open_api.client.patch(f"/sessions/{sid}", json={"title": "t"})
    assert failed.status_code == 500 and failed.json()["type"] == "InternalError"
    assert "Traceback" not in failed.text and "secret internals" not in failed.text
    unknown = open_api.client.get("/no/such/route")
    assert unknown.status_code == 404 and unknown.json()["status"] == "error"
    invalid = open_api.client.post("/ask", json={"question": ""})
    assert invalid.status_code == 422 and invalid.json()["type"] == "ValidationError"


def test_the_default_server_listens_on_loopback_only() -> None:
    config = ServerConfig()
    assert config.host == "127.0.0.1" and config.port == 8765
    assert socket.gethostbyname(config.host) == "127.0.0.1"


def test_every_response_carries_the_security_headers(token_api: Api) -> None:
    bare = httpx.Client(base_url=token_api.url)
    pages = [bare.get(p) for p in ("/", "/chat", "/settings", "/assets/js/main.js")]
    api = [
        bare.get("/api/v1/sessions"),  # 401 from the guard
        token_api.client.get("/sessions"),
        token_api.client.get("/sessions/snope"),  # 404
        bare.get("/api/health"),
        bare.get("/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}),
    ]
    for response in pages + api:
        headers = response.headers
        assert headers["x-frame-options"] == "DENY", response.url
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        policy = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
    for response in pages:
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-eval" not in policy
        assert "object-src 'none'" in policy and "base-uri 'none'" in policy
    for response in api:
        assert response.headers["content-security-policy"].startswith("default-src 'none'")


def test_no_docs_page_loads_scripts_from_elsewhere(token_api: Api) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
        assert httpx.get(token_api.url + path, headers=auth).status_code == 404, path
    assert httpx.get(token_api.url + "/openapi.json", headers=auth).json()["paths"]
    page = httpx.get(token_api.url + "/chat").text
    assert "cdn" not in page.lower() and "http://" not in page and "https://" not in page
