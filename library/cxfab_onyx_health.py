#!/usr/bin/python
"""Health checks of a switch pair, Onyx or Cumulus Linux (read-only, one session per switch).

The driver is the pair's platform (its structured config's `platform`), built as the
deploy module builds it (module_utils/cxfab/switch/drivers.py), so verify reads a
pair with the checks the deploy's health gate judged.
"""

from __future__ import annotations

import os
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.cxfab.switch import drivers as switch_drivers
from ansible.module_utils.cxfab.switch.driver import UntrustedSwitch
from ansible.module_utils.cxfab.switch.login import LOGIN_OPTIONS
from ansible.module_utils.cxfab.switch.secrets import redact_record

DOCUMENTATION = r"""
module: cxfab_onyx_health
short_description: Check an Onyx or Cumulus Linux MLAG pair (MLAG, bonds, gateways, RoCE)
description:
  - The pair's C(platform) (its structured config) picks the driver.
  - Onyx - opens one SSH session to each peer, reads C(show mlag), C(show mlag-vip),
    C(show interfaces mlag-port-channel summary), C(show magp), C(show vrrp)
    and C(show configuration files), and compares them with the structured
    configs in C(structured_dir) (written by role switch_fabric).
  - Cumulus Linux - reads the same over the NVUE REST API (HTTPS, the certificate
    checked with C(tls_ca) / C(tls_fingerprints)) - C(nv show mlag), C(nv show interface
    peerlink), each MLAG bond, C(nv show interface vlanN ip vrr) and C(nv show qos roce),
    as JSON - into the same check ids (VRR gateways are the C(magp.N) checks).
  - Every parser fails closed - an output it cannot read, or a switch that does not
    answer, fails the check with the command and the reason; no check passes on a
    value it did not read.
  - Each check returns C(id), C(target), C(category), C(status) (pass/fail),
    C(expected), C(observed), C(message) and C(scope) (local/pair).
  - Read-only; never reports a change.
options:
  structured_dir:
    description: Directory of the structured configs (C(<switch>.yml)).
    type: path
    required: true
  switch:
    description: The switch whose pair is checked.
    type: str
    required: true
  scope:
    description:
      - C(all) both peers' own checks and everything they share (verify.yml).
      - C(pair) this switch's checks and what the pair shares; C(local) this switch only.
    type: str
    choices: [local, pair, all]
    default: all
  wait:
    description: Seconds to wait for every check to pass before giving up.
    type: int
    default: 0
  fail_on_unhealthy:
    description: Fail when a check still fails after C(wait).
    type: bool
    default: true
extends_documentation_fragment: [cxfab_switch_login, cxfab_switch_tls]
"""

RETURN = r"""
checks:
  description: All checks of the last round.
  returned: always
  type: list
failed_checks:
  description: The checks whose status is fail.
  returned: always
  type: list
healthy:
  description: Every check passed.
  returned: always
  type: bool
releases:
  description: OS release per switch (Onyx, or Cumulus Linux N.M).
  returned: always
  type: dict
"""


def _round(me, partner, scope):
    peers = [me] if scope == "local" else [me, partner]
    checks, readings = [], []
    for peer in peers:
        reading = peer.health()
        readings.append(reading)
        checks += [
            c for c in reading.checks if scope == "all" or peer is me or c["scope"] == "pair"
        ]
    if scope != "local":
        checks += me.pair_checks(readings)
    return checks


def main():
    module = AnsibleModule(
        argument_spec={
            "structured_dir": {"type": "path", "required": True},
            "switch": {"type": "str", "required": True},
            "scope": {"type": "str", "choices": ["local", "pair", "all"], "default": "all"},
            **LOGIN_OPTIONS,
            **switch_drivers.TLS_OPTIONS,
            "wait": {"type": "int", "default": 0},
            "fail_on_unhealthy": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    import yaml

    p = module.params
    peers = {}
    try:
        with open(os.path.join(p["structured_dir"], f"{p['switch']}.yml"), encoding="utf-8") as f:
            mine = yaml.safe_load(f)
        with open(
            os.path.join(p["structured_dir"], f"{mine['partner']}.yml"), encoding="utf-8"
        ) as f:
            theirs = yaml.safe_load(f)
    except OSError as exc:
        module.fail_json(msg=f"structured config: {exc.filename}: {exc.strerror}")
    try:
        driver_class = switch_drivers.driver_class(mine.get("platform", "onyx"))
    except switch_drivers.UnknownPlatform as exc:
        module.fail_json(msg=f"structured config of {p['switch']}: {exc}")
    me = switch_drivers.make(driver_class, mine["switch"], mine, p)
    partner = switch_drivers.make(driver_class, theirs["switch"], theirs, p)
    peers = [me] if p["scope"] == "local" else [me, partner]
    try:
        for peer in peers:
            peer.open(p["username"], p["password"], p["known_hosts"], p["host_key_checking"])
            for note in peer.notes:
                module.warn(note)
        deadline = time.monotonic() + max(p["wait"], 0)
        while True:
            checks = _round(me, partner, p["scope"])
            failed = [c for c in checks if c["status"] == "fail"]
            if not failed or time.monotonic() >= deadline:
                break
            time.sleep(1)
    except UntrustedSwitch as exc:
        module.fail_json(msg=str(exc))
    finally:
        for peer in peers:
            peer.close()
    result = redact_record(
        {
            "changed": False,
            "checks": checks,
            "failed_checks": failed,
            "healthy": not failed,
            "releases": {peer.name: peer.release for peer in peers},
        },
        [p["password"]],
    )
    if failed and p["fail_on_unhealthy"]:
        summary = "; ".join(
            f"{c['target']} {c['id']}: expected {c['expected']}, observed {c['observed']}"
            for c in failed[:8]
        )
        module.fail_json(msg=f"pair {mine['pair']} is not healthy: {summary}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
