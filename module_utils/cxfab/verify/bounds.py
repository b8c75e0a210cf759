"""Verify cannot shrink: the checks intent expects, what the run did not measure, waivers.

After every section made its checks (checks.all_checks), three rules bound them:

1. `expected_checks`: from the structured config, the checks that must appear for
   every device of the sections that ran (a host's links and their speed and LLDP
   neighbour, MTUs and the path-MTU probes, bond, IRQs, RDMA devices, egress maps,
   QoS, lossless and its GIDs, InfiniBand ports, firmware and health; a switch's
   health; a workload pair's performance). One that the run did not produce fails:
   "not measured: <why>", the why being the target's own failure that explains it
   (host unreachable, facts not read, no workload result) when there is one.
2. `bound_skips`: a skip is only "not applicable by intent". A skip whose reason is a
   missing or mistyped tool, an unreachable host or a start snapshot not taken fails
   "not measured" instead.
3. `apply_waivers`: a failure or warning the inventory waives (`verify_waive`: a list
   of {id (a glob), target (optional glob), reason}) becomes `waived`, reason shown.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from ..common.checks import NOT_MEASURED, unmeasured
from ..host.net.lossless import profile_trust
from .readings import data_ports, tool_missing

# Checks whose failure explains why a target's other checks are missing.
_CAUSES = (
    "host.data",
    "host.facts",
    "ib.read",
    "health.read",
    "qos.measure",
    "perf.results",
    "switch.health",
)
# Skip reasons that are a measurement that did not happen, never "not applicable".
_UNMEASURED_WORDS = ("unreachable", "start snapshot", "was it taken", "no mget_temp")
WAIVER_KEYS = ("id", "target", "reason")


class WaiverError(ValueError):
    """`verify_waive` does not have the documented shape."""


def validate_waivers(waive) -> list[dict]:
    """[{id, target?, reason}] with non-empty strings, or WaiverError naming the entry."""
    if waive is None:
        return []
    if not isinstance(waive, list):
        raise WaiverError("verify_waive: must be a list of {id, target (optional), reason}")
    out = []
    for index, entry in enumerate(waive):
        where = f"verify_waive[{index}]"
        if not isinstance(entry, dict):
            raise WaiverError(f"{where}: must be a mapping {{id, target (optional), reason}}")
        unknown = sorted(set(entry) - set(WAIVER_KEYS))
        if unknown:
            raise WaiverError(f"{where}: unknown key {', '.join(map(str, unknown))}")
        for key in ("id", "reason") + (("target",) if "target" in entry else ()):
            value = entry.get(key)
            if not isinstance(value, str) or not value.strip():
                raise WaiverError(f"{where}: {key} must be a non-empty string")
        out.append({"id": entry["id"], "target": entry.get("target"), "reason": entry["reason"]})
    return out


def apply_waivers(checks: list[dict], waivers: list[dict]) -> list[dict]:
    """Failures and warnings matched by a waiver become `waived`, naming the reason."""
    out = []
    for one in checks:
        match = next(
            (
                w
                for w in waivers
                if one["status"] in ("fail", "warn")
                and fnmatchcase(str(one["id"]), w["id"])
                and (w["target"] is None or fnmatchcase(str(one["target"]), w["target"]))
            ),
            None,
        )
        if match is None:
            out.append(one)
            continue
        message = f"waived: {match['reason']} (was {one['status']}: {one.get('message', '')})"
        out.append({**one, "status": "waived", "message": message})
    return out


def bound_skips(checks: list[dict]) -> list[dict]:
    """A skip that is a measurement that did not happen fails "not measured"."""
    out = []
    for one in checks:
        reason = str(one.get("message", ""))
        words = reason.lower()
        if one["status"] == "skip" and (
            tool_missing(reason) or any(w in words for w in _UNMEASURED_WORDS)
        ):
            out.append(unmeasured(one["id"], one["target"], one["expected"], reason))
        else:
            out.append(one)
    return out


# ---------------------------------------------------------------- what intent expects


def _cabling_ids(port: dict) -> list[tuple[str, str]]:
    """The cabling check of a data port the intent cables to a switch port."""
    return (
        [(f"link.{port['netdev']}.neighbour", "LLDP neighbour (cabling)")]
        if port.get("peer")
        else []
    )


def _host_ids(sc: dict) -> list[tuple[str, str]]:
    """(id or glob, what) of the host section's checks the intent implies."""
    ids = []
    network = sc.get("network") or {}
    bond = network.get("bond")
    for port in data_ports(sc):
        dev = port["netdev"]
        if port.get("link_type", "eth") == "eth":
            ids += [(f"link.{dev}.up", "link state"), (f"link.{dev}.speed", "link speed")]
        else:
            ids.append((f"ib.{dev}.state", "InfiniBand port state"))
        ids += _cabling_ids(port)
    # The DF pings at each VLAN's MTU the structured config plans (peers and gateways).
    ids += [(probe["id"], "path MTU probe") for probe in sc.get("probes") or []]
    mtus = [bond["name"]] if bond else []
    mtus += [i["name"] for i in (network.get("members") or []) + (network.get("vlans") or [])]
    ids += [(f"mtu.{name}", "MTU") for name in mtus]
    if bond:
        ids.append((f"bond.{bond['name']}.mode", "bond mode"))
        ids += [(f"bond.{bond['name']}.{m}", "bond member") for m in bond["members"]]
    settings = sc.get("irq") or {}
    irq_ports = settings.get("interfaces") or (
        bond["members"] if bond else [p["netdev"] for p in data_ports(sc)]
    )
    ids += [(f"irq.{dev}", "IRQ affinity") for dev in irq_ports]
    ids += [
        (f"rdma.{d['name']}.state", "RDMA device")
        for d in (sc.get("rdma") or {}).get("devices") or []
    ]
    ids += [
        (f"qos.egress.{v['name']}", "VLAN egress map")
        for v in network.get("vlans") or []
        if v.get("egress_qos_map") is not None
    ]
    if bond or network.get("vlans") or sc.get("ipoib"):
        ids.append(("network.config", "network drift"))
    if sc.get("qos") is not None:
        ids.append(("qos.readback.*", "QoS read-back"))
    lossless = sc.get("lossless")
    if lossless:
        for port in lossless["ports"]:
            ids += [(f"{kind}.{port}", "lossless RoCE") for kind in ("trust", "pfc", "ecn")]
        roce_vlans = set(lossless["roce"]["vlans"])
        ids += [
            (f"roce.gid.{v['name']}", "RoCE GID")
            for v in network.get("vlans") or []
            if v["id"] in roce_vlans
        ]
        ids.append(("roce.memlock", "RoCE memlock limit"))
    for nic in sc.get("nics") or []:
        if nic.get("firmware"):
            ids.append((f"firmware.{nic['name']}.version", "firmware"))
        for port in nic.get("ports") or []:
            if port.get("link_type"):
                ids.append((f"link_type.{nic['name']}.p{port['port']}", "port protocol"))
        for netdev in (nic.get("runtime") or {}).get("sriov_numvfs") or {}:
            ids.append((f"sriov.{netdev}.vfs", "SR-IOV VFs"))
        for netdev in ((nic.get("runtime") or {}).get("dcqcn") or {}).get("netdevs") or []:
            ids.append((f"dcqcn.{netdev}", "DCQCN"))
    ids += [(f"trust.{port}", "trust") for port in sorted(profile_trust(sc))]
    gpudirect = sc.get("gpudirect")
    if gpudirect:
        ids.append(("gpudirect.peer_memory", "GPUDirect peer memory"))
        for pair in gpudirect["pairs"]:
            ids += [
                (f"gpudirect.{pair['gpu']}.{part}", "GPUDirect") for part in ("topology", "acs")
            ]
    return ids


def _health_ids(sc: dict) -> list[tuple[str, str]]:
    ids = []
    for nic in sc.get("nics") or []:
        ids += [(f"pcie.{nic['name']}.link", "PCIe link"), (f"temp.{nic['name']}", "temperature")]
        for port in nic.get("ports") or []:
            dev = port["netdev"]
            ids += [(f"link.{dev}.diag", "link diagnosis"), (f"flap.{dev}", "link flaps")]
            ids.append((f"counters.{dev}", "error counters"))
    lossless = sc.get("lossless")
    ids += [
        (f"pfc.{p}.counters", "RoCE priority counters") for p in (lossless or {}).get("ports", [])
    ]
    return ids


def _perf_ids(workloads: dict) -> list[tuple[str, str]]:
    transports = workloads.get("transports") or ("tcp", "rdma", "shm")
    ids = [("perf.link_fraction", "ib_write_bw against the link")]
    if "rdma" in transports:
        ids.append(("perf.rdma_vs_ib_write_bw.*", "pingpong over RDMA vs ib_write_bw"))
    if "tcp" in transports:
        ids.append(("perf.tcp_vs_iperf3", "pingpong over TCP vs iperf3"))
    return ids


def expected_checks(structured, hosts, workloads, switches, sections, health_ran) -> list:
    """[(id or glob, target, what)] every device of the sections that ran must produce."""
    out = []
    for name in sorted(hosts or {}):
        sc = structured[name] or {}
        if "hosts" in sections:
            out += [(i, name, what) for i, what in _host_ids(sc)]
        elif "cabling" in sections:
            out += [(i, name, what) for p in data_ports(sc) for i, what in _cabling_ids(p)]
        if health_ran and "health" in sections:
            out += [(i, name, what) for i, what in _health_ids(sc)]
        if "qos" in sections and sc.get("qos_measure"):
            for target in sc["qos_measure"]["targets"]:
                out.append((f"qos.vlan{target['vlan']}.throughput", name, "per-VLAN throughput"))
    if "perf" in sections:
        for pair in (workloads or {}).get("pairs") or []:
            out += [(i, pair["name"], what) for i, what in _perf_ids(workloads)]
        if (workloads or {}).get("plan") == "generated":
            # The fleet's plan: its verdict, its time, and every host of it.
            out += [(f"perf.fleet.{k}", "fleet", f"fleet {k}") for k in ("fabric", "budget")]
            out += [(f"perf.fleet.node.{h}", h, "fleet pairs") for h in sorted(hosts or {})]
    if "switches" in sections:
        out += [("*", name, "switch health") for name in switches or []]
    return out


def _concrete(pattern: str, what: str) -> str:
    """The id a missing check is reported under (`perf.rdma_vs_ib_write_bw.*` -> without .*)."""
    if pattern == "*":
        return "switch.health" if what == "switch health" else "check"
    return pattern[:-2] if pattern.endswith(".*") else pattern


def missing_checks(checks: list[dict], expected: list) -> list[dict]:
    """A failed "not measured" check for each expected one the run did not produce."""
    by_target: dict[str, list[dict]] = {}
    for one in checks:
        by_target.setdefault(str(one["target"]), []).append(one)
    out, seen = [], set()
    for pattern, target, what in expected:
        present = by_target.get(target) or []
        if any(fnmatchcase(str(c["id"]), pattern) for c in present):
            continue
        check_id = _concrete(pattern, what)
        if (check_id, target) in seen or any(c["id"] == check_id for c in present):
            continue
        seen.add((check_id, target))
        cause = next(
            (c for c in present if c["id"] in _CAUSES and c["status"] == "fail"),
            None,
        )
        why = (
            f"{cause['id']} failed: {cause['observed']}"
            + (f" ({cause['message']})" if cause.get("message") else "")
            if cause
            else f"the intent expects {what} and this run produced no result for it"
        )
        out.append(unmeasured(check_id, target, what, why))
    return out


def run_fails(summary: dict) -> bool:
    """A run fails on any failure and any warning (inconclusive is not a pass)."""
    return int(summary.get("failed", 0)) + int(summary.get("warned", 0)) > 0


__all__ = [
    "NOT_MEASURED",
    "WaiverError",
    "apply_waivers",
    "bound_skips",
    "expected_checks",
    "missing_checks",
    "run_fails",
    "validate_waivers",
]
