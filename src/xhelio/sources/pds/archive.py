"""The PPI archive over HTTP: folder listings, the products of a time range, downloads.

The archive (``Settings.pds_url``) serves each dataset's products as files in web folders
(``{pds_url}{slot}/``, Apache-style listings). A product is a label (PDS4 ``.xml`` /
``.lblx``, PDS3 ``.lbl``) and the table of the same name (``.tab``, ``.sts``, ``.csv``,
``.dat``, any case). `find_products` walks a dataset's folders and keeps what can cover
the range: names carrying dates (``2016``, ``2016240``, ``20050215``,
``20181130T190519_20181130T192727``...) are placed in time, each dated sibling reaching
to the next one (a file named by its first day covers until the next file begins); an
undated folder is entered, an undated product kept (its rows are filtered after
reading). The walk is bounded (`MAX_LISTINGS`, `MAX_PRODUCTS`): past that the error
asks for a shorter range.

`download` keeps files in the shared disk cache (`FragmentCache`, checksummed; keyed by
URL: archive products are versioned and do not change in place), retries through
`call_with_retries`, and refuses a web page served instead of a file (a maintenance or
error page with HTTP 200). A 404 is `NoDataError` for a product and
`UnknownDatasetError` for a dataset's own folder.

Imports `config`, `errors`, `timerange` and `sources` modules; httpx; no pandas.
"""

from __future__ import annotations

import bisect
import calendar
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path, PurePosixPath
from typing import TypeVar
from urllib.parse import unquote, urljoin, urlsplit

import httpx

from xhelio.config import Settings
from xhelio.errors import NoDataError, RequestTooLargeError, ServerError, UnknownDatasetError
from xhelio.sources.cache import FragmentCache
from xhelio.sources.http import (
    RetryPolicy,
    call_with_retries,
    check_file_response,
    check_rate_limit,
    make_client,
)
from xhelio.timerange import TimeRange

__all__ = ["MAX_LISTINGS", "MAX_PRODUCTS", "PpiArchive", "Product", "file_name", "name_span"]

_T = TypeVar("_T")
MAX_LISTINGS = 200
"""Most folder listings one fetch may read."""
MAX_PRODUCTS = 400
"""Most products one fetch may download."""
_SETTING_HINT = "XHELIO_PDS_URL"
LABEL_SUFFIXES = (".xml", ".lblx", ".lbl")
TABLE_SUFFIXES = (".tab", ".sts", ".csv", ".dat", ".txt")
_HREF = re.compile(r"""<a\s[^>]*?href\s*=\s*["']([^"'?#]+)["']""", re.IGNORECASE)
_SPAN = re.compile(r"(?<!\d)(\d{8})(?:T(\d{6}))?_(\d{8})(?:T(\d{6}))?(?!\d)")
_DATE = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?!\d)")
_ORDINAL = re.compile(r"(?<!\d)(\d{4})-?(\d{3})(?!\d)")
_YEAR = re.compile(r"^(\d{4})$")


@dataclass(frozen=True)
class Product:
    """One product of the archive: its label and its table."""

    label_url: str
    table_url: str

    @property
    def name(self) -> str:
        """The label's file name."""
        return file_name(self.label_url)


def file_name(url: str) -> str:
    """The last path segment of `url`, decoded."""
    return unquote(PurePosixPath(urlsplit(url).path).name)


def _stamp(day: str, clock: str | None) -> datetime | None:
    try:
        return datetime.strptime(day + (clock or "000000"), "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def name_span(name: str) -> tuple[datetime, datetime | None] | None:
    """When a file or folder named `name` begins, and ends if the name says so; else None.

    ``2016`` is that year; ``20181130T190519_20181130T192727`` that span; a single date
    (``20050215``, ``2005-02-15``, ``2016240``) the day it begins, its end unknown.
    """
    stem = name.rstrip("/")
    year = _YEAR.match(stem)
    if year and 1950 < int(year.group(1)) < 2100:
        first = int(year.group(1))
        return datetime(first, 1, 1, tzinfo=UTC), datetime(first + 1, 1, 1, tzinfo=UTC)
    span = _SPAN.search(stem)
    if span:
        start, end = _stamp(span.group(1), span.group(2)), _stamp(span.group(3), span.group(4))
        if start is not None and end is not None:
            return start, end + timedelta(days=0 if span.group(4) else 1)
    date = _DATE.search(stem)
    if date:
        found = _stamp("".join(date.groups()), None)
        if found is not None and 1950 < found.year < 2100:
            return found, None
    ordinal = _ORDINAL.search(stem)
    if ordinal:
        year_n, day_n = int(ordinal.group(1)), int(ordinal.group(2))
        if 1950 < year_n < 2100 and 1 <= day_n <= 365 + calendar.isleap(year_n):
            return datetime(year_n, 1, 1, tzinfo=UTC) + timedelta(days=day_n - 1), None
    return None


def _overlapping(names: list[str], time_range: TimeRange) -> list[str]:
    """The names that may hold data of the range: undated ones, and dated ones that overlap.

    A dated name without an end reaches to the next dated name's start (the last one a
    day, or as far as the widest step between its siblings).
    """
    dated: list[tuple[datetime, datetime | None, str]] = []
    undated: list[str] = []
    for name in names:
        span = name_span(name)
        if span is None:
            undated.append(name)
        else:
            dated.append((span[0], span[1], name))
    dated.sort(key=lambda item: item[0])
    starts = [start for start, _, _ in dated]
    steps = [b - a for a, b in itertools.pairwise(starts) if b > a]
    last_reach = max([timedelta(days=1), *steps])
    kept: list[str] = []
    for _index, (start, end, name) in enumerate(dated):
        if end is None:
            later = bisect.bisect_right(starts, start)
            end = starts[later] if later < len(starts) else start + last_reach
        if start < time_range.end and end > time_range.start:
            kept.append(name)
    return undated + kept


@dataclass
class _Walk:
    """What one product search has read so far (to bound it)."""

    listings: int = 0


class PpiArchive:
    """Reads folders and files of the PPI archive (see the module docstring)."""

    def __init__(self, settings: Settings, cache: FragmentCache) -> None:
        self.settings = settings
        self.cache = cache
        self.retry_policy = RetryPolicy.from_settings(settings)
        self._client: httpx.Client | None = None

    @property
    def client(self) -> httpx.Client:
        """The HTTP client, made on first use."""
        if self._client is None:
            self._client = make_client(self.settings)
        return self._client

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def folder_url(self, slot: str) -> str:
        """The address of a dataset's folder."""
        return f"{self.settings.pds_url}/{slot.strip('/')}/"

    def _with_retries(self, operation: Callable[[], _T], url: str) -> _T:
        return call_with_retries(
            operation,
            url=url,
            policy=self.retry_policy,
            setting_hint=_SETTING_HINT,
            timeout_s=self.settings.http_timeout_s,
        )

    def list_folder(self, url: str) -> tuple[list[str], list[str]]:
        """The (sub-folders, files) of the folder at `url`, names only, sorted."""
        text = self._with_retries(lambda: self._get_listing(url), url)
        folders: set[str] = set()
        files: set[str] = set()
        for href in _HREF.findall(text):
            target = urljoin(url, href)
            if not target.startswith(url) or target == url:
                continue  # the parent, the root, sorting links, other sites
            name = unquote(target[len(url) :])
            if name.endswith("/") and "/" not in name[:-1]:
                folders.add(name)
            elif "/" not in name:
                files.add(name)
        return sorted(folders), sorted(files)

    def _get_listing(self, url: str) -> str:
        response = self.client.get(url)
        check_rate_limit(response, url)
        if response.status_code == 404:
            raise NoDataError(f"The PDS PPI archive has no folder {url} (HTTP 404).")
        if response.status_code >= 400:
            raise ServerError(
                f"The PDS PPI archive failed to list {url} (HTTP {response.status_code}). "
                "Try again later.",
                status_code=response.status_code,
            )
        return response.text

    def find_products(
        self, dataset_id: str, slot: str, time_range: TimeRange | None
    ) -> list[Product]:
        """The products of a dataset that may hold data of `time_range` (all when None).

        Raises:
            UnknownDatasetError: the dataset's folder is not in the archive.
            NoDataError: no product can cover the range.
            RequestTooLargeError: the range covers too many folders or products.
        """
        root = self.folder_url(slot)
        try:
            products = self._walk(root, time_range, 0, _Walk(), first_only=time_range is None)
        except NoDataError as missing:
            if root in missing.message:
                raise UnknownDatasetError(dataset_id) from missing
            raise
        if not products:
            where = f" for {time_range}" if time_range is not None else ""
            raise NoDataError(
                f"The PDS PPI archive has no products of {dataset_id}{where} in {root}. "
                "Try another time range; `xhelio catalog show` gives the dataset's coverage."
            )
        if len(products) > MAX_PRODUCTS:
            raise RequestTooLargeError(
                f"{dataset_id} has {len(products)} products in {time_range} (at most "
                f"{MAX_PRODUCTS} per fetch). Ask for a shorter time range."
            )
        return products

    def _walk(
        self, url: str, time_range: TimeRange | None, depth: int, walk: _Walk, first_only: bool
    ) -> list[Product]:
        walk.listings += 1
        if walk.listings > MAX_LISTINGS:
            raise RequestTooLargeError(
                f"Finding the products in {url} needs more than {MAX_LISTINGS} folder "
                "listings. Ask for a shorter time range."
            )
        folders, files = self.list_folder(url)
        products = _pair(url, files)
        if time_range is not None:
            wanted = set(_overlapping([p.name for p in products], time_range))
            products = [p for p in products if p.name in wanted]
            folders = _overlapping(folders, time_range)
        if first_only and products:
            return products[:1]
        for folder in folders if depth < 5 else []:
            products += self._walk(url + folder, time_range, depth + 1, walk, first_only)
            if first_only and products:
                break
        return products

    def download(self, url: str, dataset_id: str) -> Path:
        """A local, complete copy of the file at `url` (from the cache when kept)."""
        key = f"pds:{url}"
        kept = self.cache.file_for(key)
        if kept is not None:
            return kept
        name = file_name(url)
        partial = self.cache.new_file_path(name)
        try:
            self._with_retries(lambda: self._download_once(url, partial), url)
            return self.cache.add_file(key, dataset_id, name, partial)
        finally:
            partial.unlink(missing_ok=True)

    def _download_once(self, url: str, partial: Path) -> None:
        name = file_name(url)
        with self.client.stream("GET", url) as response:
            check_rate_limit(response, name)
            if response.status_code == 404:
                raise NoDataError(f"The PDS PPI archive has no file {url} (HTTP 404).")
            check_file_response(response, name, "The PDS PPI archive")
            with partial.open("wb") as out:
                for chunk in response.iter_bytes(256 * 1024):
                    out.write(chunk)


def _pair(url: str, files: list[str]) -> list[Product]:
    """Labels with a table of the same name (any case) in one folder, as products."""
    tables: dict[str, str] = {}
    labels: dict[str, str] = {}
    for name in files:
        stem, suffix = _split(name)
        if stem.startswith("collection") or stem.startswith("bundle"):
            continue  # PDS4 inventories, not data
        if suffix in TABLE_SUFFIXES:
            tables.setdefault(stem, name)
        elif suffix in LABEL_SUFFIXES and stem not in labels:
            labels[stem] = name
    return [
        Product(url + labels[stem], url + tables[stem]) for stem in sorted(labels) if stem in tables
    ]


def _split(name: str) -> tuple[str, str]:
    dot = name.rfind(".")
    if dot <= 0:
        return name.lower(), ""
    return name[:dot].lower(), name[dot:].lower()
