#!/usr/bin/python
"""Ansible module: shut (or bring back) every MPO of one Onyx peer, for the failover drill."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_drill_mpo
short_description: Shut every MLAG port-channel of one switch, or bring them back
description:
  - Sends C(interface mlag-port-channel <id> shutdown) (C(state=down)) or C(no shutdown)
    (C(state=up)) for every MPO of the switch's structured config, through one CLI
    session. Never writes the configuration (C(configuration write)), so a reboot
    also brings the MPOs back. Returns the time before and after the lines went out.
version_added: "0.2.0"
options:
  structured:
    description: The switch's structured config (its C(management) and C(mlag_bonds)).
    type: dict
    required: true
  state:
    description: down or up.
    type: str
    choices: [down, up]
    required: true
extends_documentation_fragment: [cxfab_switch_login]
author: cxfab
"""

EXAMPLES = r"""
- name: Take switch A's MPOs down
  cxfab_drill_mpo:
    structured: "{{ hostvars['localhost'].cxfab_structured | cxfab_device('sw-a') }}"
    state: down
    username: admin
    password: "{{ vault_switch_password }}"
"""

RETURN = r"""
lines: {description: The lines sent., type: list, returned: always}
started: {description: Epoch seconds before the first line., type: float, returned: always}
finished: {description: Epoch seconds after the last line., type: float, returned: always}
"""

import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.switch.login import LOGIN_OPTIONS  # noqa: E402
from ansible.module_utils.cxfab.switch.onyx.session import OnyxSession, SessionError  # noqa: E402
from ansible.module_utils.cxfab.verify.drill import mpo_lines  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "state": {"type": "str", "choices": ["down", "up"], "required": True},
            **LOGIN_OPTIONS,
        },
        supports_check_mode=True,
    )
    p = module.params
    sc = p["structured"]
    lines = mpo_lines(sc, shutdown=p["state"] == "down")
    if module.check_mode or not lines:
        module.exit_json(changed=False, lines=lines, started=time.time(), finished=time.time())
    management = sc["management"]
    try:
        session = OnyxSession(
            management["address"], management["port"], p["username"], p["password"],
            known_hosts=p["known_hosts"], check_host_key=p["host_key_checking"],
        )  # fmt: skip
        with session:
            started = time.time()
            session.configure(lines)
            finished = time.time()
    except SessionError as exc:
        module.fail_json(msg=f"{sc.get('switch')}: {exc}", lines=lines)
    module.exit_json(changed=True, lines=lines, started=started, finished=finished)


if __name__ == "__main__":
    main()
