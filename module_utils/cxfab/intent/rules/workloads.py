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
                reason = f"VLAN {pair['vlan']} has no address on {role} {pair[role]}"
                yield ("workloads", "pairs", w, "vlan"), reason


@rule("workload-rdma-device")
def workload_rdma_device(view: FabricView) -> Iterator[Finding]:
    """With transport rdma, both hosts of every pair (every host with plan generated) have a
    ConnectX adapter or an RDMA device."""
    if "rdma" not in view.workloads["transports"]:
        return
    if view.workloads.get("plan") == "generated":
        # The generated plan tests every host over RDMA.
        for name, host in sorted(view.hosts.items()):
            if not host["nics"] and not host.get("rdma", {}).get("devices"):
                yield (
                    ("workloads", "plan"),
                    f"transport rdma with plan generated needs an RDMA device on every host;"
                    f" {name} has none (cxfab_host.nics or cxfab_host.rdma.devices)",
                )
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


def ring_round_count(hosts: int) -> int:
    """Rounds of the ring the generated plan always starts with (each host with its two
    neighbours): workloads/fleet_plan.ring_rounds, counted here because the intent may
    not import the workloads room (a unit test holds the two equal)."""
    if hosts < 2:
        return 0
    return 2 if hosts % 2 == 0 else 3


@rule("workload-fleet-budget")
def workload_fleet_budget(view: FabricView) -> Iterator[Finding]:
    """A generated plan has two hosts at least and a budget that holds the ring's rounds."""
    if view.workloads.get("plan") != "generated":
        return
    fleet = view.workloads["fleet"]
    count = len(view.hosts)
    if count < 2:
        yield (("workloads", "plan"), f"a generated plan needs two hosts at least, not {count}")
        return
    rounds = ring_round_count(count)
    needed = rounds * fleet["test_s"]
    if fleet["budget_s"] < needed:
        # The ring is the least plan (every host tested twice): below it the budget
        # could not hold the tests that name a slow node, so it is refused here.
        yield (
            ("workloads", "fleet", "budget_s"),
            f"{fleet['budget_s']} s is too small: the ring of {count} hosts takes"
            f" {rounds} round(s) of {fleet['test_s']} s (workloads.fleet.test_s);"
            f" it needs at least {needed} s",
        )


@rule("workload-fleet-vlan")
def workload_fleet_vlan(view: FabricView) -> Iterator[Finding]:
    """A generated plan's `fleet.vlan` is a tagged VLAN with an address on every host."""
    if view.workloads.get("plan") != "generated":
        return
    vlan = view.workloads["fleet"].get("vlan")
    if vlan is None:
        return
    for name, host in sorted(view.hosts.items()):
        if vlan not in {v["id"] for v in host["vlans"] if "address" in v}:
            yield (
                ("workloads", "fleet", "vlan"),
                f"VLAN {vlan} has no address on {name}: every host of the plan must carry it",
            )
