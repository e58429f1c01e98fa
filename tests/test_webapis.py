"""Web APIs described as data, over loopback stand-ins: answers, limits and faults."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from servers.json_api_server import Answer, JsonApiServer
from webapi_fixtures import KP_PATH, cme_events, kp_rows, loopback_settings, serve_all
from xhelio.config import load_settings
from xhelio.errors import (
    ConfigError,
    RateLimitedError,
    ServerError,
    ServerUnreachableError,
    UserError,
)
from xhelio.sources.http import RetryPolicy
from xhelio.webapis import BlockedAddressError, SchemaDriftError, SearchOffError, open_web
from xhelio.webapis.guard import HostPolicy

NO_WAIT = RetryPolicy(retries=1, sleep=lambda _s: None)


@pytest.fixture
def server() -> Iterator[JsonApiServer]:
    with JsonApiServer() as stand_in:
        serve_all(stand_in)
        yield stand_in


def _web(home: Path, server: JsonApiServer, **overrides: object):
    return open_web(loopback_settings(home, server.url, **overrides), NO_WAIT)


def test_swpc_kp_header_rows_become_a_cited_time_series(
    server: JsonApiServer, xhelio_home: Path
) -> None:
    table = _web(xhelio_home, server).apis.call("swpc", "planetary_k_index", {})
    assert list(table.frame.columns) == ["Kp", "a_running", "station_count"]
    assert isinstance(table.frame.index, pd.DatetimeIndex)
    assert table.frame["Kp"].max() == pytest.approx(9.0)
    assert table.units["a_running"] == "nT"
    assert table.url == server.url + KP_PATH
    assert "NOAA Space Weather Prediction Center" in table.citation


def test_donki_key_comes_from_settings_and_never_shows(
    server: JsonApiServer, xhelio_home: Path
) -> None:
    params = {"startDate": "2024-05-08", "endDate": "2024-05-15"}
    table = _web(xhelio_home, server).apis.call("donki", "CME", params)
    asked = server.seen[-1]
    assert asked.query == {**params, "api_key": "donki-secret"}
    assert "donki-secret" not in table.url and "api_key=***" in table.url
    assert table.frame.loc["2024-05-08 05:36Z", "speed"].item() == 1200.0
    assert table.frame["instruments"].iloc[0] == "SOHO: LASCO/C2, SOHO: LASCO/C3"
    assert pd.isna(table.frame["speed"].iloc[1])  # no analysis: empty, not an error


def test_donki_without_a_key_uses_demo_key(server: JsonApiServer, xhelio_home: Path) -> None:
    _web(xhelio_home, server, donki_api_key="").apis.call("donki", "FLR", {})
    assert server.seen[-1].query["api_key"] == "DEMO_KEY"


def test_donki_empty_body_means_no_events(server: JsonApiServer, xhelio_home: Path) -> None:
    server.route("/DONKI/GST", Answer(b"", 200, {"Content-Type": "application/json"}))
    table = _web(xhelio_home, server).apis.call("donki", "GST", {"startDate": "2024-01-01"})
    assert table.frame.empty


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"startDate": "May 8"}, "yyyy-MM-dd"),
        ({"since": "2024-05-08"}, "no parameter since"),
        ({"location": "Mars"}, "is not one of"),
    ],
)
def test_bad_parameters_are_refused_before_any_request(
    server: JsonApiServer, xhelio_home: Path, params: dict[str, str], words: str
) -> None:
    endpoint = "IPS"
    with pytest.raises(UserError, match=words):
        _web(xhelio_home, server).apis.call("donki", endpoint, params)
    assert server.seen == []


def test_unknown_api_and_endpoint_name_the_known_ones(
    server: JsonApiServer, xhelio_home: Path
) -> None:
    web = _web(xhelio_home, server)
    with pytest.raises(UserError, match="known: swpc, donki"):
        web.apis.call("noaa", "x", {})
    with pytest.raises(UserError, match="planetary_k_index"):
        web.apis.call("swpc", "kp_now", {})


def test_429_with_retry_after_is_waited_then_retried(
    server: JsonApiServer, xhelio_home: Path
) -> None:
    server.queue(KP_PATH, Answer.json({"error": "slow down"}, 429, **{"Retry-After": "2"}))
    waits: list[float] = []
    policy = RetryPolicy(retries=2, sleep=waits.append)
    web = open_web(loopback_settings(xhelio_home, server.url), policy)
    assert len(web.apis.call("swpc", "planetary_k_index", {}).frame) == 4
    assert waits == [2.0]


def test_429_asking_too_long_a_wait_fails_at_once(server: JsonApiServer, xhelio_home: Path) -> None:
    server.queue(KP_PATH, Answer.json({}, 429, **{"Retry-After": "3600"}))
    with pytest.raises(RateLimitedError, match="limiting how fast"):
        _web(xhelio_home, server).apis.call("swpc", "planetary_k_index", {})
    assert len(server.seen) == 1


def test_a_slow_answer_stops_at_the_time_limit(server: JsonApiServer, xhelio_home: Path) -> None:
    server.route(KP_PATH, Answer(json.dumps(kp_rows()).encode(), delay_s=3.0))
    web = _web(xhelio_home, server, api_timeout_s=0.5, http_retries=0)
    with pytest.raises(ServerUnreachableError, match="within"):
        web.apis.call("swpc", "planetary_k_index", {})


@pytest.mark.parametrize("status", [200, 503])
def test_an_html_page_is_named_as_such(
    server: JsonApiServer, xhelio_home: Path, status: int
) -> None:
    server.route(KP_PATH, Answer.html(status))
    with pytest.raises(ServerError, match="HTML"):
        _web(xhelio_home, server).apis.call("swpc", "planetary_k_index", {})


def test_a_changed_header_row_is_schema_drift(server: JsonApiServer, xhelio_home: Path) -> None:
    rows = kp_rows()
    rows[0] = ["time_tag", "kp_index", "a_running", "station_count"]
    server.route(KP_PATH, Answer.json(rows))
    with pytest.raises(SchemaDriftError, match=r"\$\[0\]: expected the header"):
        _web(xhelio_home, server).apis.call("swpc", "planetary_k_index", {})


def test_a_missing_event_field_is_schema_drift(server: JsonApiServer, xhelio_home: Path) -> None:
    events = cme_events()
    del events[1]["startTime"]
    server.route("/DONKI/CME", Answer.json(events))
    with pytest.raises(SchemaDriftError, match=r"\$\[1\]\.startTime: missing"):
        _web(xhelio_home, server).apis.call("donki", "CME", {})


def test_an_oversized_body_is_refused(server: JsonApiServer, xhelio_home: Path) -> None:
    big = [kp_rows()[0]] + [["2024-05-10 12:00:00.000", "5.33", "56", "8"]] * 60000
    server.route(KP_PATH, Answer.json(big))
    with pytest.raises(ServerError, match="larger than 1 MB"):
        _web(xhelio_home, server, api_max_mb=1).apis.call("swpc", "planetary_k_index", {})


@pytest.mark.parametrize(
    "target", ["https://example.org/steal", "http://localhost:{port}/x", "http://10.0.0.8/x"]
)
def test_a_redirect_off_the_allowlist_is_refused(
    server: JsonApiServer, xhelio_home: Path, target: str
) -> None:
    port = server.url.rsplit(":", 1)[1]
    server.route(KP_PATH, Answer(b"", 302, {"Location": target.format(port=port)}))
    with pytest.raises(BlockedAddressError, match="only the hosts of the API descriptions"):
        _web(xhelio_home, server).apis.call("swpc", "planetary_k_index", {})


def test_a_redirect_within_the_host_is_followed(server: JsonApiServer, xhelio_home: Path) -> None:
    server.route("/old/kp.json", Answer(b"", 301, {"Location": KP_PATH}))
    server.queue(KP_PATH, Answer(b"", 302, {"Location": "/old/kp.json"}))
    table = _web(xhelio_home, server).apis.call("swpc", "planetary_k_index", {})
    assert len(table.frame) == 4


def test_the_allowlist_refuses_other_hosts_and_unconfigured_internal_addresses() -> None:
    policy = HostPolicy(resolve=lambda _host, _port: ["10.1.2.3"])
    policy.allow("https://services.swpc.noaa.gov", user_configured=False)
    policy.allow("http://127.0.0.1:8080/api", user_configured=True)
    with pytest.raises(BlockedAddressError, match="only the hosts"):
        policy.check("https://evil.example.com/products/x.json")
    with pytest.raises(BlockedAddressError, match="only http"):
        policy.check("file:///etc/passwd")
    with pytest.raises(BlockedAddressError, match=r"internal address 10\.1\.2\.3"):
        policy.check("https://services.swpc.noaa.gov/products/x.json")
    with pytest.raises(BlockedAddressError, match=r"internal address 127\.0\.0\.1"):
        policy.check_peer("https://services.swpc.noaa.gov/x", "127.0.0.1")
    policy.check("http://127.0.0.1:8080/api/x")  # the user configured it
    with pytest.raises(BlockedAddressError):
        policy.check("http://127.0.0.1:8081/api/x")  # another port is another host


def test_shipped_addresses_may_not_be_internal(xhelio_home: Path) -> None:
    web = open_web(loopback_settings(xhelio_home, "http://127.0.0.1:9"), NO_WAIT)
    assert web.apis.get("swpc").user_configured  # the user pointed it here
    default = open_web(loopback_settings(xhelio_home, "https://services.swpc.noaa.gov"))
    assert not default.apis.get("swpc").user_configured


def test_user_openapi_service_from_the_config_file(
    server: JsonApiServer, xhelio_home: Path
) -> None:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Station indices"},
        "servers": [{"url": "https://indices.example.org"}],
        "components": {"securitySchemes": {"t": {"type": "http", "scheme": "bearer"}}},
        "paths": {
            "/dst/{year}": {
                "get": {
                    "operationId": "dst",
                    "parameters": [{"name": "year", "in": "path", "schema": {"type": "string"}}],
                    "responses": {
                        "200": {
                            "content": {
                                "application/json": {
                                    "schema": {
                                        "type": "array",
                                        "items": {"type": "object", "required": ["time", "dst"]},
                                    }
                                }
                            }
                        }
                    },
                    "x-table": {"layout": "records", "time": "time", "columns": {"dst": "dst"}},
                }
            }
        },
    }
    (xhelio_home / "indices.json").write_text(json.dumps(spec))
    (xhelio_home / "config.toml").write_text(
        f'[web_apis.indices]\nkind = "openapi"\nurl = "{server.url}/idx"\n'
        'spec = "indices.json"\ntoken = "tok-1"\n'
    )
    server.route("/idx/dst/2015", Answer.json([{"time": "2015-03-17T22:00Z", "dst": -223}]))
    web = open_web(loopback_settings(xhelio_home, server.url), NO_WAIT)
    table = web.apis.call("indices", "dst", {"year": "2015"})
    assert table.frame["dst"].iloc[0] == -223
    assert server.seen[-1].headers["Authorization"] == "Bearer tok-1"


def test_user_hapi_server_from_the_config_file(server: JsonApiServer, xhelio_home: Path) -> None:
    (xhelio_home / "config.toml").write_text(
        f'[web_apis.myhapi]\nkind = "hapi"\nurl = "{server.url}/hapi"\n'
    )
    hapi = {
        "HAPI": "3.1",
        "status": {"code": 1200, "message": "OK"},
        "parameters": [{"name": "Time", "type": "isotime"}, {"name": "B", "type": "double"}],
        "data": [["2024-05-10T00:00:00Z", 5.0], ["2024-05-10T00:01:00Z", 6.5]],
    }
    server.route("/hapi/data", Answer.json(hapi))
    web = open_web(loopback_settings(xhelio_home, server.url), NO_WAIT)
    params = {"id": "X", "time.min": "2024-05-10T00:00Z", "time.max": "2024-05-10T00:02Z"}
    table = web.apis.call("myhapi", "data", params)
    assert list(table.frame["B"]) == [5.0, 6.5]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[web_apis.x]\nkind = "soap"\nurl = "https://a.b"\n', "kind must be one of"),
        ('[web_apis.x]\nkind = "openapi"\nurl = "https://a.b"\n', "needs spec"),
        ('[web_apis.x]\nkind = "hapi"\nurl = "ftp://a.b"\n', "http"),
        ('[web_apis.x]\nkind = "hapi"\nurl = "https://a.b"\nuser = "me"\n', "unknown keys"),
        ('swpc_url = "services.swpc.noaa.gov"\n', "http"),
    ],
)
def test_invalid_web_api_settings_are_clear(xhelio_home: Path, text: str, words: str) -> None:
    (xhelio_home / "config.toml").write_text(text)
    with pytest.raises(ConfigError, match=words):
        load_settings(xhelio_home)


def test_literature_search_cites_links(server: JsonApiServer, xhelio_home: Path) -> None:
    provider, hits = _web(xhelio_home, server).search("literature", "May 2024 storm", 5)
    assert provider.name == "ads"
    assert server.seen[-1].headers["Authorization"] == "Bearer ads-secret"
    assert hits[0].url == "https://ui.adsabs.harvard.edu/abs/2024GeoRL..5112345H/abstract"
    assert hits[0].authors.endswith("et al.") and "doi:10.1029" in hits[0].ident


def test_web_search_cites_links(server: JsonApiServer, xhelio_home: Path) -> None:
    _provider, hits = _web(xhelio_home, server).search("web", "may 2024 storm")
    assert hits[0].url.startswith("https://www.swpc.noaa.gov/")
    assert server.seen[-1].query == {"q": "may 2024 storm", "format": "json"}


def test_search_is_off_and_says_so_without_configuration(xhelio_home: Path) -> None:
    web = open_web(
        loopback_settings(xhelio_home, "http://127.0.0.1:9", ads_token="", web_search_url="")
    )
    with pytest.raises(SearchOffError, match="XHELIO_ADS_TOKEN"):
        web.search("literature", "anything")
    with pytest.raises(SearchOffError, match="XHELIO_WEB_SEARCH_URL"):
        web.search("web", "anything")
    assert all(s["status"] != "on" for s in web.status())


def test_a_drifted_search_answer_is_clear(server: JsonApiServer, xhelio_home: Path) -> None:
    server.route("/v1/search/query", Answer.json({"docs": []}))
    with pytest.raises(SchemaDriftError, match="response: missing"):
        _web(xhelio_home, server).search("literature", "x")


def test_a_package_registers_a_search_provider(
    xhelio_home: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "search_plugins"))
    web = open_web(loopback_settings(xhelio_home, "http://127.0.0.1:9", web_search_url=""))
    provider, hits = web.search("web", "flux ropes")
    assert provider.name == "demo" and hits[0].title == "About flux ropes"
    assert "search.demo.example:443" in web.apis.policy.hosts
    assert "'broken' could not be loaded" in caplog.text
