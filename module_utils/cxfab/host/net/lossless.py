"""Lossless RoCE on a host port: DSCP trust, PFC per priority, ECN per priority.

The plan is the `lossless` section of the host's structured config. Trust and PFC
go through the port's DCB back end (the same one the QoS plan uses):

- `mlnx_qos -i <if> --trust=dscp --pfc=0,0,0,1,0,0,0,0`; its printout carries
  `Priority trust state: dscp` and the `PFC configuration:` block
  (mlnx-tools python/mlnx_qos, pretty_print);
- iproute2 `dcb pfc set dev <if> prio-pfc 0:off .. 3:on ..` (read back with
  `dcb -j pfc show dev <if>`: `"prio_pfc": [false, .., true, ..]`), and DSCP trust
  as the kernel's DCB APP table (`dcb app replace dev <if> dscp-prio 0:0 .. 63:7`,
  the default map priority = DSCP / 8; mlx5 trusts DSCP once DSCP entries exist).

ECN has no netlink knob: MLNX_OFED's mlx5 exposes one file per protocol and
priority, `/sys/class/net/<if>/ecn/{roce_np,roce_rp}/enable/<prio>` (NVIDIA
MLNX_OFED documentation, "Explicit Congestion Notification"). A driver without
them (upstream mlx5, virtio) is reported by name, never passed as enabled.
"""

from __future__ import annotations

import json
import os
import re

NUM_PRIORITIES = 8
NUM_DSCP = 64
DSCP_PER_PRIORITY = 8
ECN_PROTOCOLS = ("roce_np", "roce_rp")
MEMLOCK_FILE = "/etc/security/limits.d/90-cxfab-rdma.conf"


class LosslessReadError(ValueError):
    """An output that does not say the port's trust or PFC state (named in the message)."""


def _head(text: str) -> str:
    return " | ".join(line.strip() for line in (text or "").strip().splitlines()[:3]) or "empty"


def expected_state(plan: dict) -> dict:
    return {"trust": plan["trust"], "pfc": [int(flag) for flag in plan["pfc"]]}


def differences(expected: dict, observed: dict) -> list[str]:
    found = []
    if observed.get("trust") != expected["trust"]:
        found.append(f"trust {observed.get('trust')!r} != {expected['trust']!r}")
    if observed.get("pfc") != expected["pfc"]:
        found.append(f"pfc {observed.get('pfc')} != {expected['pfc']}")
    return found


def profile_trust(structured: dict) -> dict[str, str]:
    """{port: trust} the roce profile asks for on ports the lossless section does not
    cover (there the QoS stage sets trust; nics[].runtime, intent/profiles.py)."""
    covered = set((structured.get("lossless") or {}).get("ports") or [])
    wanted = {}
    for nic in structured.get("nics") or []:
        runtime = nic.get("runtime") or {}
        for netdev in (runtime.get("dcqcn") or {}).get("netdevs") or []:
            if runtime.get("trust") and netdev not in covered:
                wanted[netdev] = runtime["trust"]
    return wanted


# ---------------------------------------------------------------- mlnx_qos

_TRUST = re.compile(r"^\s*Priority trust state:\s*(\S+)\s*$")
_PFC_ENABLED = re.compile(r"^\s*enabled\s+((?:[01]\s+){7}[01])\s*$")


def mlnx_qos_state(text: str, command: str = "mlnx_qos") -> dict:
    """Trust and PFC flags from `mlnx_qos -i <if>`; LosslessReadError when absent."""
    trust, pfc, in_pfc = None, None, False
    for line in (text or "").splitlines():
        match = _TRUST.match(line)
        if match:
            trust = match.group(1).lower()
            continue
        if line.strip() == "PFC configuration:":
            in_pfc = True
            continue
        match = _PFC_ENABLED.match(line)
        if in_pfc and match:
            pfc = [int(flag) for flag in match.group(1).split()]
            in_pfc = False
    if trust is None or pfc is None:
        missing = "trust state" if trust is None else "PFC enabled row"
        raise LosslessReadError(f"{command}: no {missing} in the output (began: {_head(text)})")
    return {"trust": trust, "pfc": pfc}


def mlnx_qos_args(plan: dict) -> list[str]:
    """Options appended to the port's one mlnx_qos call."""
    return [
        *mlnx_qos_trust_args(plan["trust"]),
        "--pfc=" + ",".join(str(int(f)) for f in plan["pfc"]),
    ]


def mlnx_qos_trust_args(trust: str) -> list[str]:
    """The trust option alone (the roce profile's trust on a port outside lossless)."""
    return [f"--trust={trust}"]


# ---------------------------------------------------------------- iproute2 dcb


def _json(text: str, command: str):
    try:
        return json.loads(text or "")
    except ValueError:
        raise LosslessReadError(f"{command}: not JSON (began: {_head(text)})") from None


def dcb_state(pfc_json: str, app_json: str) -> dict:
    """`dcb -j pfc show dev X` and `dcb -j app show dev X dscp-prio` -> trust and PFC."""
    pfc_doc = _json(pfc_json, "dcb -j pfc show")
    flags = pfc_doc.get("prio_pfc") if isinstance(pfc_doc, dict) else None
    if not isinstance(flags, list) or len(flags) != NUM_PRIORITIES:
        raise LosslessReadError(f"dcb -j pfc show: no prio_pfc array (began: {_head(pfc_json)})")
    app_doc = _json(app_json or "{}", "dcb -j app show")
    entries = app_doc.get("dscp_prio") if isinstance(app_doc, dict) else None
    return {"trust": "dscp" if entries else "pcp", "pfc": [int(bool(f)) for f in flags]}


def dcb_args(tool: str, port: str, plan: dict) -> list[list[str]]:
    pfc = [f"{p}:{'on' if flag else 'off'}" for p, flag in enumerate(plan["pfc"])]
    return [[tool, "pfc", "set", "dev", port, "prio-pfc", *pfc], *dcb_trust_args(tool, port, plan)]


def dcb_trust_args(tool: str, port: str, plan: dict) -> list[list[str]]:
    """DSCP trust as the DCB APP table (the default map); none for pcp, the default."""
    if plan["trust"] != "dscp":
        return []
    mapping = [f"{dscp}:{dscp // DSCP_PER_PRIORITY}" for dscp in range(NUM_DSCP)]
    return [[tool, "app", "replace", "dev", port, "dscp-prio", *mapping]]


# ---------------------------------------------------------------- ECN (sysfs)


def ecn_path(root: str, port: str, protocol: str, priority: int) -> str:
    return os.path.join(root, "sys/class/net", port, "ecn", protocol, "enable", str(priority))


def ecn_state(root: str, port: str, priorities: list[int]) -> dict[str, int | None]:
    """`<protocol>/<prio>` -> 0/1 as read, None when the driver has no such knob."""
    state: dict[str, int | None] = {}
    for protocol in ECN_PROTOCOLS:
        for priority in priorities:
            path = ecn_path(root, port, protocol, priority)
            try:
                with open(path, encoding="ascii") as handle:
                    text = handle.read().strip()
            except FileNotFoundError:
                state[f"{protocol}/{priority}"] = None
                continue
            if text not in ("0", "1"):
                raise LosslessReadError(f"{path}: expected 0 or 1, read {text!r}")
            state[f"{protocol}/{priority}"] = int(text)
    return state


def ecn_missing(port: str, state: dict[str, int | None]) -> list[str]:
    return [
        f"{port}: no ECN knob ecn/{knob.replace('/', '/enable/')} (the driver does not expose it)"
        for knob, value in state.items()
        if value is None
    ]


def ecn_to_enable(root: str, port: str, state: dict[str, int | None]) -> list[str]:
    """Paths of the knobs that exist and are off (agent.ecn_enable writes them)."""
    return [
        ecn_path(root, port, *knob.split("/"))
        for knob, value in sorted(state.items())
        if value == 0
    ]


# ---------------------------------------------------------------- memlock


def memlock_text(memlock_kb: int) -> str:
    """limits.d text letting every user pin the memory RDMA registers (0 = unlimited)."""
    value = "unlimited" if not memlock_kb else str(int(memlock_kb))
    return (
        "# Written by cxfab (cxfab_roce.memlock_kb): RDMA registers pinned memory.\n"
        f"*    soft    memlock    {value}\n"
        f"*    hard    memlock    {value}\n"
    )
