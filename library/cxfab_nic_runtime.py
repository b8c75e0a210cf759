#!/usr/bin/python
"""Ansible module: the NIC profiles' runtime side (SR-IOV VFs, DCQCN knobs), persistently."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_nic_runtime
short_description: SR-IOV VFs, DCQCN per priority and trust of the NIC profiles
description:
  - Reads C(nics[].runtime) of the host's structured config (the C(sriov) and C(roce)
    profiles) and sets what the card's firmware parameters leave to the running host.
  - SR-IOV - writes the profile's VF count to C(/sys/class/net/<pf>/device/sriov_numvfs),
    0 first when another nonzero count is set (the kernel refuses a change between two
    nonzero counts). A count above C(sriov_totalvfs), or a function without SR-IOV (an
    activation still pending), fails the host before anything is written.
  - DCQCN - writes 1 to C(ecn/roce_np/enable/<prio>) and C(ecn/roce_rp/enable/<prio>) of
    each port for the profile's priorities (mlx5); a knob the driver lacks is a warning
    and C(dcqcn_missing), never passed as set.
  - Trust - the C(roce) profile's C(trust) on its ports outside the C(lossless) section
    (whose trust cxfab_host_qos sets), through the QoS back end (C(mlnx_qos --trust), or
    iproute2 C(dcb app) with the DSCP table); a port without DCB fails.
  - Each setting is read first, written only where it differs and read back; check mode
    and diff supported. Installs the host agent that re-creates the VFs at boot and
    re-enables the knobs at boot and link-up.
version_added: "0.1.0"
options:
  structured:
    description: The host's structured config (C(build/structured/<host>.yml)); C(nics) is read.
    type: dict
    required: true
  root:
    description: Root of the sysfs tree and of the agent's files (tests point it at a copy).
    type: path
    default: /
  persist:
    description: Install the host agent (boot unit, link-up hook) that re-applies the settings.
    type: bool
    default: true
  backend:
    description: DCB back end for the trust instead of probing (C(mlnx_qos), then C(dcb)).
    type: str
    default: auto
    choices: [auto, mlnx_qos, dcb]
  mlnx_qos_path:
    description: mlnx_qos executable (name looked up in PATH, or a path).
    type: str
    default: mlnx_qos
author: cxfab
"""

EXAMPLES = r"""
- name: Create the VFs and enable DCQCN of the NIC profiles
  cxfab_nic_runtime:
    structured: "{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}"
"""

RETURN = r"""
sriov:
  description: >-
    Per PF netdev - C(before), C(after) (the count read back; in check mode the plan)
    and C(wanted).
  type: dict
  returned: always
dcqcn:
  description: >-
    Per port - the ECN knobs C(before) and C(after) (C(roce_np/3) -> 0/1, null when
    absent).
  type: dict
  returned: always
dcqcn_missing:
  description: ECN knobs the driver does not expose, one sentence each.
  type: list
  returned: when a profile has runtime settings
trust:
  description: Per port outside lossless - C(backend), the trust C(before) and C(after).
  type: dict
  returned: when a profile has runtime settings
persisted:
  description: Host agent files written (or that would be).
  type: list
  returned: always
"""

from ansible.module_utils.cxfab.host.stages import serve  # noqa: E402
from ansible.module_utils.cxfab.host.stages.nic_runtime import ARGUMENT_SPEC, run  # noqa: E402

if __name__ == "__main__":
    serve(ARGUMENT_SPEC, run)
