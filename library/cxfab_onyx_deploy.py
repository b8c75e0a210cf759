#!/usr/bin/python
"""Deploy a switch pair: the driver of the pair's platform under the OS-neutral transaction.

The transaction (module_utils/cxfab/switch/transaction.py) holds the pair loop,
the gate, the snapshot, the health wait, the save and the revert; this module
reads its files, picks the driver and writes the records.
"""

from __future__ import annotations

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.switch import drivers as switch_drivers
from ansible.module_utils.cxfab.switch import transaction
from ansible.module_utils.cxfab.switch.drivers import TLS_OPTIONS, NvueDriver, OnyxDriver
from ansible.module_utils.cxfab.switch.login import LOGIN_OPTIONS
from ansible.module_utils.cxfab.switch.secrets import redact_record

DRIVERS = switch_drivers.DRIVERS  # by the pair's platform
# The first peer waits unconfirmed through its partner's turn (change + health wait):
# its confirm timer must outlast both health waits and the partner's apply.
CONFIRM_MARGIN = 60

DOCUMENTATION = r"""
module: cxfab_onyx_deploy
short_description: Bring the peers of one Onyx or Cumulus Linux switch pair to their intended config
description:
  - Onyx - opens one SSH session (netmiko C(mellanox_mlnxos)) to each peer of the pair
    and does everything through it - the gate, the plan, the snapshot, the
    lines, the read-back, the pair's health, C(configuration write) and, on
    failure, the revert.
  - Cumulus Linux (C(platform=cumulus)) - the same transaction over the NVUE REST API
    (HTTPS, port C(mgmt_port)); one revision per changed peer, applied with a confirm
    timer and confirmed only once the pair is healthy; none when nothing differs.
  - For each peer in C(switches) (pair order) - the gate blocks when the partner
    is unreachable, unreadable or in an unhealthy MLAG (unless C(repair)); the
    missing/different lines are sent after an unredacted 0600 snapshot; a
    refused line, a failed read-back or a failed health check reverts the peer
    to the snapshot with the same planner and proves the running-config equals
    it; C(configuration write) runs only after the pair is healthy.
  - Writes one record per switch to C(record_dir)/<switch>.json (lines, gate,
    health, revert).
  - In check mode nothing is sent; C(switches.<name>.lines) lists what would be.
    With C(--diff) the diff shows, per switch, the lines replaced (before) and the
    planned lines (after); on Cumulus Linux, when the plan differs, also NVUE's own
    diff of it (C(switches.<name>.device_diff)), made in a scratch revision that is
    deleted again and never applied.
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
  platform:
    description: The pair's switch OS (C(switch_pairs[].platform)); it picks the driver.
    type: str
    default: onyx
  confirm_timeout:
    description:
      - Cumulus only. Seconds of the confirm timer of each apply; an unconfirmed switch
        rolls back by itself when it runs out. At least twice C(wait) plus 60.
    type: int
    default: 600
extends_documentation_fragment: [cxfab_switch_login, cxfab_switch_tls]
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
        raise transaction.DeployError(f"{what} {path}: cannot read it ({exc.strerror})") from None
    return yaml.safe_load(text) if path.endswith(".yml") else text


def _write_records(directory: str, records: dict) -> None:
    os.makedirs(directory, exist_ok=True)
    for name, record in records.items():
        with open(os.path.join(directory, f"{name}.json"), "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=2)


def diff_output(records: dict) -> list[dict]:
    """Ansible's --diff: per switch with lines, what they replace and the lines; NVUE's
    own diff (check mode, cumulus) shown as it is next to them."""
    out = []
    for name, record in records.items():
        if not record.get("lines"):
            continue
        entry = {
            "before_header": f"{name} (the switch now)",
            "after_header": f"{name} (cxfab's plan)",
            "before": "".join(f"{line}\n" for line in record.get("before") or []),
            "after": "".join(f"{line}\n" for line in record["lines"]),
        }
        if "device_diff" in record:
            entry["prepared"] = f"{name}: the switch's own diff (nv config diff):\n" + "".join(
                f"  {line}\n" for line in record["device_diff"]
            )
        out.append(entry)
    return out


def _driver(driver_class, name: str, structured: dict, p: dict):
    nvue = {"confirm_seconds": p["confirm_timeout"]} if driver_class is NvueDriver else {}
    return switch_drivers.make(driver_class, name, structured, p, **nvue)


ARGUMENT_SPEC = {
    "switches": {"type": "list", "elements": "str", "required": True},
    "structured_dir": {"type": "path", "required": True},
    "configs_dir": {"type": "path", "required": True},
    "record_dir": {"type": "path", "required": True},
    "snapshot_dir": {"type": "path", "required": True},
    **LOGIN_OPTIONS,
    "sections": {"type": "list", "elements": "str", "default": list(OnyxDriver.SECTIONS)},
    "repair": {"type": "bool", "default": False},
    "wait": {"type": "int", "default": 90},
    "platform": {"type": "str", "default": "onyx"},
    **TLS_OPTIONS,
    "confirm_timeout": {"type": "int", "default": 600},
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    try:
        driver_class = switch_drivers.driver_class(p["platform"])
    except switch_drivers.UnknownPlatform as exc:
        module.fail_json(msg=str(exc))
    unknown = sorted(set(p["sections"]) - set(driver_class.SECTIONS))
    if unknown:
        module.fail_json(msg=f"sections: {unknown} are not among {list(driver_class.SECTIONS)}")
    if driver_class is NvueDriver and p["confirm_timeout"] < 2 * p["wait"] + CONFIRM_MARGIN:
        module.fail_json(
            msg=f"confirm_timeout {p['confirm_timeout']}: must be at least 2 x wait + "
            f"{CONFIRM_MARGIN} = {2 * p['wait'] + CONFIRM_MARGIN} s (the first peer waits "
            "unconfirmed through its partner's turn)"
        )
    options = transaction.Options(
        sections=tuple(p["sections"]),
        check_mode=module.check_mode,
        diff=module._diff,
        repair=p["repair"],
        wait=p["wait"],
        snapshot_dir=p["snapshot_dir"],
        secrets=[p["password"]],
    )

    def intended_for(name: str) -> str:
        return _load(os.path.join(p["configs_dir"], f"{name}.cfg"), "intended config")

    try:
        first = _load(os.path.join(p["structured_dir"], f"{p['switches'][0]}.yml"), "structured")
        drivers = {}
        for name in sorted([first["switch"], first["partner"]], key=lambda n: n != first["switch"]):
            structured = _load(os.path.join(p["structured_dir"], f"{name}.yml"), "structured")
            drivers[name] = _driver(driver_class, name, structured, p)
    except transaction.DeployError as exc:
        result = {"changed": False, "switches": {}, "sessions": {}, "msg": str(exc)}
        _write_records(p["record_dir"], {})
        module.fail_json(**redact_record(result, options.secrets))
    order = [n for n in (first["switch"], first["partner"]) if n in p["switches"]]
    login = {
        "username": p["username"],
        "password": p["password"],
        "known_hosts": p["known_hosts"],
        "check_host_key": p["host_key_checking"],
    }
    result = transaction.deploy_pair(drivers, order, intended_for, login, options, module.warn)
    _write_records(p["record_dir"], result["switches"])
    if module._diff:
        result["diff"] = diff_output(result["switches"])
    if "msg" in result:
        module.fail_json(**result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
