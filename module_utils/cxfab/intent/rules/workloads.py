"""Rules on cxfab_workloads: the host pairs the verification runs between."""

from __future__ import annotations

from collections.abc import Iterator

from . import FabricView, Finding, rule
from .hosts import host_vlan_ids


@rule("workload-hosts-exist")
def workload_hosts_exist(view: FabricView) -> Iterator[Finding]:
    """Workload client and server are hosts of the fabric."""
    for w, pair in enumerate(view.workloads["pairs"]):
        for role in ("client", "server"):
            if pair[role] not in view.hosts and not view.was_dropped("host", pair[role]):
                yield (
                    ("workloads", "pairs", w, role),
                    f"{pair[role]} is not a host of group 'hosts' with cxfab_host",
                )


@rule("workload-client-not-server")
def workload_client_not_server(view: FabricView) -> Iterator[Finding]:
    """A workload's client and server are different hosts."""
    for w, pair in enumerate(view.workloads["pairs"]):
        if pair["client"] == pair["server"]:
            yield (
                ("workloads", "pairs", w, "server"),
                f"{pair['server']} is also the client; a pair needs two hosts",
            )


@rule("workload-vlan-on-both")
def workload_vlan_on_both(view: FabricView) -> Iterator[Finding]:
    """A workload's VLAN is configured, with an address, on both hosts."""
    for w, pair in enumerate(view.workloads["pairs"]):
        for role in ("client", "server"):
            host = view.hosts.get(pair[role])
            if host is None:
                continue
            addressed = {vlan["id"] for vlan in host["vlans"] if "address" in vlan}
            untagged = host_vlan_ids(view, host)
            addressed |= {vid for vid, path in untagged.items() if path == ("bond", "address")}
            if pair["vlan"] not in addressed:
                yield (
                    ("workloads", "pairs", w, "vlan"),
                    f"VLAN {pair['vlan']} has no address on {role} {pair[role]}",
                )


@rule("workload-rdma-device")
def workload_rdma_device(view: FabricView) -> Iterator[Finding]:
    """With transport rdma, both hosts of every pair have a ConnectX adapter or an RDMA device."""
    if "rdma" not in view.workloads["transports"]:
        return
    for w, pair in enumerate(view.workloads["pairs"]):
        for role in ("client", "server"):
            host = view.hosts.get(pair[role])
            if host is None:
                continue
            if not host["nics"] and not host.get("rdma", {}).get("devices"):
                yield (
                    ("workloads", "pairs", w, role),
                    f"transport rdma needs an RDMA device on {pair[role]} "
                    "(cxfab_host.nics or cxfab_host.rdma.devices)",
                )
