#!/usr/bin/python
"""Ansible module: read a host's stages in one call and name those with nothing to do."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_state
short_description: Read every host stage of site.yml in one call; name the settled ones
description:
  - Runs the host stages' own code in check mode, in site.yml's order - NIC state
    (C(cxfab_nic_state)), network (C(cxfab_host_network)), QoS (C(cxfab_host_qos)),
    IRQ affinity (C(cxfab_irq_affinity)), RDMA (C(cxfab_rdma_stack)) - with the
    arguments each of those modules takes, in one process on the host.
  - Stops at the first stage that would change something; the stages after it are
    not read, because that change can alter what they would read.
  - Changes nothing on the host. A stage that cannot be read is never settled - the
    reading ends there with a warning naming the stage and why, and that stage runs
    in full in its turn.
version_added: "0.3.0"
options:
  stages:
    description:
      - Per stage (C(nic), C(network), C(qos), C(irq), C(rdma)) the arguments of its
        module. Stages left out are not read.
    type: dict
    required: true
author: cxfab
"""

EXAMPLES = r"""
- name: Read the host's stages in one call
  cxfab_host_state:
    stages:
      nic: {nics: "{{ structured.nics }}"}
      qos: {structured: "{{ structured }}"}
"""

RETURN = r"""
stages:
  description: Each stage read and its check-mode result
  returned: success
  type: dict
settled:
  description: The stages read that would change nothing, in order
  returned: success
  type: list
differs:
  description: The first stage that would change something (none when all are settled)
  returned: success
  type: str
unread:
  description: The stages after it, not read
  returned: success
  type: list
unreadable:
  description: The stage that could not be read, with the reason
  returned: success
  type: dict
msg: {description: The reading in one line, returned: always, type: str}
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.stages.check import (  # noqa: E402
    StageFailed,
    read_host,
    summary,
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={"stages": {"type": "dict", "required": True}},
        supports_check_mode=True,
    )
    try:
        reading = read_host(module, module.params["stages"])
    except StageFailed as exc:
        module.fail_json(msg=exc.msg, **exc.fields)
    for name, reason in reading["unreadable"].items():
        module.warn(f"{name}: not readable before the rollout ({reason}); it runs in full")
    module.exit_json(changed=False, msg=summary(reading), **reading)


if __name__ == "__main__":
    main()
