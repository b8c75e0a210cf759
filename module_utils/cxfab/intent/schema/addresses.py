"""One canonical form for every address the inventory names.

`inet_aton` (and so ssh, ping and most resolvers) reads `010.0.0.1` as 8.0.0.1,
`127.1` and `2130706433` as 127.0.0.1 and `0x7f.0.0.1` as 127.0.0.1; a DNS
name's last label is never numeric (RFC 3696). So a value whose last label is
numeric is an IPv4 address and must be written canonically. Names are resolved
once per validation (bounded in time) so that two spellings of one address
(`localhost`, `127.0.0.1`) are compared as the addresses they reach.
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import re
import socket
from functools import lru_cache

_NUMERIC_LABEL = re.compile(r"^(?:0[xX][0-9A-Fa-f]*|[0-9]+)$")
RESOLVE_SECONDS = 3.0


def canonical_ip(text: str) -> str | None:
    """`text` when it is an IP address in canonical form, else None."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    return str(address) if str(address) == text else None


def numeric_reading(text: str) -> str | None:
    """For a non-canonical IPv4 spelling, the address it reads as ('' when none);
    None when `text` is a canonical address or could be a DNS name."""
    if canonical_ip(text) is not None or not isinstance(text, str):
        return None
    if not _NUMERIC_LABEL.fullmatch(text.rstrip(".").rsplit(".", 1)[-1] or "x"):
        return None
    try:
        return socket.inet_ntoa(socket.inet_aton(text))
    except (OSError, ValueError):
        return ""


def reading_hint(text: str) -> str:
    """The part of an error message that says what a numeric spelling reads as."""
    reading = numeric_reading(text)
    if reading:
        return f" (it reads as {reading}: write {reading}; a DNS name's last label is not numeric)"
    if reading == "":
        return " (a DNS name's last label is not numeric)"
    return ""


@lru_cache(maxsize=4096)
def resolve(host: str) -> frozenset[str]:
    """The addresses `host` reaches: itself when canonical, else what the resolver says
    within RESOLVE_SECONDS (empty when it cannot be resolved)."""
    address = canonical_ip(host)
    if address is not None:
        return frozenset({address})
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        infos = pool.submit(socket.getaddrinfo, host, None).result(timeout=RESOLVE_SECONDS)
    except (OSError, UnicodeError, ValueError, concurrent.futures.TimeoutError):
        return frozenset()
    finally:
        pool.shutdown(wait=False)
    return frozenset(str(ipaddress.ip_address(info[4][0].split("%")[0])) for info in infos)


def same_place(first: str, second: str) -> bool:
    """Two spellings that reach one address (or are the same name)."""
    if first.lower() == second.lower():
        return True
    return bool(resolve(first) & resolve(second))
