"""Which URLs a fetch may reach: `AddressPolicy` refuses loopback, private and other
non-global addresses before any connection is made (server-side request forgery).

`AddressPolicy.check(url)` allows only `http` and `https`, resolves the host once, and
refuses it when *any* of its addresses is not a global unicast address: loopback,
private, link-local, multicast, reserved, unspecified, shared (100.64.0.0/10) or a
cloud metadata address. Numeric hosts are read the way C's `inet_aton` reads them
(`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1` are all 127.0.0.1), since that is how
the system resolver would connect to them; an IPv6 address that maps or embeds an IPv4
one (`::ffff:127.0.0.1`, 6to4 `2002::/16`, NAT64 `64:ff9b::/96`) is judged by the IPv4
address. An allow-list opens named hosts (exact, case-insensitive) or networks.

The `CheckedTarget` it returns says how to connect to the address that was checked, so
that the HTTP client does not resolve the name a second time (DNS rebinding): request
`connect_url` (the host replaced by the address) with the `Host` header `host_header`
and the request `extensions` (for https, `sni_hostname`: TLS server name indication and
certificate verification still use the host name). httpx keys its connection pool by
the address then, so an `httpx.Client` shared by several host names at one address may
send one name's request over a TLS connection verified for another; `loaders.crawl`
makes one client per crawl (one host) unless it is given one. Through an HTTP proxy,
the TLS tunnel would verify the address rather than the name: use no proxy with a policy.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

import httpx

from splitters.base.errors import ConfigurationError, UnsafeUrlError

__all__ = ["AddressPolicy", "CheckedTarget", "IPAddress", "Resolver", "resolve"]

#: An IPv4 or IPv6 address.
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Resolves (host, port) to IP address strings, raising `OSError` when it cannot.
Resolver = Callable[[str, int], Sequence[str]]

_SCHEMES = {"http": 80, "https": 443}
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")  # RFC 6598, carrier-grade NAT
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052 well-known prefix
# Instance metadata services: most are link-local or private anyway; listed so that the
# reason says so, and for the two that Python's `ipaddress` calls global.
_METADATA = frozenset(
    ipaddress.ip_address(address)
    for address in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean…
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.170.23",  # AWS EKS pod identity
        "fd00:ec2::254",  # AWS, IPv6
        "fd00:ec2::23",  # AWS EKS pod identity, IPv6
        "100.100.100.200",  # Alibaba Cloud
        "168.63.129.16",  # Azure WireServer (a global address reachable only from Azure VMs)
        "192.0.0.192",  # Oracle Cloud (classic)
    )
)
_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("is_loopback", "a loopback address"),
    ("is_unspecified", "an unspecified address"),
    ("is_link_local", "a link-local address"),
    ("is_multicast", "a multicast address"),
    ("is_private", "a private address"),
    ("is_reserved", "a reserved address"),
)
_HOST_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")
_NOT_IN_HOST_NAMES = frozenset(":/@?#[]\\%")


def resolve(host: str, port: int) -> list[str]:
    """Every address `host` resolves to (A and AAAA records), in the system's order."""
    found: list[str] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        address = str(sockaddr[0])
        if address not in found:
            found.append(address)
    return found


def _inet_aton(text: str) -> ipaddress.IPv4Address | None:
    """`text` read as C's `inet_aton` reads it (1 to 4 parts, each decimal, 0-octal or
    0x-hex; the last part fills the remaining bytes), or None when it is not a number."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        lowered = part.lower()
        if lowered.startswith("0x"):
            digits, base, allowed = lowered[2:], 16, "0123456789abcdef"
        elif len(lowered) > 1 and lowered.startswith("0"):
            digits, base, allowed = lowered[1:], 8, "01234567"
        else:
            digits, base, allowed = lowered, 10, "0123456789"
        if not (digits or base == 16) or any(c not in allowed for c in digits):
            return None  # "" is only a number as "0x" (zero), as in inet_aton
        significant = digits.lstrip("0")
        if len(significant) > 12:
            return None  # beyond 32 bits (and short of int()'s limit on digits)
        values.append(int(significant, base) if significant else 0)
    *leading, last = values
    if any(value > 255 for value in leading) or last >= 256 ** (5 - len(values)):
        return None
    number = last
    for index, value in enumerate(leading):
        number += value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def _literal(host: str) -> tuple[IPAddress, bool] | None:
    """The IP address `host` spells, and whether it spells it in the standard form."""
    text = host.removesuffix(".")
    if ":" in text:
        try:
            return ipaddress.IPv6Address(unquote(text)), True
        except ValueError:
            return None
    try:
        return ipaddress.IPv4Address(text), True
    except ValueError:
        numeric = _inet_aton(text)
        return None if numeric is None else (numeric, False)


def _embedded(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address `address` maps (::ffff:0:0/96) or embeds (6to4, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return "maps to", address.ipv4_mapped
    if address in _NAT64:
        return "embeds", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return "embeds", address.sixtofour
    return None


def _category(address: IPAddress) -> str | None:
    """Why `address` may not be reached ("a loopback address"), or None if it is global."""
    if address in _METADATA:
        return "a cloud metadata address"
    for attribute, category in _CATEGORIES:
        if getattr(address, attribute):
            return category
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if not address.is_global:
        return "not a global address"
    return None


def _refusal(address: IPAddress) -> str | None:
    """What is wrong with `address` ("is a loopback address"), or None when nothing is."""
    if isinstance(address, ipaddress.IPv6Address):
        found = _embedded(address)
        if found is not None:
            verb, inner = found
            category = _category(inner)
            if category is not None:
                return f"{verb} {inner}, {category}"
            if verb == "maps to" or address in _NAT64:
                # The IPv4 address is what is reached; the prefix is reserved, not the host.
                return None
    category = _category(address)
    return None if category is None else f"is {category}"


def _normalized(address: IPAddress) -> IPAddress:
    """An IPv4-mapped IPv6 address as the IPv4 address it is; others unchanged."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


@dataclass(frozen=True, kw_only=True)
class CheckedTarget:
    """A URL that `AddressPolicy.check` allowed, and the address it was checked at.

    `host` is the URL's host as the HTTP client sends it (lower-case, IDNA-encoded, no
    brackets or trailing dot), `port` the effective port, `address` the checked IP
    address to connect to.
    """

    url: str
    scheme: str
    host: str
    port: int
    address: str

    @property
    def connect_url(self) -> str:
        """`url` with its host replaced by `address` (bracketed when IPv6)."""
        return str(httpx.URL(self.url).copy_with(host=self.address))

    @property
    def host_header(self) -> str:
        """The `Host` header a request to `url` carries (host, and port if not default)."""
        return httpx.URL(self.url).netloc.decode("ascii")

    @property
    def extensions(self) -> Mapping[str, str]:
        """httpx request extensions: for https to a host name, its TLS server name."""
        if self.scheme == "https" and _literal(self.host) is None:
            return {"sni_hostname": self.host}
        return {}


@dataclass(frozen=True, kw_only=True)
class AddressPolicy:
    """Refuses URLs whose host is, or resolves to, a non-global address.

    `allow` entries are host names (matched exactly, case-insensitive: all of that
    host's addresses are allowed), IP addresses or networks in CIDR notation (a
    resolved address inside one is allowed). `resolver` maps (host, port) to addresses;
    the default asks the system (`socket.getaddrinfo`).
    """

    allow: tuple[str, ...] = ()
    resolver: Resolver = field(default=resolve, compare=False)
    _hosts: frozenset[str] = field(init=False, repr=False, compare=False)
    _networks: tuple[IPNetwork, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in self.allow:
            parsed = _allow_entry(entry)
            if isinstance(parsed, str):
                hosts.add(parsed)
            else:
                networks.append(parsed)
        object.__setattr__(self, "_hosts", frozenset(hosts))
        object.__setattr__(self, "_networks", tuple(networks))

    @classmethod
    def from_allow_list(cls, text: str, *, resolver: Resolver = resolve) -> AddressPolicy:
        """A policy allowing the comma-separated hosts and networks of `text`
        (e.g. "docs.internal, 10.0.0.0/8, ::1"); raises `ConfigurationError` on a
        malformed entry."""
        entries = tuple(entry.strip() for entry in text.split(",") if entry.strip())
        return cls(allow=entries, resolver=resolver)

    def check(self, url: str) -> CheckedTarget:
        """The address to connect to for `url`, resolving its host once.

        Raises `UnsafeUrlError` (naming the reason) when the scheme is not http or
        https, the host does not resolve, or any address it resolves to is not global
        and not allowed.
        """
        try:
            parsed = httpx.URL(url)
        except httpx.InvalidURL as exc:
            self._refuse_unparsed(url)
            raise UnsafeUrlError(f"not a valid URL ({exc})", source=url) from None
        scheme = parsed.scheme.lower()
        if scheme not in _SCHEMES:
            raise UnsafeUrlError(f"scheme {scheme!r} is not http or https", source=url)
        raw_host = parsed.raw_host.decode("ascii")
        if not raw_host:
            raise UnsafeUrlError("the URL has no host", source=url)
        host = raw_host.lower().removesuffix(".")
        port = parsed.port or _SCHEMES[scheme]
        literal = _literal(raw_host)
        if literal is not None:
            address = self._checked(literal, host, url=url)
            return CheckedTarget(url=url, scheme=scheme, host=host, port=port, address=address)
        try:
            answers = list(self.resolver(raw_host, port))
        except (OSError, UnicodeError) as exc:
            detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise UnsafeUrlError(f"{host} does not resolve ({detail})", source=url) from None
        if not answers:
            raise UnsafeUrlError(f"{host} resolves to no address", source=url)
        addresses: list[str] = []
        for answer in answers:
            try:
                resolved = ipaddress.ip_address(answer)
            except ValueError:
                message = f"{host} resolves to {answer!r}, which is not an IP address"
                raise UnsafeUrlError(message, source=url) from None
            if host in self._hosts:
                addresses.append(str(_normalized(resolved)))
            else:
                subject = f"{host} resolves to {answer}, which"
                addresses.append(self._checked((resolved, True), subject, url=url))
        return CheckedTarget(url=url, scheme=scheme, host=host, port=port, address=addresses[0])

    def _checked(self, literal: tuple[IPAddress, bool], subject: str, *, url: str) -> str:
        """The address of `literal` (IPv4-mapped ones as IPv4) if it may be reached;
        otherwise raises `UnsafeUrlError` saying that `subject` is not allowed, and why.

        `literal` is an address and whether `subject` spells it in its standard form.
        """
        address, standard = literal
        normalized = _normalized(address)
        if any(normalized in network for network in self._networks):
            return str(normalized)
        reason = _refusal(address)
        if reason is not None:
            spelled = subject if standard else f"{subject} is {address}, which"
            raise UnsafeUrlError(f"{spelled} {reason}", source=url)
        return str(normalized)

    def _refuse_unparsed(self, url: str) -> None:
        """For a URL httpx cannot parse: raise the address refusal if its host is a
        non-global numeric address (httpx rejects `0177.0.0.1`), the more useful reason."""
        try:
            host = urlsplit(url).hostname or ""
        except ValueError:
            return
        literal = _literal(host)
        if literal is not None:
            self._checked(literal, host, url=url)


def _allow_entry(entry: str) -> str | IPNetwork:
    """An allow-list entry as a host name (normalized as `CheckedTarget.host`) or a network."""
    text = entry.strip()
    literal = _literal(text.removeprefix("[").removesuffix("]"))
    if literal is not None:
        return ipaddress.ip_network(_normalized(literal[0]))
    if "/" in text:
        try:
            return ipaddress.ip_network(text, strict=False)
        except ValueError as exc:
            raise ConfigurationError(f"allow-list entry {entry!r}: {exc}") from None
    name = ""
    if text and not any(c in _NOT_IN_HOST_NAMES or c.isspace() for c in text):
        try:
            name = httpx.URL(f"http://{text}/").raw_host.decode("ascii").lower()
        except httpx.InvalidURL:
            name = ""
    name = name.removesuffix(".")
    if not name or any(c not in _HOST_NAME_CHARACTERS for c in name):
        raise ConfigurationError(
            f"allow-list entry {entry!r} is not a host name, an IP address or a network"
        )
    return name
