"""Recorded-shape answers of SWPC, DONKI, ADS and a SearXNG service, and loopback settings.

The settings point xhelio at a loopback stand-in the way a user would (base addresses).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servers.json_api_server import Answer, JsonApiServer
from xhelio.config import Settings, load_settings

KP_PATH = "/products/noaa-planetary-k-index.json"
KP_FORECAST_PATH = "/products/noaa-planetary-k-index-forecast.json"
PLASMA_PATH = "/products/solar-wind/plasma-1-day.json"


def kp_rows() -> list[list[str]]:
    """The planetary K index product: a header row, then one row per 3 hours."""
    return [
        ["time_tag", "Kp", "a_running", "station_count"],
        ["2024-05-10 12:00:00.000", "5.33", "56", "8"],
        ["2024-05-10 15:00:00.000", "7.67", "179", "8"],
        ["2024-05-10 18:00:00.000", "8.67", "300", "8"],
        ["2024-05-10 21:00:00.000", "9.00", "400", "8"],
    ]


def kp_forecast_rows(days: list[str]) -> list[list[Any]]:
    """The 3-day forecast product: observed, estimated and predicted rows for `days`."""
    rows: list[list[Any]] = [["time_tag", "kp", "observed", "noaa_scale"]]
    kinds = ("observed", "estimated", "predicted")
    for n, day in enumerate(days):
        for hour, kp in (("00", "2.33"), ("03", "3.00"), ("06", "4.67"), ("09", "5.00")):
            rows.append(
                [f"{day} {hour}:00:00", kp, kinds[min(n, 2)], "G1" if kp == "5.00" else None]
            )
    return rows


def plasma_rows() -> list[list[str | None]]:
    """The real-time solar wind plasma product (header row; a gap is null)."""
    return [
        ["time_tag", "density", "speed", "temperature"],
        ["2024-05-10 17:00:00.000", "12.5", "702.1", "512000"],
        ["2024-05-10 17:01:00.000", None, None, None],
        ["2024-05-10 17:02:00.000", "13.1", "731.4", "498000"],
    ]


def alerts() -> list[dict[str, str]]:
    """The alerts product: one object per message."""
    text = (
        "Space Weather Message Code: {code}\r\nSerial Number: {n}\r\nIssue Time: 2024 May 10"
        " {hhmm} UTC\r\n\r\n{line}\r\nNOAA Space Weather Scale descriptions ..."
    )
    return [
        {
            "product_id": "K07A",
            "issue_datetime": "2024-05-10 18:40:00.000",
            "message": text.format(
                code="ALTK07", n=1, hhmm="1840", line="ALERT: Geomagnetic K-index of 7"
            ),
        },
        {
            "product_id": "A30F",
            "issue_datetime": "2024-05-09 12:00:00.000",
            "message": text.format(
                code="WATA30", n=2, hhmm="1200", line="WATCH: Geomagnetic Storm Category G3"
            ),
        },
    ]


def cme_events() -> list[dict[str, Any]]:
    """DONKI CME answers of the week of 2024-05-08 (shape of api.nasa.gov/DONKI/CME)."""
    return [
        {
            "activityID": "2024-05-08T05:36:00-CME-001",
            "catalog": "M2M_CATALOG",
            "startTime": "2024-05-08T05:36Z",
            "sourceLocation": "S17W13",
            "activeRegionNum": 13664,
            "link": "https://webtools.ccmc.gsfc.nasa.gov/DONKI/view/CME/30000/-1",
            "note": "Bright halo CME",
            "instruments": [{"displayName": "SOHO: LASCO/C2"}, {"displayName": "SOHO: LASCO/C3"}],
            "cmeAnalyses": [{"speed": 1200.0, "halfAngle": 45.0, "type": "O", "latitude": -10.0}],
            "linkedEvents": [{"activityID": "2024-05-08T04:37:00-FLR-001"}],
        },
        {
            "activityID": "2024-05-09T09:24:00-CME-001",
            "catalog": "M2M_CATALOG",
            "startTime": "2024-05-09T09:24Z",
            "sourceLocation": "S15W20",
            "activeRegionNum": None,
            "link": "https://webtools.ccmc.gsfc.nasa.gov/DONKI/view/CME/30001/-1",
            "note": "",
            "instruments": [{"displayName": "SOHO: LASCO/C3"}],
            "cmeAnalyses": None,
            "linkedEvents": None,
        },
    ]


def flare_events() -> list[dict[str, Any]]:
    """DONKI FLR answers (shape of api.nasa.gov/DONKI/FLR)."""
    return [
        {
            "flrID": "2024-05-10T06:27:00-FLR-001",
            "beginTime": "2024-05-10T06:27Z",
            "peakTime": "2024-05-10T06:54Z",
            "endTime": "2024-05-10T07:06Z",
            "classType": "X3.9",
            "sourceLocation": "S17W29",
            "activeRegionNum": 13664,
            "instruments": [{"displayName": "GOES-P: EXIS 1.0-8.0"}],
            "linkedEvents": None,
            "link": "https://webtools.ccmc.gsfc.nasa.gov/DONKI/view/FLR/30100/-1",
        }
    ]


def ads_answer() -> dict[str, Any]:
    """An ADS search/query answer."""
    return {
        "responseHeader": {"status": 0, "QTime": 5, "params": {"q": "x"}},
        "response": {
            "numFound": 2,
            "start": 0,
            "docs": [
                {
                    "bibcode": "2024GeoRL..5112345H",
                    "title": ["The Gannon storm of May 2024"],
                    "author": ["Hayakawa, H.", "Ebihara, Y.", "Mishev, A.", "Koldobskiy, S."],
                    "year": "2024",
                    "doi": ["10.1029/2024GL112345"],
                    "abstract": "The May 2024 superstorm ...",
                },
                {"bibcode": "2025SpWea..23.0001X", "title": ["CMEs of May 2024"], "year": "2025"},
            ],
        },
    }


def searx_answer() -> dict[str, Any]:
    """A SearXNG JSON answer."""
    return {
        "query": "may 2024 storm",
        "results": [
            {
                "url": "https://www.swpc.noaa.gov/news/g5-conditions-observed",
                "title": "G5 conditions observed",
                "content": "Extreme geomagnetic storm ...",
                "engine": "duckduckgo",
            }
        ],
    }


def serve_all(server: JsonApiServer) -> None:
    """Register the recorded answers on their real paths."""
    server.route(KP_PATH, Answer.json(kp_rows()))
    server.route("/products/solar-wind/plasma-1-day.json", Answer.json(plasma_rows()))
    server.route("/products/alerts.json", Answer.json(alerts()))
    server.route("/DONKI/CME", Answer.json(cme_events()))
    server.route("/DONKI/FLR", Answer.json(flare_events()))
    server.route("/v1/search/query", Answer.json(ads_answer()))
    server.route("/search", Answer.json(searx_answer()))


def loopback_settings(home: Path, url: str, **overrides: object) -> Settings:
    """Settings aimed at the stand-in, as a user would set them."""
    values: dict[str, object] = {
        "swpc_url": url,
        "donki_url": f"{url}/DONKI",
        "ads_url": f"{url}/v1",
        "ads_token": "ads-secret",
        "web_search_url": f"{url}/search",
        "donki_api_key": "donki-secret",
        "http_retries": 1,
        **overrides,
    }
    return load_settings(home, **values)
