#!/usr/bin/python
"""Ansible module: RDMA kernel modules and soft-RoCE devices, now and at every boot."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_rdma_stack
short_description: Load the RDMA kernel modules and create the soft-RoCE devices, persistently
description:
  - Reads the C(rdma) section of the host's structured config. Loads the kernel
    modules that are not loaded and lists them in C(/etc/modules-load.d/cxfab-rdma.conf).
  - Creates each soft-RoCE (C(rxe)) device on its netdev, re-creating one bound to
    another netdev, and writes a boot unit that creates them again (they do not
    survive a reboot); enables it where systemd runs.
  - Hardware devices (mlx5, mlx4) come with their driver; they are only reported.
  - Keeps each of O(daemons) running now and at boot - C(systemctl enable --now) where
    systemd runs, else its init script (C(/etc/init.d/<name> start)) with the runtime
    directory C(/run/<name>) its unit would have had.
version_added: "0.2.0"
options:
  structured:
    description: The host's structured config (C(build/structured/<host>.yml)); C(rdma) is read.
    type: dict
    required: true
  daemons:
    description: Daemons to keep running (plain names, e.g. C(lldpd)).
    type: list
    elements: str
    default: []
author: cxfab
"""

EXAMPLES = r"""
- name: RDMA modules and soft-RoCE devices
  cxfab_rdma_stack:
    structured: "{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}"
"""

RETURN = r"""
actions:
  description: What was changed (or would be, in check mode).
  type: list
  elements: str
  returned: always
links:
  description: RDMA links after the run (C(rdma -j link show)).
  type: list
  returned: always
"""

from ansible.module_utils.cxfab.host.stages import serve  # noqa: E402
from ansible.module_utils.cxfab.host.stages.rdma import ARGUMENT_SPEC, run  # noqa: E402

if __name__ == "__main__":
    serve(ARGUMENT_SPEC, run)
