"""IPoIB limits shared by the data model, the rules and the host module.

The kernel's IPoIB driver (Documentation/infiniband/ipoib.rst): datagram mode sends
unreliable datagrams, so the interface MTU is the InfiniBand link MTU minus the
4-byte IPoIB encapsulation header (2044 on the common 2048-byte IB MTU); connected
mode uses reliable connections and allows up to IPOIB_CM_MTU, 65520.
"""

from __future__ import annotations

MODES = ("datagram", "connected")
IPOIB_HEADER_BYTES = 4
CONNECTED_MAX_MTU = 65520


def max_mtu(mode: str, ib_mtu: int) -> int:
    """Largest IPoIB MTU of `mode` on a partition whose IB link MTU is `ib_mtu`."""
    if mode == "connected":
        return CONNECTED_MAX_MTU
    return ib_mtu - IPOIB_HEADER_BYTES
