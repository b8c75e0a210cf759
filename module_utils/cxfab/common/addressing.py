"""Normalisation of the values Onyx prints in more than one way.

Every comparison between intent and a switch goes through these functions, so
`12.0.10.252 255.255.255.0`, `12.0.10.252/24` and `12.0.10.252 /24` are equal,
MAC addresses compare case-insensitively and `1/7-1/8` means two ports.
"""

from __future__ import annotations

import ipaddress
import re

_NATURAL_CHUNK = re.compile(r"(\d+)")
_MAC = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")
_PORT = re.compile(r"^(?:eth)?(\d+)/(\d+)(?:/(\d+))?$", re.IGNORECASE)


class AddressError(ValueError):
    """A value that is not the address, mask, port or range it should be."""


def natural_key(value) -> tuple:
    """Sort key where `1/10` comes after `1/9` and `vlan 100` after `vlan 20`."""
    parts = _NATURAL_CHUNK.split(str(value))
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p != "")


def natural_sorted(values) -> list:
    return sorted(values, key=natural_key)


def prefix_length(mask_or_len: str) -> int:
    """`/24`, `24` or `255.255.255.0` -> 24."""
    text = mask_or_len.strip().lstrip("/")
    if text.isdigit():
        length = int(text)
        if not 0 <= length <= 32:
            raise AddressError(f"prefix length {text} is not between 0 and 32")
        return length
    try:
        return ipaddress.IPv4Network(f"0.0.0.0/{text}").prefixlen
    except ValueError as exc:
        raise AddressError(f"{mask_or_len!r} is neither a prefix length nor a netmask") from exc


def interface_address(address: str, mask: str | None = None) -> str:
    """Canonical `a.b.c.d/len` from `a.b.c.d/len`, `a.b.c.d /len` or `a.b.c.d <netmask>`."""
    text = address.strip()
    if mask is None and "/" in text:
        text, mask = text.split("/", 1)
    if mask is None:
        raise AddressError(f"{address!r} has no prefix length or netmask")
    try:
        ip = ipaddress.IPv4Address(text.strip())
    except ValueError as exc:
        raise AddressError(f"{text!r} is not an IPv4 address") from exc
    return f"{ip}/{prefix_length(mask)}"


def split_address(cidr: str) -> tuple[str, int]:
    """`a.b.c.d/len` -> ("a.b.c.d", len)."""
    address, length = interface_address(cidr).split("/")
    return address, int(length)


def host_address(address: str) -> str:
    try:
        return str(ipaddress.IPv4Address(address.strip()))
    except ValueError as exc:
        raise AddressError(f"{address!r} is not an IPv4 address") from exc


def same_subnet(cidr: str, host: str) -> bool:
    try:
        return ipaddress.IPv4Address(host) in ipaddress.IPv4Interface(cidr).network
    except ValueError:
        return False


def mac(value: str) -> str:
    """Upper-case MAC without a trailing ` [Mismatched]` or similar marker."""
    text = value.strip().split()[0] if value.strip() else ""
    if not _MAC.match(text):
        raise AddressError(f"{value!r} is not a MAC address")
    return text.upper()


def port(value: str) -> str:
    """`Eth1/7`, `eth1/7` or `1/7` -> `1/7` (split ports keep their third number)."""
    match = _PORT.match(value.strip())
    if not match:
        raise AddressError(f"{value!r} is not an Onyx port name such as 1/7")
    return "/".join(g for g in match.groups() if g is not None)


def expand_ports(text: str) -> list[str]:
    """`1/7-1/8`, `1/7-8`, `1/1,1/3` -> ['1/7', '1/8'] ... (what running-config compresses)."""
    ports: list[str] = []
    for chunk in text.split(","):
        chunk = chunk.strip()
        if "-" not in chunk:
            ports.append(port(chunk))
            continue
        first, last = (c.strip() for c in chunk.split("-", 1))
        first = port(first)
        head, start = first.rsplit("/", 1)
        end = port(last).rsplit("/", 1)[1] if "/" in last else last
        if not end.isdigit() or int(end) < int(start):
            raise AddressError(f"{text!r} is not a valid port range")
        ports.extend(f"{head}/{n}" for n in range(int(start), int(end) + 1))
    return ports


def expand_ids(text: str) -> list[int]:
    """`1-3,7` -> [1, 2, 3, 7] (VLAN and port-channel ranges)."""
    ids: list[int] = []
    for chunk in text.split(","):
        chunk = chunk.strip()
        if not chunk:
            continue
        if "-" in chunk:
            low, high = chunk.split("-", 1)
            if not (low.strip().isdigit() and high.strip().isdigit()):
                raise AddressError(f"{text!r} is not a list of numbers and ranges")
            ids.extend(range(int(low), int(high) + 1))
        elif chunk.isdigit():
            ids.append(int(chunk))
        else:
            raise AddressError(f"{text!r} is not a list of numbers and ranges")
    return ids


def unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def quote(text: str) -> str:
    """Quote a CLI word list when it holds whitespace (descriptions, names)."""
    return f'"{text}"' if re.search(r"\s", text) else text
