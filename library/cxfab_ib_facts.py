#!/usr/bin/python
"""Ansible module: read the InfiniBand ports (ibstat) and IPoIB interfaces of a host."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_ib_facts
short_description: Read the InfiniBand ports and IPoIB interfaces of a host
description:
  - Read-only, one call per host with ib ports. For every adapter port with
    C(link_type) ib - the RDMA device and IB port serving it (found in sysfs from
    the adapter's PCI address), then C(ibstat <device> <port>) - state, physical
    state, rate, base LID, SM LID and link layer.
  - For every IPoIB interface of the structured config - its C(mode) and C(mtu)
    from sysfs.
  - A reading that fails carries the command and its output instead of a value.
version_added: "0.3.0"
options:
  structured:
    description: This host's structured config (C(nics) and C(ipoib) are read).
    type: dict
    required: true
  ibstat_path:
    description: ibstat to use (name or path); default C(ibstat) when installed.
    type: str
  root:
    description: Prefix of C(/sys) (tests point it at a copied tree).
    type: path
    default: /
author: cxfab
"""

EXAMPLES = r"""
- name: Read the InfiniBand ports
  cxfab_ib_facts:
    structured: "{{ hostvars['localhost'].cxfab_structured[inventory_hostname] }}"
  register: ib_facts
"""

RETURN = r"""
ib:
  description: >-
    {ports: {<netdev>: {device, ib_port, port | error}},
    ipoib: {<if>: {mode, mtu} | {error}}}
  type: dict
  returned: success
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.mlnx.ibport import gather  # noqa: E402


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "ibstat_path": {"type": "str"},
            "root": {"type": "path", "default": "/"},
        },
        supports_check_mode=True,
    )
    params = module.params
    ibstat = module.get_bin_path(params["ibstat_path"] or "ibstat")
    if params["ibstat_path"] and not ibstat:
        module.fail_json(msg=f"ibstat_path: {params['ibstat_path']!r} is not an executable")

    def runner(argv):
        return module.run_command(argv, environ_update={"LC_ALL": "C"})

    module.exit_json(changed=False, ib=gather(params["structured"], runner, ibstat, params["root"]))


if __name__ == "__main__":
    main()
