"""Refresh the catalog index from a live HAPI server's `/catalog` and `/info`.

Any HAPI server works: the query name for the dataset is `dataset` (HAPI 3.x) or `id`
(HAPI 2.0, which CDAWeb still speaks), chosen from `/capabilities` and, when that says
nothing, by trying `dataset` first and falling back to `id` on an "unknown parameter"
answer. `/info` requests run in parallel threads (`settings.catalog_refresh_workers`).
A dataset whose `/info` fails is counted and reported, never fatal; everything fetched is
merged into the index in batches, so an interrupted refresh keeps what it got.

Imports only `catalog`, `config` and `errors` from xhelio (plus httpx).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import httpx

from xhelio.catalog.index import Catalog, open_catalog
from xhelio.catalog.model import DatasetInfo
from xhelio.catalog.snapshot import dataset_from_hapi_info
from xhelio.config import Settings
from xhelio.errors import ServerError, ServerUnreachableError, UnknownDatasetError

__all__ = ["RefreshProgress", "RefreshReport", "refresh_catalog"]

RefreshProgress = Callable[[int, int, str], None]
"""Called as progress(done, total, dataset_id) after each dataset's `/info`."""

_BATCH = 100
_UNKNOWN_PARAMETER = 1401


@dataclass
class RefreshReport:
    """What a refresh did: counts of datasets added, updated and failed (with reasons)."""

    server_url: str
    hapi_version: str | None = None
    total: int = 0
    added: list[str] = field(default_factory=list[str])
    updated: list[str] = field(default_factory=list[str])
    failed: dict[str, str] = field(default_factory=dict[str, str])
    seconds: float = 0.0

    @property
    def succeeded(self) -> int:
        """Datasets whose `/info` was fetched and merged."""
        return len(self.added) + len(self.updated)


class _HapiCatalogClient:
    """The few HAPI calls a refresh needs, with retries and id-parameter negotiation."""

    def __init__(self, url: str, settings: Settings) -> None:
        self.url = url
        self._retries = max(0, settings.http_retries)
        self._client = httpx.Client(timeout=settings.http_timeout_s, follow_redirects=True)
        self._id_name: str | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        self._client.close()

    def _get(self, endpoint: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        """GET a HAPI JSON endpoint; raises ServerError with the HAPI status when it fails."""
        target = f"{self.url}/{endpoint}"
        last: Exception | None = None
        for attempt in range(self._retries + 1):
            if attempt:
                time.sleep(min(2.0, 0.2 * 2**attempt))
            try:
                response = self._client.get(target, params=params)
            except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                last = exc
                break  # nobody listening (refused, unknown host, bad address): no retry
            except httpx.RequestError as exc:
                last = exc
                continue
            if response.status_code >= 500:
                last = ServerError(
                    f"{target} answered HTTP {response.status_code}", response.status_code
                )
                continue
            return _hapi_body(target, response)
        if isinstance(last, ServerError):
            raise last
        raise ServerUnreachableError(
            f"Cannot reach HAPI server {self.url} ({last}). Check the URL and your network; "
            "the offline catalog keeps working meanwhile."
        )

    def version(self) -> str | None:
        """The server's HAPI version from `/capabilities`, or None when it does not say."""
        try:
            body = self._get("capabilities")
        except ServerUnreachableError:
            raise  # no server at all: nothing else will work either
        except ServerError:
            return None  # optional endpoint; negotiate on the first /info instead
        version = body.get("HAPI")
        if isinstance(version, str) and version:
            self._id_name = "id" if version.startswith("2") else "dataset"
            return version
        return None

    def catalog(self) -> list[tuple[str, str]]:
        """(id, title) of every dataset the server lists."""
        body = self._get("catalog")
        entries = body.get("catalog")
        if not isinstance(entries, list):
            raise ServerError(f"{self.url}/catalog has no 'catalog' list; is this a HAPI server?")
        listed: list[tuple[str, str]] = []
        for entry in entries:  # pyright: ignore[reportUnknownVariableType]
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                title = entry.get("title")  # pyright: ignore[reportUnknownMemberType]
                listed.append((str(entry["id"]), title if isinstance(title, str) else ""))
        return listed

    def info(self, dataset_id: str) -> dict[str, Any]:
        """The `/info` of one dataset, negotiating `dataset=` vs `id=` on first use."""
        with self._lock:
            chosen = self._id_name
        if chosen is not None:
            return self._get("info", {chosen: dataset_id})
        try:
            body = self._get("info", {"dataset": dataset_id})
        except _HapiStatusError as exc:
            if exc.code != _UNKNOWN_PARAMETER and exc.status_code != 400:
                raise
            body = self._get("info", {"id": dataset_id})
            with self._lock:
                self._id_name = "id"
            return body
        with self._lock:
            self._id_name = "dataset"
        return body


class _HapiStatusError(ServerError):
    """A HAPI error status (14xx/15xx) in a JSON body."""

    def __init__(self, message: str, code: int, status_code: int) -> None:
        super().__init__(message, status_code)
        self.code = code


def _hapi_body(target: str, response: httpx.Response) -> dict[str, Any]:
    try:
        body: object = response.json()
    except ValueError as exc:
        raise ServerError(
            f"{target} answered HTTP {response.status_code} with non-JSON content.",
            response.status_code,
        ) from exc
    if not isinstance(body, dict):
        raise ServerError(f"{target} answered with JSON that is not an object.")
    data: dict[str, Any] = body  # pyright: ignore[reportUnknownVariableType]
    status = data.get("status")
    code = status.get("code") if isinstance(status, dict) else None  # pyright: ignore[reportUnknownMemberType]
    if response.status_code >= 400 or (isinstance(code, int) and code >= 1400):
        message = status.get("message") if isinstance(status, dict) else None  # pyright: ignore[reportUnknownMemberType]
        raise _HapiStatusError(
            f"{target} failed: HAPI {code} {message or ''} (HTTP {response.status_code})".strip(),
            code if isinstance(code, int) else 0,
            response.status_code,
        )
    return data


def _merged(catalog: Catalog, dataset_id: str, title: str, info: dict[str, Any]) -> DatasetInfo:
    """The refreshed record: the server's info over what the index already knew."""
    try:
        known = catalog.dataset(dataset_id)
    except UnknownDatasetError:
        # A new dataset: its title comes from /catalog, else from the info's description.
        base = DatasetInfo(id=dataset_id, title=title) if title else None
        return dataset_from_hapi_info(dataset_id, info, base)
    return dataset_from_hapi_info(known.id, info, known)


def refresh_catalog(
    settings: Settings,
    server_url: str | None = None,
    progress: RefreshProgress | None = None,
) -> RefreshReport:
    """Fetch `/catalog` and every `/info` from a HAPI server and merge them into the index."""
    url = (server_url or settings.hapi_url).rstrip("/")
    report = RefreshReport(server_url=url)
    started = time.perf_counter()
    client = _HapiCatalogClient(url, settings)
    try:
        report.hapi_version = client.version()
        listed = client.catalog()
    except BaseException:
        client.close()
        raise
    report.total = len(listed)
    catalog = open_catalog(settings)
    try:
        known = {i.upper() for i in catalog.dataset_ids()}
        pending: list[DatasetInfo] = []
        workers = max(1, settings.catalog_refresh_workers)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hapi-info") as pool:
            futures: dict[Future[dict[str, Any]], tuple[str, str]] = {
                pool.submit(client.info, dataset_id): (dataset_id, title)
                for dataset_id, title in listed
            }
            try:
                for done, future in enumerate(as_completed(futures), start=1):
                    dataset_id, title = futures[future]
                    try:
                        pending.append(_merged(catalog, dataset_id, title, future.result()))
                    except ServerError as exc:
                        report.failed[dataset_id] = exc.message
                    except (ValueError, TypeError) as exc:
                        # One malformed /info must not stop the other datasets.
                        report.failed[dataset_id] = f"malformed /info answer: {exc}"
                    if len(pending) >= _BATCH:
                        _flush(catalog, pending, known, report)
                    if progress is not None:
                        progress(done, report.total, dataset_id)
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
            finally:
                _flush(catalog, pending, known, report)
    finally:
        client.close()
        catalog.close()
        report.seconds = time.perf_counter() - started
    return report


def _flush(
    catalog: Catalog, pending: list[DatasetInfo], known: set[str], report: RefreshReport
) -> None:
    if not pending:
        return
    catalog.upsert(pending)
    for info in pending:
        (report.updated if info.id.upper() in known else report.added).append(info.id)
    pending.clear()
