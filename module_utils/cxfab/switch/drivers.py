"""Which driver speaks to a switch: the pair's `platform` (its structured config's).

The deploy and the health modules build their drivers here, so both read a pair the
same way: Onyx over SSH (known_hosts), Cumulus Linux over the NVUE REST API with the
switch's TLS certificate checked against `tls_ca` and/or its pinned SHA-256
(`tls_fingerprints`, by switch name). The transaction and the pair health gate never
import this module (the switch-seam contract): they take drivers, whatever their OS.
"""

from __future__ import annotations

from .nvue.driver import NvueDriver
from .nvue.transport import Trust
from .onyx.driver import OnyxDriver

# The driver of each switch platform (the fabric's `switch_pairs[].platform`).
DRIVERS = {"onyx": OnyxDriver, "cumulus": NvueDriver}

# The modules' TLS options (Cumulus only; doc fragment cxfab_switch_tls).
TLS_OPTIONS = {
    "tls_ca": {"type": "path"},
    "tls_fingerprints": {"type": "dict", "default": {}},
}


class UnknownPlatform(ValueError):
    pass


def driver_class(platform: str):
    """The driver class of `platform`, or UnknownPlatform naming the known ones."""
    found = DRIVERS.get(platform)
    if found is None:
        raise UnknownPlatform(
            f"platform {platform!r}: no switch driver for it (known: {sorted(DRIVERS)})"
        )
    return found


def make(cls, name: str, structured: dict, params: dict, **nvue):
    """One switch's driver; `params` holds the TLS options (a Cumulus switch's trust),
    `nvue` the NVUE driver's own keywords (confirm_seconds)."""
    if cls is not NvueDriver:
        return cls(name, structured)
    fingerprint = (params.get("tls_fingerprints") or {}).get(name)
    return NvueDriver(name, structured, Trust(ca_file=params.get("tls_ca"),
                                              fingerprint=fingerprint), **nvue)  # fmt: skip
