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


def refusal(url: str, allow_private: bool = False) -> str | None:
    """Why the service may not send to `url` (None when it may): its host resolves to an
    address that is not global (loopback, private, link-local, multicast, reserved,
    unspecified; an IPv4-mapped IPv6 address counts as its IPv4 one). A host that does
    not resolve now is not refused here: the delivery fails and is retried."""
    if allow_private:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return "the webhook URL cannot be parsed"
    if not host:
        return "the webhook URL has no host"
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    for _family, _type, _proto, _name, sockaddr in found:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if not address.is_global or address.is_multicast:
            return (
                f"the webhook's host {host} is {address}, {_kind(address)} address: the service sends only to "
                f"public addresses unless its operator sets {ALLOW_SETTING}"
            )
    return None
