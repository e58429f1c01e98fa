"""CDAWeb's CDF archive as a `DataSource`: CDAS REST file listing + parallel downloads.

`fetch` asks CDAS REST for the files covering the range (``orig_data``), downloads them
in parallel (`Settings.download_workers` threads, progress in bytes and files), checks
each against its listed Length, reads each file once for all requested parameters
(`cdf_reader`), and joins the pieces in time order, dropping duplicate times and rows
outside [start, end). Progress is reported as progress(bytes_done, bytes_total,
"ID: k/n files"), from the download threads but never two calls at once; a retried
download takes its bytes back, so the count can step down after a failure.

Downloaded files are kept under ``Settings.cache_dir / "cdf"``, named by a hash of the
file URL and its LastModified stamp, so asking for other parameters of the same days
does not download again, and a file CDAWeb reprocesses (new LastModified) is fetched
fresh. Files listed without LastModified are always downloaded. The folder is trimmed
to `Settings.cache_max_mb`, least recently used first.

`info` asks CDAS for the dataset description (title, coverage) and describes the
parameters from the variables of the dataset's most recent file.

Imports from xhelio only `config`, `errors`, `timerange`, `catalog.model`, `sources`.
Network happens only inside `info` and `fetch`, never at import or construction.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, CancelledError, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
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
from xhelio.sources.base import ParameterData, ProgressCallback
from xhelio.sources.cdf_reader import describe_cdf, read_cdf_parameters
from xhelio.sources.dims import to_per_record
from xhelio.sources.http import RetryPolicy, call_with_retries, make_client
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


class _CdfFileStore:
    """Downloaded CDF files on disk, keyed by URL + LastModified, trimmed LRU."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    def path_for(self, remote: RemoteFile) -> Path:
        """Return where `remote` is (or will be) stored."""
        key = f"{remote.url}\n{remote.last_modified}".encode()
        digest = hashlib.sha256(key).hexdigest()[:20]
        return self.folder / f"{digest}_{remote.file_name}"

    def cached(self, remote: RemoteFile) -> tuple[Path, int] | None:
        """Return the stored copy of `remote` and its size, if complete and still current."""
        if remote.last_modified is None:
            return None
        path = self.path_for(remote)
        try:
            size = path.stat().st_size
            if remote.length is not None and size != remote.length:
                return None
            os.utime(path)  # mark as recently used for trimming
        except FileNotFoundError:  # trimmed meanwhile by another process
            return None
        return path, size

    def trim(self, keep: set[Path]) -> None:
        """Delete least recently used files until the folder fits in `max_bytes`."""
        entries: list[tuple[float, int, Path]] = []
        for path in self.folder.glob("*"):
            try:
                stat = path.stat()
            except FileNotFoundError:
                continue
            entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            if path not in keep:
                path.unlink(missing_ok=True)
                total -= size


class CdawebSource:
    """CDAWeb CDF files through the CDAS REST ``orig_data`` service."""

    name = "cdf"

    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.retry_policy = retry_policy or RetryPolicy.from_settings(settings)
        self._client = client
        self._owns_client = client is None
        self._store = _CdfFileStore(settings.cache_dir / "cdf", settings.cache_max_mb * 2**20)

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
        cached = self._store.cached(remote)
        if cached is not None:
            if meter is not None:
                meter.add(cached[1])
            return cached[0]
        target = self._store.path_for(remote)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.{uuid.uuid4().hex}.part")
        try:
            self._with_retries(
                lambda: self._download_once(remote, partial, meter, cancelled), remote.url
            )
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        return target

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
                if response.status_code >= 400:
                    raise ServerError(
                        f"CDAWeb failed to send {remote.file_name} (HTTP "
                        f"{response.status_code}). Try again later or use the HAPI source.",
                        status_code=response.status_code,
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
        except ServerError:
            # A file that downloads whole but does not parse must not stay in the cache.
            path.unlink(missing_ok=True)
            raise
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
                pool.submit(self._download_and_read, f, dataset_id, parameters, meter, cancelled)
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
        self._store.trim(keep={path for path, _ in results})
        return _combine(dataset_id, parameters, [parts for _, parts in results], time_range)

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
            return describe_cdf(self.download(files[-1]), dataset_id)
        return ()


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
    """Join each parameter's per-file pieces: time order, no duplicate times, in range."""
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
        keep = ~frame.index.duplicated(keep="first") & (frame.index >= start) & (frame.index < end)
        frame = frame.loc[keep]
        first = next((p for p in pieces if p.bins is not None), pieces[0])
        combined[name] = ParameterData(
            name=first.name,
            frame=frame,
            units=first.units,
            description=first.description,
            bins=first.bins if all(_same_bins(p, first) for p in filled) else None,
            bins_name=first.bins_name,
            bins_units=first.bins_units,
            meta={**first.meta, "dims": dims} if dims else first.meta,
        )
    if all(p.frame.empty for p in combined.values()):
        raise NoDataError(
            f"CDAWeb's {dataset_id} files hold no valid records of "
            f"{', '.join(parameters)} in {time_range}. Try a wider or different time range."
        )
    return combined
