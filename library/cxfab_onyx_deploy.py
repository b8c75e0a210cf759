#!/usr/bin/python
"""Deploy an Onyx switch pair: gate, one transaction per peer, one SSH session per switch."""

from __future__ import annotations

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.onyx import deploy
from ansible.module_utils.cxfab.onyx.plan import SECTIONS
from ansible.module_utils.cxfab.onyx.session import DEFAULT_KNOWN_HOSTS

DOCUMENTATION = r"""
module: cxfab_onyx_deploy
short_description: Bring the peers of one Onyx switch pair to their intended config, safely
description:
  - Opens one SSH session (netmiko C(mellanox_mlnxos)) to each peer of the pair
    and does everything through it - the gate, the plan, the snapshot, the
    lines, the read-back, the pair's health, C(configuration write) and, on
    failure, the revert.
  - For each peer in C(switches) (pair order) - the gate blocks when the partner
    is unreachable, unreadable or in an unhealthy MLAG (unless C(repair)); the
    missing/different lines are sent after an unredacted 0600 snapshot; a
    refused line, a failed read-back or a failed health check reverts the peer
    to the snapshot with the same planner and proves the running-config equals
    it; C(configuration write) runs only after the pair is healthy.
  - Writes one record per switch to C(record_dir)/<switch>.json (lines, gate,
    health, revert).
  - In check mode nothing is sent; C(switches.<name>.lines) lists what would be.
options:
  switches:
    description: Peers to change, in pair order (the others are only read).
    type: list
    elements: str
    required: true
  structured_dir:
    description: Directory of the structured configs (C(<switch>.yml)) of both peers.
    type: path
    required: true
  configs_dir:
    description: Directory of the rendered intended configs (C(<switch>.cfg)).
    type: path
    required: true
  record_dir:
    description: Directory of the deploy records.
    type: path
    required: true
  snapshot_dir:
    description: Directory of the unredacted pre-change snapshots; must be outside git.
    type: path
    required: true
  username:
    description: CLI user.
    type: str
    required: true
  password:
    description: CLI password (never logged).
    type: str
    required: true
    no_log: true
  known_hosts:
    description:
      - Operator-owned known-hosts file; the switches' keys must be in it.
      - An unknown or changed key stops the module before anything is sent.
    type: path
    default: ~/.ssh/known_hosts
  host_key_checking:
    description:
      - C(false) accepts any host key (UNSAFE, a man in the middle gets the password).
    type: bool
    default: true
  sections:
    description: Sections to reconcile (tags switch_mlag, switch_vlans, switch_gateway).
    type: list
    elements: str
    default: [mlag, vlans, gateway]
  repair:
    description: Let a change through although the partner is dead or unhealthy.
    type: bool
    default: false
  wait:
    description: Seconds a peer has to become healthy after its change.
    type: int
    default: 90
"""

RETURN = r"""
switches:
  description: Per switch - lines, gate findings, health checks, snapshot, revert.
  returned: always
  type: dict
sessions:
  description: SSH sessions opened per switch in this call (1 each).
  returned: always
  type: dict
"""


def _load(path: str, what: str):
    import yaml

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise deploy.DeployError(f"{what} {path}: cannot read it ({exc.strerror})") from None
    return yaml.safe_load(text) if path.endswith(".yml") else text


def _write_records(directory: str, records: dict) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, record in records.items():
        with open(os.path.join(directory, f"{name}.json"), "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=2)


def main():
    module = AnsibleModule(
        argument_spec={
            "switches": {"type": "list", "elements": "str", "required": True},
            "structured_dir": {"type": "path", "required": True},
            "configs_dir": {"type": "path", "required": True},
            "record_dir": {"type": "path", "required": True},
            "snapshot_dir": {"type": "path", "required": True},
            "username": {"type": "str", "required": True},
            "password": {"type": "str", "required": True, "no_log": True},
            "known_hosts": {"type": "path", "default": DEFAULT_KNOWN_HOSTS},
            "host_key_checking": {"type": "bool", "default": True},
            "sections": {"type": "list", "elements": "str", "default": list(SECTIONS)},
            "repair": {"type": "bool", "default": False},
            "wait": {"type": "int", "default": 90},
        },
        supports_check_mode=True,
    )
    p = module.params
    unknown = sorted(set(p["sections"]) - set(SECTIONS))
    if unknown:
        module.fail_json(msg=f"sections: {unknown} are not among {list(SECTIONS)}")
    options = deploy.Options(
        sections=tuple(p["sections"]),
        check_mode=module.check_mode,
        repair=p["repair"],
        wait=p["wait"],
        snapshot_dir=p["snapshot_dir"],
        secrets=[p["password"]],
    )
    records: dict = {}
    result = {"changed": False, "switches": records, "sessions": {}}
    peers: dict = {}
    try:
        first = _load(os.path.join(p["structured_dir"], f"{p['switches'][0]}.yml"), "structured")
        names = sorted([first["switch"], first["partner"]], key=lambda n: n != first["switch"])
        order = [n for n in (first["switch"], first["partner"]) if n in p["switches"]]
        for name in names:
            structured = _load(os.path.join(p["structured_dir"], f"{name}.yml"), "structured")
            peers[name] = deploy.Peer(name, structured)
        for name in sorted(peers, key=lambda n: peers[n].structured["peer_index"]):
            deploy.open_peer(
                peers[name], p["username"], p["password"], p["known_hosts"],
                check_host_key=p["host_key_checking"],
            )  # fmt: skip
            result["sessions"][name] = 1 if peers[name].session else 0
            for note in getattr(peers[name].session, "known_hosts_notes", None) or []:
                module.warn(note)
        for index, name in enumerate(order):
            partner = peers[peers[name].structured["partner"]]
            intended = _load(os.path.join(p["configs_dir"], f"{name}.cfg"), "intended config")
            pending = partner.name in order[index + 1 :]
            try:
                records[name] = deploy.change_peer(peers[name], partner, intended, pending, options)
            except deploy.DeployError as exc:
                records[name] = {**(exc.record or {"switch": name, "lines": []}), "error": str(exc)}
                raise
            if records[name]["lines"]:
                result["changed"] = True
            for warning in records[name]["warnings"]:
                module.warn(f"{name}: {warning}")
            for check in records[name].get("post_waived") or []:
                module.warn(
                    f"{check['target']} {check['id']}: {check['observed']} ({check['waived']})"
                )
            failed = records[name].get("post_failed")
            if failed:
                raise deploy.DeployError(
                    f"{name}: the pair is not healthy: "
                    + "; ".join(f"{c['target']} {c['id']}: {c['observed']}" for c in failed[:6])
                )
    except deploy.DeployError as exc:
        result["msg"] = str(exc)
    except deploy.SessionError as exc:
        result["msg"] = str(exc)
    finally:
        for peer in peers.values():
            if peer.session:
                peer.session.close()
    clean = deploy.redact_record(result, options.secrets)
    _write_records(p["record_dir"], clean["switches"])
    if "msg" in clean:
        module.fail_json(**clean)
    module.exit_json(**clean)


if __name__ == "__main__":
    main()
