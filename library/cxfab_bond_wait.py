#!/usr/bin/python
"""Ansible module: after a NIC activation, wait until the host's bond members are back."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_bond_wait
short_description: Wait until every member of the host's bond is up and in the aggregator
description:
  - Read-only. Polls C(/proc/net/bonding/<bond>) until every intended member shows
    C(MII Status) C(up) and, in 802.3ad, the C(Aggregator ID) of the bond's
    C(Active Aggregator Info); returns how long that took and each member's state.
  - Fails with the observed member states when the timeout passes first, and at
    once when the file cannot be read as a bonding status.
  - Skips, with the reason, a host without a bond and a bond that did not exist
    before the activation (it is built later in the run).
version_added: "0.1.0"
options:
  bond:
    description: The host's structured bond (name, members, mode), or null.
    type: dict
  existed_before:
    description: Whether the bond's proc file existed before the activation.
    type: bool
    required: true
  timeout:
    description: Seconds to wait at most.
    type: int
    default: 120
  interval:
    description: Seconds between two reads.
    type: float
    default: 1.0
  proc_dir:
    description: Directory of the bonding status files (tests point it elsewhere).
    type: path
    default: /proc/net/bonding
author: cxfab
"""

EXAMPLES = r"""
- name: Wait until this host's bond members are back in the aggregator
  cxfab_bond_wait:
    bond: "{{ hostvars['localhost'].cxfab_structured[inventory_hostname].network.bond }}"
    existed_before: "{{ bond_before.stat.exists }}"
    timeout: 120
"""

RETURN = r"""
skipped_reason:
  description: Why no wait was needed (null when the module waited).
  type: str
  returned: always
waited_seconds:
  description: Seconds until every member was back (or until the timeout).
  type: float
  returned: always
members:
  description: Member name to its last observed state.
  type: dict
  returned: always
"""

import os  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.hostnet.bondstate import (  # noqa: E402
    member_states,
    wait_skip_reason,
)


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def wait_for_members(bond, proc_dir, timeout, interval, clock=time.monotonic, sleep=time.sleep):
    """(ready, seconds waited, member states); raises ValueError on an unreadable status."""
    path = os.path.join(proc_dir, bond["name"])
    start = clock()
    while True:
        ready, states = member_states(bond, _read(path))
        waited = round(clock() - start, 1)
        if ready or waited >= timeout:
            return ready, waited, states
        sleep(interval)


def main():
    module = AnsibleModule(
        argument_spec={
            "bond": {"type": "dict"},
            "existed_before": {"type": "bool", "required": True},
            "timeout": {"type": "int", "default": 120},
            "interval": {"type": "float", "default": 1.0},
            "proc_dir": {"type": "path", "default": "/proc/net/bonding"},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["timeout"] <= 0:
        module.fail_json(msg=f"timeout: expected seconds > 0, got {p['timeout']}")
    reason = wait_skip_reason(p["bond"], p["existed_before"])
    if reason or module.check_mode:
        module.exit_json(
            changed=False,
            skipped_reason=reason or "check mode: nothing was activated",
            waited_seconds=0.0,
            members={},
        )
    bond = p["bond"]
    try:
        ready, waited, states = wait_for_members(bond, p["proc_dir"], p["timeout"], p["interval"])
    except ValueError as exc:
        module.fail_json(msg=str(exc), skipped_reason=None, waited_seconds=0.0, members={})
    summary = "; ".join(f"{name}: {state}" for name, state in states.items())
    result = {"skipped_reason": None, "waited_seconds": waited, "members": states}
    if not ready:
        module.fail_json(
            msg=f"bond {bond['name']}: members not back in the aggregator after "
            f"{waited} s (timeout {p['timeout']} s): {summary}",
            **result,
        )
    module.exit_json(
        changed=False, msg=f"bond {bond['name']} members back after {waited} s", **result
    )


if __name__ == "__main__":
    main()
