"""Where a webhook may send: public addresses only, unless the operator allows private ones.

A webhook is set by an org's writer (PUT /orgs/{org}/webhook) and POSTed to by the
service. Pointing it at 127.0.0.1, 169.254.169.254 (a cloud's metadata service) or a
database on the service's private network would let any org writer make the service
send requests there (server-side request forgery): blind POSTs, but to places no
tenant may reach. So a webhook's host must resolve to global addresses only, checked
when it is set and again before each delivery (a name can resolve elsewhere later).
An operator whose receivers live on a private network sets
CONTEXTS_WEBHOOK_ALLOW_PRIVATE=1 (docs/owners.md).

The check resolves the name, then httpx resolves it again to connect: a DNS server
that answers differently within that moment is not stopped by it (an egress proxy or
firewall is the complete answer, and docs/owners.md says so).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from urllib.parse import urlsplit

ALLOW_SETTING = "CONTEXTS_WEBHOOK_ALLOW_PRIVATE=1"


def _kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    for name, flag in (
        ("a loopback", address.is_loopback),
        ("an unspecified", address.is_unspecified),
        ("a link-local", address.is_link_local),
        ("a multicast", address.is_multicast),
        ("a private", address.is_private),
        ("a reserved", address.is_reserved),
    ):
        if flag:
            return name
    return "a non-public"


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
"""NAT64's well-known prefix (RFC 6052): a gateway sends to the IPv4 address in its last
32 bits. Python 3.11 counts the prefix as global, whatever address it carries."""
LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
"""NAT64 prefixes of a local network (RFC 8215): never public."""
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
"""Deprecated IPv4-compatible addresses (::a.b.c.d)."""
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
"""A DNS label in ASCII (RFC 1123): letters, digits and inner hyphens."""


def url_problem(url: str) -> str | None:
    """What makes `url` no webhook whichever addresses are allowed, or None: a port out
    of 1 to 65535, a host that is no DNS name, IPv4 or IPv6 address (an empty label, a
    backslash, percent-encoding, a zone id, punycode that decodes to nothing)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"the webhook URL cannot be read: {exc}"
    host = parts.hostname
    if not host:
        return "the webhook URL has no host"
    if port == 0:
        return "the webhook URL's port is 0: give one from 1 to 65535"
    if "%" in host:
        return "the webhook's host holds '%': percent-encoding and zone ids are not hosts to send to"
    if "[" in parts.netloc:
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return f"the webhook's host [{host}] is not an IPv6 address"
        return None
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        return f"the webhook's host {ascii(host)} is not a DNS name"
    name = ascii_host.removesuffix(".")
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        return f"the webhook's host {ascii(host)} is not a DNS name (labels of 1 to 63 letters, digits, inner hyphens)"
    for label in labels:
        if label.startswith("xn--"):
            try:
                label.encode("ascii").decode("idna")
            except UnicodeError:
                return f"the webhook's host {ascii(host)} holds punycode that decodes to no name ({label})"
    return None


def _carried_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, where a translator or tunnel would send to it:
    IPv4-mapped, NAT64, 6to4, Teredo's client, IPv4-compatible."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in NAT64 or (address in IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _non_public(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address that makes `address` no public target, the IPv4 address it carries
    first (the more telling one: ::ffff:127.0.0.1 is a loopback address), then itself;
    None when both are public."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = _carried_ipv4(address)
        if carried is not None and _non_public(carried) is not None:
            return carried
        if address in LOCAL_NAT64:
            return address
    if not address.is_global or address.is_multicast:
        return address
    return None


def refusal(url: str, allow_private: bool = False) -> str | None:
    """Why the service may not send to `url` (None when it may): its host resolves to an
    address that is not global (loopback, private, link-local, multicast, reserved,
    unspecified; an IPv6 address that carries an IPv4 one, as NAT64, 6to4 or an
    IPv4-mapped address do, counts as both), or it is no URL to send to (url_problem,
    whatever is allowed). A host that does not resolve now is not refused here: the
    delivery fails and is retried."""
    problem = url_problem(url)
    if problem is not None or allow_private:
        return problem
    host = urlsplit(url).hostname
    assert host is not None  # url_problem refused a URL without one
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    for _family, _type, _proto, _name, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        refused = _non_public(address)
        if refused is not None:
            shown = f"{address}, which carries {refused}," if refused != address else f"{address},"
            return (
                f"the webhook's host {host} is {shown} {_kind(refused)} address: the service sends only to "
                f"public addresses unless its operator sets {ALLOW_SETTING}"
            )
    return None
