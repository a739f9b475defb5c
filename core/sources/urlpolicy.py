"""Which URLs the web fetcher may fetch: http(s) only, and by default no private,
loopback, link-local or otherwise non-global addresses (checked on every address the
host resolves to), unless the allowlist names the host or a range holding the address.

The allowlist (``EVERGREEN_FETCH_ALLOWLIST``) holds host names (``intranet.example``;
``.example`` also allows its subdomains), addresses (``127.0.0.1``) and CIDR ranges
(``10.0.0.0/8``). A refusal is an EvergreenError saying why.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from core.errors import EvergreenError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class UrlRefused(EvergreenError):
    """The URL may not be fetched under the fetch policy."""


@dataclass(frozen=True)
class UrlPolicy:
    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_allowlist(cls, entries: Iterable[str]) -> UrlPolicy:
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def check(self, url: str) -> None:
        """Raise UrlRefused unless ``url`` may be fetched."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise UrlRefused(f"Refused to fetch {url}: only http and https URLs are fetched.")
        host = (parts.hostname or "").rstrip(".").lower()
        if not host:
            raise UrlRefused(f"Refused to fetch {url}: the URL names no host.")
        if self._host_allowed(host):
            return
        for address in resolve(host, parts.port, url):
            kind = non_global_kind(address)
            if kind and not any(address in net for net in self.networks):
                raise UrlRefused(
                    f"Refused to fetch {url}: {host} resolves to {address}, a {kind} address "
                    "(add the host or a range holding it to EVERGREEN_FETCH_ALLOWLIST to allow)."
                )

    def _host_allowed(self, host: str) -> bool:
        if host in self.hosts:
            return True
        return any(h.startswith(".") and (host.endswith(h) or host == h[1:]) for h in self.hosts)


def resolve(host: str, port: int | None, url: str) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port or 443, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise UrlRefused(f"Cannot fetch {url}: the host {host} does not resolve ({exc}).") from None
    out: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if address not in out:
            out.append(address)
    return out


def non_global_kind(address: IPAddress) -> str | None:
    """Why an address is not a public one ('loopback', 'private', …), or None if it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    if address.is_private:
        return "private"
    if address.is_reserved or not address.is_global:
        return "reserved"
    return None
