"""The NIC runtime stage: what the NIC profiles set on a running host, persistently.

Per adapter the structured config carries `nics[].runtime` (intent/profiles.py):

- `sriov_numvfs: {<pf netdev>: <count>}` (profile sriov): the VFs, through
  `sriov_numvfs` (net/sriov.py: 0 first between two nonzero counts; a count above
  `sriov_totalvfs` refused before anything is written);
- `dcqcn: {netdevs, priorities}` (profile roce): the mlx5 ECN knobs
  `ecn/roce_np/enable/<prio>` and `ecn/roce_rp/enable/<prio>`, through the same code
  the lossless QoS stage enables its priority with (stages/qos.apply_ecn);
- `trust` (profile roce) on its ports outside the lossless section (whose trust the
  QoS stage sets): through the QoS stage's DCB back end (`mlnx_qos --trust`, or the
  `dcb app` DSCP table); a port without DCB fails.

Each is read, changed only where it differs, and read back; the host agent
(net/agent.py, section `nic_runtime`) re-creates the VFs at boot and re-enables the
knobs and the trust at boot and link-up. Max Read Request is not set
(docs/firmware.md says why).

The module cxfab_nic_runtime runs it.
"""

from __future__ import annotations

import os

from ..net import agent, sriov
from ..net.lossless import LosslessReadError, profile_trust
from .qos import Runner, apply_ecn, choose_backend

ARGUMENT_SPEC = {
    "structured": {"type": "dict", "required": True},
    "root": {"type": "path", "default": "/"},
    "persist": {"type": "bool", "default": True},
    "backend": {"type": "str", "default": "auto", "choices": ["auto", "mlnx_qos", "dcb"]},
    "mlnx_qos_path": {"type": "str", "default": "mlnx_qos"},
}


def wanted(structured: dict) -> tuple[dict[str, int], dict[str, list[int]]]:
    """({pf netdev: VF count}, {netdev: DCQCN priorities}) of every adapter's runtime."""
    vfs: dict[str, int] = {}
    dcqcn: dict[str, list[int]] = {}
    for nic in structured.get("nics") or []:
        runtime = nic.get("runtime") or {}
        vfs.update(runtime.get("sriov_numvfs") or {})
        section = runtime.get("dcqcn") or {}
        for netdev in section.get("netdevs") or []:
            dcqcn[netdev] = sorted(set(dcqcn.get(netdev, [])) | set(section["priorities"]))
    return vfs, dcqcn


def _vfs(module, root: str, counts: dict[str, int]) -> tuple[dict, dict, bool]:
    """Plan, write and read back the VF counts; (before, after, changed)."""
    try:
        planned = sriov.plan(root, counts)
    except sriov.SriovError as exc:
        module.fail_json(msg=f"sriov: {exc}", path="nics[].profiles.sriov.num_vfs")
    before = {netdev: entry["before"] for netdev, entry in planned.items()}
    changed = any(entry["steps"] for entry in planned.values())
    if module.check_mode:
        return before, dict(counts), changed
    for netdev, entry in planned.items():
        try:
            sriov.write(root, netdev, entry["steps"])
        except sriov.SriovError as exc:
            module.fail_json(msg=f"sriov: {exc}", changed=True)
    after = {netdev: sriov.read(root, netdev).get("numvfs") for netdev in counts}
    wrong = {n: count for n, count in after.items() if count != counts[n]}
    if wrong:
        module.fail_json(msg=f"sriov: read back {wrong} after writing {counts}", changed=True)
    return before, after, changed


def _read_trust(module, backend, port: str) -> str | None:
    try:
        return backend.read_lossless(port)["trust"]
    except LosslessReadError as exc:
        module.fail_json(msg=f"trust: {port}: {exc}", path="nics[].profiles.roce")
    return None


def _trust(module, wanted: dict[str, str]) -> tuple[dict, dict, bool]:
    """Trust read, set where it differs, read back; ({port: result}, {port: commands},
    changed)."""
    results, commands, changed = {}, {}, False
    run = Runner(module)
    for port, trust in sorted(wanted.items()):
        backend = choose_backend(module, run, port)
        if backend.name == "tc":
            module.fail_json(
                msg=f"trust: {port} has no DCB (neither mlnx_qos nor dcb answers for it): "
                f"the roce profile's trust {trust} cannot be set",
                path="nics[].profiles.roce",
            )
        before = _read_trust(module, backend, port)
        commands[port] = backend.trust_commands(port, trust)
        after = before
        if before != trust:
            changed, after = True, trust
            if not module.check_mode:
                for argv in commands[port]:
                    run(argv)
                backend.last_text.pop(port, None)
                after = _read_trust(module, backend, port)
                if after != trust:
                    module.fail_json(msg=f"trust: {port}: read {after!r} after setting {trust}")
        results[port] = {"backend": backend.name, "before": before, "after": after}
    return results, commands, changed


def run(module) -> dict:
    root = module.params["root"]
    counts, dcqcn = wanted(module.params["structured"])
    if not counts and not dcqcn:
        return {"changed": False, "sriov": {}, "dcqcn": {}, "persisted": [],
                "msg": "no NIC profile with runtime settings"}  # fmt: skip
    for netdev in sorted(set(counts) | set(dcqcn)):
        if not os.path.exists(os.path.join(root, "sys/class/net", netdev)):
            module.fail_json(msg=f"nics: interface {netdev} does not exist", path="nics")
    before, after, changed = _vfs(module, root, counts) if counts else ({}, {}, False)
    ports: dict = {}
    ecn = {}
    for netdev, priorities in sorted(dcqcn.items()):
        plan = {"ports": [netdev], "ecn_priorities": priorities}
        ecn.update(apply_ecn(module, plan, ports, root=root, label="dcqcn"))
    trust, trust_commands, trust_changed = _trust(
        module, profile_trust(module.params["structured"])
    )
    changed |= trust_changed
    missing = [m for port in sorted(ecn) for m in ecn[port]["missing"]]
    for message in missing:
        module.warn(f"dcqcn: {message}")
    changed |= any(info["changed"] for info in ecn.values())
    persisted = []
    if module.params["persist"]:
        section = {
            "root": root,
            "sriov": counts,
            "ecn": {port: info["paths"] for port, info in sorted(ecn.items())},
            "commands": trust_commands,
        }
        persisted = agent.install(
            "nic_runtime", section, agent.sources(), root, apply=not module.check_mode
        )
        systemd = os.path.isdir(os.path.join(root, "run/systemd/system"))
        if persisted and systemd and not module.check_mode:
            module.run_command(["systemctl", "daemon-reload"], check_rc=True)
            module.run_command(["systemctl", "enable", agent.UNIT_NAME], check_rc=True)
    diff_before = {f"sriov_numvfs/{n}": v for n, v in before.items()}
    diff_after = {f"sriov_numvfs/{n}": v for n, v in after.items()}
    for port, result in trust.items():
        diff_before[f"trust/{port}"], diff_after[f"trust/{port}"] = (
            result["before"],
            result["after"],
        )
    for port, result in ports.items():
        diff_before.update({f"ecn/{port}/{k}": v for k, v in result["ecn"]["before"].items()})
        diff_after.update({f"ecn/{port}/{k}": v for k, v in result["ecn"]["after"].items()})
    return {
        "changed": changed or bool(persisted),
        "sriov": {n: {"before": before[n], "after": after[n], "wanted": counts[n]} for n in counts},
        "dcqcn": {port: result["ecn"] for port, result in ports.items()},
        "dcqcn_missing": missing,
        "trust": trust,
        "persisted": persisted,
        "diff": {"before": diff_before, "after": diff_after},
    }
