"""CDAWeb's CDF archive as a `DataSource`: CDAS REST file listing + parallel downloads.

`fetch` asks CDAS REST for the files covering the range (``orig_data``), downloads them
in parallel (`Settings.download_workers` threads, progress in bytes and files), checks
each against its listed Length, reads each file once for all requested parameters
(`cdf_reader`), and joins the pieces in time order, dropping duplicate times and rows
outside [start, end). Progress is reported as progress(bytes_done, bytes_total,
"ID: k/n files"), from the download threads but never two calls at once; a retried
download takes its bytes back, so the count can step down after a failure.

Downloaded files are kept in the disk cache (`FragmentCache`: the same index and size
limit as fragments, checksummed), keyed by the file URL and its LastModified stamp, so
asking for other parameters of the same days does not download again, and a file CDAWeb
reprocesses (new LastModified) is fetched fresh. Files listed without LastModified are
always downloaded and never kept. An HTML page served instead of a file is refused, and
a file that fails to read is deleted from the cache. A listing whose files stop well
before the requested end proves the data only up to its last file (`proven_until`).

`info` asks CDAS for the dataset description (title, coverage) and describes the
parameters from the variables of the dataset's most recent file.

Imports from xhelio only `config`, `errors`, `timerange`, `catalog.model`, `sources`.
Network happens only inside `info` and `fetch`, never at import or construction.
"""

from __future__ import annotations

import contextvars
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import httpx
import numpy as np
import pandas as pd

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.config import Settings
from xhelio.errors import (
    NoDataError,
    ServerError,
    TruncatedResponseError,
    UnknownDatasetError,
)
from xhelio.sources.base import ParameterData, ProgressCallback, drop_duplicate_times
from xhelio.sources.cache import FragmentCache
from xhelio.sources.cdf_reader import describe_cdf, read_cdf_parameters
from xhelio.sources.dims import to_per_record
from xhelio.sources.http import (
    RetryPolicy,
    call_with_retries,
    check_file_response,
    check_rate_limit,
    make_client,
)
from xhelio.timerange import TimeRange

__all__ = ["CdawebSource", "RemoteFile"]

_T = TypeVar("_T")

_CHUNK_BYTES = 256 * 1024
_SETTING_HINT = "XHELIO_CDAS_URL"


@dataclass(frozen=True)
class RemoteFile:
    """One file of a CDAS ``orig_data`` listing."""

    url: str
    start: datetime | None
    end: datetime | None
    length: int | None
    last_modified: str | None
    dataset: str = ""

    @property
    def file_name(self) -> str:
        """The last path segment of the URL."""
        return urlsplit(self.url).path.rsplit("/", 1)[-1] or "file.cdf"


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _compact(t: datetime, round_up: bool = False) -> str:
    """Format `t` as CDAS wants it, widening to whole seconds so nothing is cut off."""
    if round_up and t.microsecond:
        t = t.replace(microsecond=0) + timedelta(seconds=1)
    return t.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def _server_message(response: httpx.Response) -> str:
    """Return the error text CDAS put in the body (its Error/Message arrays), if any."""
    try:
        body: Any = response.json()
    except ValueError:
        return response.text.strip()[:300]
    if isinstance(body, dict):
        for key in ("Error", "Message"):
            parts: Any = body.get(key)
            if isinstance(parts, list) and parts:
                return " ".join(str(p) for p in parts)
    return ""


class _ProgressMeter:
    """Thread-safe byte and file counters reported through one `ProgressCallback`."""

    def __init__(self, callback: ProgressCallback | None, files: list[RemoteFile], label: str):
        self._callback = callback
        lengths = [f.length for f in files]
        self._total = None if any(n is None for n in lengths) else sum(n or 0 for n in lengths)
        self._files = len(files)
        self._label = label
        self._bytes = 0
        self._done = 0
        self._lock = threading.Lock()

    def add(self, n_bytes: int = 0, files: int = 0) -> None:
        """Count `n_bytes` more bytes and `files` more finished files, then report."""
        with self._lock:
            self._bytes += n_bytes
            self._done += files
            if self._callback is not None:
                what = f"{self._label}: {self._done}/{self._files} files"
                self._callback(self._bytes, self._total, what)


class CdawebSource:
    """CDAWeb CDF files through the CDAS REST ``orig_data`` service."""

    name = "cdf"

    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        retry_policy: RetryPolicy | None = None,
        cache: FragmentCache | None = None,
    ) -> None:
        self.settings = settings
        self.retry_policy = retry_policy or RetryPolicy.from_settings(settings)
        self._client = client
        self._owns_client = client is None
        self._cache = cache
        self._cache_lock = threading.Lock()

    @property
    def cache(self) -> FragmentCache:
        """The disk cache holding downloaded files (the one index and size limit)."""
        with self._cache_lock:
            if self._cache is None:
                self._cache = FragmentCache(self.settings)
            return self._cache

    @property
    def client(self) -> httpx.Client:
        """The HTTP client, created on first use so construction never touches the network."""
        if self._client is None:
            self._client = make_client(self.settings)
        return self._client

    def close(self) -> None:
        """Close the HTTP client if this source created it."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def _with_retries(self, operation: Callable[[], _T], url: str) -> _T:
        return call_with_retries(
            operation,
            url=url,
            policy=self.retry_policy,
            setting_hint=_SETTING_HINT,
            timeout_s=self.settings.http_timeout_s,
        )

    def _get_json(self, url: str, dataset_id: str, what: str) -> dict[str, Any]:
        """GET a CDAS JSON document, retrying 5xx and network failures."""
        return self._with_retries(lambda: self._get_json_once(url, dataset_id, what), url)

    def _get_json_once(self, url: str, dataset_id: str, what: str) -> dict[str, Any]:
        response = self.client.get(url, headers={"Accept": "application/json"})
        check_rate_limit(response, f"the {what} of {dataset_id}")
        if response.status_code == 404:
            raise UnknownDatasetError(dataset_id)
        if response.status_code >= 400:
            raise ServerError(
                f"CDAWeb failed the {what} for {dataset_id} (HTTP {response.status_code}: "
                f"{_server_message(response) or 'no details'}). Try again later or use the "
                "HAPI source.",
                status_code=response.status_code,
            )
        try:
            body: Any = response.json()
        except ValueError as exc:
            raise ServerError(
                f"CDAWeb answered the {what} for {dataset_id} with something that is not "
                f"JSON ({response.text[:120]!r}). Try again later or use the HAPI source."
            ) from exc
        if not isinstance(body, dict):
            raise ServerError(f"CDAWeb's {what} for {dataset_id} is not a JSON object.")
        return body  # pyright: ignore[reportUnknownVariableType]

    def list_files(self, dataset_id: str, time_range: TimeRange) -> list[RemoteFile]:
        """Return the files of `dataset_id` overlapping `time_range`, earliest first.

        Raises:
            UnknownDatasetError: CDAS does not know the dataset (HTTP 404).
            NoDataError: the dataset has no files in the range.
        """
        url = (
            f"{self.settings.cdas_url}/dataviews/sp_phys/datasets/{quote(dataset_id, safe='')}"
            f"/orig_data/{_compact(time_range.start)},{_compact(time_range.end, True)}"
        )
        body = self._get_json(url, dataset_id, "file listing")
        entries: Any = body.get("FileDescription") or []
        files: list[RemoteFile] = []
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, dict) or not isinstance(entry.get("Name"), str):
                continue
            length: Any = entry.get("Length")
            modified: Any = entry.get("LastModified")
            files.append(
                RemoteFile(
                    url=str(entry["Name"]),
                    start=_parse_time(entry.get("StartTime")),
                    end=_parse_time(entry.get("EndTime")),
                    length=int(length) if isinstance(length, int | float) else None,
                    last_modified=modified if isinstance(modified, str) and modified else None,
                    dataset=dataset_id,
                )
            )
        if not files:
            raise NoDataError(
                f"CDAWeb has no {dataset_id} files for {time_range}. Try another time range; "
                f"`xhelio catalog show {dataset_id}` gives the dataset's coverage."
            )
        return sorted(files, key=lambda f: f.start or datetime.min.replace(tzinfo=UTC))

    def download(self, remote: RemoteFile) -> Path:
        """Return a local, complete copy of `remote`, downloading it unless cached."""
        return self._download(remote, None, None)

    def _download(
        self,
        remote: RemoteFile,
        meter: _ProgressMeter | None,
        cancelled: threading.Event | None,
    ) -> Path:
        key = _file_key(remote)
        cached = self.cache.file_for(key) if key is not None else None
        if cached is not None:
            if meter is not None:
                meter.add(cached.stat().st_size)
            return cached
        partial = self.cache.new_file_path(remote.file_name)
        try:
            self._with_retries(
                lambda: self._download_once(remote, partial, meter, cancelled), remote.url
            )
            if key is None:
                # Without LastModified a copy can never be known current: kept only for
                # this read (the caller deletes it), never indexed.
                kept = partial.with_name(partial.name.removesuffix(".part") + ".once")
                os.replace(partial, kept)
                return kept
            return self.cache.add_file(key, remote.dataset or "cdf", remote.file_name, partial)
        finally:
            partial.unlink(missing_ok=True)

    def _download_once(
        self,
        remote: RemoteFile,
        partial: Path,
        meter: _ProgressMeter | None,
        cancelled: threading.Event | None,
    ) -> None:
        """Stream `remote` into `partial` once; a retry starts over and un-counts progress."""
        received = 0
        try:
            with self.client.stream("GET", remote.url) as response:
                check_rate_limit(response, remote.file_name)
                check_file_response(
                    response, remote.file_name, "CDAWeb", "Try again later or use the HAPI source."
                )
                with partial.open("wb") as out:
                    for chunk in response.iter_bytes(_CHUNK_BYTES):
                        if cancelled is not None and cancelled.is_set():
                            raise CancelledError(f"download of {remote.file_name} cancelled")
                        out.write(chunk)
                        received += len(chunk)
                        if meter is not None:
                            meter.add(len(chunk))
        except httpx.RemoteProtocolError as exc:
            # The server promised more than it sent and closed the connection.
            if meter is not None:
                meter.add(-received)
            raise TruncatedResponseError(
                f"Download of {remote.file_name} broke off after {received} bytes. "
                "Fetch again; CDAWeb may be busy."
            ) from exc
        except BaseException:
            if meter is not None:
                meter.add(-received)
            raise
        if remote.length is not None and received != remote.length:
            if meter is not None:
                meter.add(-received)
            raise TruncatedResponseError(
                f"Download of {remote.file_name} ended at {received} of the {remote.length} "
                "bytes CDAWeb listed. Fetch again; CDAWeb may be busy."
            )

    def _download_and_read(
        self,
        remote: RemoteFile,
        dataset_id: str,
        parameters: Sequence[str],
        meter: _ProgressMeter,
        cancelled: threading.Event,
    ) -> tuple[Path, dict[str, ParameterData]]:
        path = self._download(remote, meter, cancelled)
        try:
            parts = read_cdf_parameters(path, dataset_id, parameters)
        except Exception:
            # A file that downloads whole but does not read must not stay in the cache.
            self.cache.forget_file(path)
            raise
        finally:
            if path.name.endswith(".once"):
                path.unlink(missing_ok=True)
        meter.add(files=1)
        return path, parts

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """Return the requested parameters over [start, end), read from CDAWeb's CDF files."""
        if not parameters:
            return {}
        files = self.list_files(dataset_id, time_range)
        meter = _ProgressMeter(progress, files, dataset_id)
        meter.add()
        cancelled = threading.Event()
        workers = max(1, min(self.settings.download_workers, len(files)))
        with ThreadPoolExecutor(workers, thread_name_prefix="cdaweb-download") as pool:
            futures: list[Future[tuple[Path, dict[str, ParameterData]]]] = [
                # Each worker runs in a copy of this context: the caller's cancel scope holds.
                pool.submit(
                    contextvars.copy_context().run,
                    self._download_and_read,
                    f,
                    dataset_id,
                    parameters,
                    meter,
                    cancelled,
                )
                for f in files
            ]
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((f for f in futures if f in done and f.exception() is not None), None)
            if failed is not None:
                cancelled.set()
                for future in futures:
                    future.cancel()
                raise failed.exception()  # type: ignore[misc]
            results = [future.result() for future in futures]
        combined = _combine(dataset_id, parameters, [parts for _, parts in results], time_range)
        listed_until = _listing_stops_early(files, time_range)
        if listed_until is None:
            return combined
        # Files missing at the end of the listing (not yet processed, or lost): only what
        # they cover is known; the cache asks for the rest again (see `ParameterData`).
        return {
            name: replace(
                data,
                proven_until=listed_until
                if data.proven_until is None
                else min(data.proven_until, listed_until),
            )
            for name, data in combined.items()
        }

    def info(self, dataset_id: str) -> DatasetInfo:
        """Return the dataset's title and coverage from CDAS, parameters from its latest file."""
        url = (
            f"{self.settings.cdas_url}/dataviews/sp_phys/datasets"
            f"?idPattern={quote('^' + re.escape(dataset_id) + '$', safe='')}"
        )
        body = self._get_json(url, dataset_id, "dataset description")
        entries: Any = body.get("DatasetDescription") or []
        entry: Any = next(
            (e for e in entries if isinstance(e, dict) and e.get("Id") == dataset_id), None
        )
        if entry is None:
            raise UnknownDatasetError(dataset_id)
        interval: Any = entry.get("TimeInterval") or {}
        start, stop = _parse_time(interval.get("Start")), _parse_time(interval.get("End"))
        return DatasetInfo(
            id=dataset_id,
            title=str(entry.get("Label") or ""),
            mission_id=_first(entry.get("Observatory")),
            instrument=_first(entry.get("Instrument")),
            start=start,
            stop=stop,
            pi_name=str(entry.get("PiName") or "") or None,
            doi=str(entry.get("Doi") or "") or None,
            parameters=self._describe_parameters(dataset_id, start, stop),
        )

    def _describe_parameters(
        self, dataset_id: str, start: datetime | None, stop: datetime | None
    ) -> tuple[ParameterInfo, ...]:
        """Describe the variables of the latest file (the first, if the last day is a gap)."""
        if stop is None:
            return ()
        first = start or stop - timedelta(days=1)
        day = timedelta(days=1)
        for window in (TimeRange(max(stop - day, first), stop), TimeRange(first, first + day)):
            try:
                files = self.list_files(dataset_id, window)
            except NoDataError:
                continue
            path = self.download(files[-1])
            try:
                return describe_cdf(path, dataset_id)
            except Exception:
                self.cache.forget_file(path)  # a file that fails to read is not kept
                raise
            finally:
                if path.name.endswith(".once"):
                    path.unlink(missing_ok=True)
        return ()


def _listing_stops_early(files: Sequence[RemoteFile], time_range: TimeRange) -> datetime | None:
    """The end of the last listed file when the files stop well before the range does.

    "Well before": by more than half a typical file's span, so a daily file ending at
    23:59:59 still covers a range ending at midnight.
    """
    ends = [f.end for f in files if f.end is not None]
    if not ends:
        return None
    spans = sorted(f.end - f.start for f in files if f.end is not None and f.start is not None)
    typical = spans[len(spans) // 2] if spans else timedelta(0)
    last = max(ends)
    return last if time_range.end - last > typical / 2 else None


def _file_key(remote: RemoteFile) -> str | None:
    """The cache key of a remote file: its URL and LastModified (None when unknown)."""
    if remote.last_modified is None:
        return None
    return f"{remote.url}\n{remote.last_modified}"


def _first(value: object) -> str | None:
    if isinstance(value, list) and value:
        return str(value[0])  # pyright: ignore[reportUnknownArgumentType]
    return value if isinstance(value, str) and value else None


def _same_bins(piece: ParameterData, first: ParameterData) -> bool:
    if piece.bins is None or first.bins is None:
        return piece.bins is None and first.bins is None
    return bool(np.array_equal(piece.bins, first.bins, equal_nan=True))


def _combine(
    dataset_id: str,
    parameters: Sequence[str],
    per_file: list[dict[str, ParameterData]],
    time_range: TimeRange,
) -> dict[str, ParameterData]:
    """Join each parameter's per-file pieces: time order, in range, duplicates resolved.

    Duplicate times (within a file or where files overlap) follow the one rule for every
    source, `drop_duplicate_times`: identical rows dropped, contradictory ones reported.
    """
    start = pd.Timestamp(time_range.start)
    end = pd.Timestamp(time_range.end)
    combined: dict[str, ParameterData] = {}
    for name in parameters:
        pieces = [parts[name] for parts in per_file if name in parts]
        # Empty pieces add nothing and would make pandas guess the joined dtypes.
        filled = [p for p in pieces if not p.frame.empty] or [pieces[0]]
        frames, dims = to_per_record(
            [p.frame for p in filled], [list(p.meta.get("dims") or []) for p in filled]
        )
        frame = pd.concat(frames) if len(frames) > 1 else frames[0]
        frame = frame.sort_index(kind="stable")
        frame = frame.loc[(frame.index >= start) & (frame.index < end)]
        first = next((p for p in pieces if p.bins is not None), pieces[0])
        joined = ParameterData(
            name=first.name,
            frame=frame,
            units=first.units,
            description=first.description,
            bins=first.bins if all(_same_bins(p, first) for p in filled) else None,
            bins_name=first.bins_name,
            bins_units=first.bins_units,
            meta={**first.meta, "dims": dims} if dims else first.meta,
        )
        combined[name] = drop_duplicate_times(joined, f"{dataset_id}.{name}")
    if all(p.frame.empty for p in combined.values()):
        raise NoDataError(
            f"CDAWeb's {dataset_id} files hold no valid records of "
            f"{', '.join(parameters)} in {time_range}. Try a wider or different time range."
        )
    return combined
