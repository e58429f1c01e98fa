"""Which addresses a web API call may reach: the hosts of the descriptions, and no other.

`HostPolicy` is built from the API descriptions (and the search providers' addresses):
a URL is allowed only when its scheme is http(s) and its host (with port) is one of those
hosts. Every address the host resolves to is then checked: a loopback, private,
link-local, reserved or multicast address is refused unless the user configured that host
themselves (a setting or ``[web_apis]``), so a description, a redirect or a DNS answer
can never point xhelio at the user's own machine or network. `check_peer` repeats the
check on the address actually connected to (a DNS answer that changed in between).
Imports `errors` only.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from xhelio.errors import UserError

__all__ = ["BlockedAddressError", "HostPolicy", "host_key"]

Resolver = Callable[[str, int], list[str]]


class BlockedAddressError(UserError):
    """A web API call would reach an address outside the allowlist."""


def host_key(url: str) -> str:
    """``host:port`` of an http(s) URL (the default port filled in), lower case."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{(parts.hostname or '').lower()}:{port}"


def _resolve(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except OSError as exc:
        raise BlockedAddressError(f"The host {host} cannot be resolved ({exc}).") from exc
    return [str(info[4][0]) for info in infos]


def _internal(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
    )


@dataclass
class HostPolicy:
    """The allowlist: host:port -> whether the user configured it (may be internal)."""

    hosts: dict[str, bool] = field(default_factory=dict[str, bool])
    resolve: Resolver = _resolve

    def allow(self, url: str, user_configured: bool) -> None:
        """Add the host of `url`; user-configured wins when two APIs share a host."""
        key = host_key(url)
        self.hosts[key] = self.hosts.get(key, False) or user_configured

    def allow_all(self, urls: Iterable[tuple[str, bool]]) -> None:
        """Add several (url, user_configured) pairs."""
        for url, configured in urls:
            self.allow(url, configured)

    def check(self, url: str) -> None:
        """Refuse `url` unless its host is allowed and resolves only to allowed addresses.

        Raises:
            BlockedAddressError: Another scheme or host, or an internal address the user
                did not configure.
        """
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise BlockedAddressError(f"Refused {url!r}: only http(s) addresses are called.")
        key = host_key(url)
        if key not in self.hosts:
            allowed = ", ".join(sorted(self.hosts)) or "none"
            raise BlockedAddressError(
                f"Refused {parts.hostname}: web API calls may reach only the hosts of the "
                f"API descriptions ({allowed}). Add the service under [web_apis] in the "
                "config file to allow it."
            )
        if self.hosts[key]:
            return
        port = parts.port or (443 if parts.scheme == "https" else 80)
        for address in self.resolve(parts.hostname, port):
            self._check_address(parts.hostname, address)

    def check_peer(self, url: str, address: str | None) -> None:
        """Refuse the connection when the address connected to is internal and not configured."""
        if address is None or self.hosts.get(host_key(url), False):
            return
        self._check_address(urlsplit(url).hostname or "", address)

    @staticmethod
    def _check_address(host: str, address: str) -> None:
        if _internal(address):
            raise BlockedAddressError(
                f"Refused {host}: it resolves to the internal address {address} (loopback or "
                "private network), which a web API call may reach only when you configured "
                "that host yourself."
            )
