"""Read the InfiniBand ports of a host: `ibstat` per port, IPoIB mode and MTU from sysfs.

The RDMA device and IB port of an adapter port are found as the host network module
finds them (hostnet.ipoib.rdma_port: the device on the port's PCI function). Every
reading is either a value or an `error` carrying the command and what it printed:
nothing is guessed, and the checks fail on an error.
"""

from __future__ import annotations

from ..net import ipoib
from .ibstat import IbstatParseError, port_of


def ib_ports(structured: dict) -> list[tuple[dict, dict]]:
    """(nic, port) of every port with link_type ib in the structured config."""
    return [
        (nic, port)
        for nic in structured.get("nics") or []
        for port in nic.get("ports") or []
        if port.get("link_type") == "ib"
    ]


def read_port(runner, ibstat: str | None, root: str, nic: dict, port: dict) -> dict:
    """{device, ib_port, port: {...ibstat fields}} or {error} for one adapter port."""
    try:
        device, ib_port = ipoib.rdma_port(root, nic["pci"], port["port"])
    except ipoib.IpoibError as exc:
        return {"error": str(exc)}
    where = {"device": device, "ib_port": ib_port}
    if not ibstat:
        return {**where, "error": "ibstat is not installed (package infiniband-diags)"}
    argv = [ibstat, device, str(ib_port)]
    rc, out, err = runner(argv)
    command = " ".join(argv)
    if rc != 0:
        return {**where, "error": f"{command} failed (rc={rc}): {(err or out).strip()[:300]}"}
    try:
        return {**where, "port": port_of(out, device, ib_port).as_dict()}
    except IbstatParseError as exc:
        return {**where, "error": f"{command}: {exc}"}


def gather(structured: dict, runner, ibstat: str | None, root: str) -> dict:
    """{ports: {netdev: reading}, ipoib: {name: {mode, mtu} | {error}}}."""
    ports = {
        port["netdev"]: read_port(runner, ibstat, root, nic, port)
        for nic, port in ib_ports(structured)
    }
    interfaces = {}
    for interface in structured.get("ipoib") or []:
        try:
            interfaces[interface["name"]] = ipoib.read_state(root, interface["name"])
        except ipoib.IpoibError as exc:
            interfaces[interface["name"]] = {"error": str(exc)}
    return {"ports": ports, "ipoib": interfaces}
