"""Which URLs the web fetcher may fetch: http(s) only, and by default no private,
loopback, link-local or otherwise non-global addresses (checked on every address the
host resolves to), unless the allowlist names the host or a range holding the address.

The allowlist (``EVERGREEN_FETCH_ALLOWLIST``) holds host names (``intranet.example``;
``.example`` also allows its subdomains), addresses (``127.0.0.1``) and CIDR ranges
(``10.0.0.0/8``). A refusal is an EvergreenError saying why.

URLs are read the way browsers read them (the WHATWG URL standard, through ``ada-url``):
the scheme, host and port the policy decides on are the ones Chromium would request.
A URL that Python's ``urlsplit`` reads differently (``http://127.0.0.1:1\\@a.example/``:
Python sees host ``a.example``, a browser 127.0.0.1) is refused outright, so no part of
the program can act on another reading than the one that was checked. ``check`` returns
the ``Target`` it approved: host, port and the addresses it may connect to.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

import ada_url

from core.errors import EvergreenError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT_PORTS = {"http": 80, "https": 443}


class UrlRefused(EvergreenError):
    """The URL may not be fetched under the fetch policy."""


@dataclass(frozen=True)
class Target:
    """Where an approved URL leads, as a browser reads it: scheme, host (ASCII, lower
    case, IPv6 in brackets), port, and the addresses checked for it (empty when the
    allowlist names the host: it is then trusted by name and resolved when connecting)."""

    scheme: str
    host: str
    port: int
    addresses: tuple[IPAddress, ...] = ()


def browser_parts(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL as the WHATWG standard reads it; UrlRefused
    if it is not a valid http(s) URL or Python's ``urlsplit`` reads it differently."""
    try:
        parsed = ada_url.URL(url)
    except ValueError:
        raise UrlRefused(f"Refused to fetch {url}: it is not a valid URL.") from None
    scheme = parsed.protocol.rstrip(":")
    if scheme not in DEFAULT_PORTS:
        raise UrlRefused(f"Refused to fetch {url}: only http and https URLs are fetched.")
    host = parsed.hostname
    port = int(parsed.port) if parsed.port else DEFAULT_PORTS[scheme]
    if not host:
        raise UrlRefused(f"Refused to fetch {url}: the URL names no host.")
    if _python_parts(url) != (scheme, host, port):
        raise UrlRefused(
            f"Refused to fetch {url}: browsers and Python read this URL differently "
            f"(a browser would request {host}); write it plainly."
        )
    return scheme, host, port


def _python_parts(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) as ``urlsplit`` reads ``url``, spelled as WHATWG spells them
    (IDNA for non-ASCII names, compressed IPv6 in brackets); None if it cannot."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port or DEFAULT_PORTS.get(scheme, -1)
    except ValueError:
        return None
    host = parts.hostname or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if isinstance(address, ipaddress.IPv6Address):
        host = f"[{address.compressed}]"
    elif not host.isascii():
        try:
            host = ada_url.URL(f"http://{host}/").hostname
        except ValueError:
            return None
    return scheme, host, port


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

    def check(self, url: str) -> Target:
        """The Target of ``url`` if it may be fetched; UrlRefused (saying why) if not."""
        scheme, host, port = browser_parts(url)
        name = host.rstrip(".")
        if self._host_allowed(name):
            return Target(scheme, host, port)
        addresses = resolve(name, port, url)
        for address in addresses:
            kind = non_global_kind(address)
            if kind and not any(address in net for net in self.networks):
                raise UrlRefused(
                    f"Refused to fetch {url}: {name} resolves to {address}, a {kind} address "
                    "(add the host or a range holding it to EVERGREEN_FETCH_ALLOWLIST to allow)."
                )
        return Target(scheme, host, port, tuple(addresses))

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
