#!/usr/bin/python
"""Ansible module: per-VLAN QoS (egress map, prio->TC, TSA/share, per-TC rate limits)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_qos
short_description: Program per-VLAN QoS through mlnx_qos, iproute2 dcb or a tc shaper
description:
  - Reads the C(qos) section of the host's structured config and programs on
    each port the priority to traffic class map, the TSA and ETS share and the
    rate limit of every traffic class. (The VLANs' egress-qos-maps belong to the
    VLAN interfaces - cxfab_host_network sets them over netlink and in networkd.)
  - Back end per port, with C(backend=auto) - C(mlnx_qos) when the tool is
    installed and answers for the port (ConnectX, DCB netlink), else iproute2
    C(dcb) when the port answers DCB queries, else a software shaper with
    C(tc) (HTB classes chosen by the VLAN PCP) so the same limits hold on any NIC.
  - Reads the port back and compares after the hardware's quantisation
    (ConnectX keeps 100 Mb/s steps), so a second run reports no change.
  - Installs the host agent that re-applies the same commands at boot and link-up.
  - With a C(lossless) section (cxfab_roce.lossless) it also sets DSCP trust and PFC
    on the RoCE priority through the same back end (C(mlnx_qos --trust --pfc), or
    C(dcb pfc) and the DSCP APP table), enables ECN for that priority in the
    driver's sysfs knobs (C(ecn/roce_np|roce_rp/enable/<prio>)) and writes the
    locked-memory limit for RDMA users; each read back, changed only where it differs.
    A port without DCB fails; an ECN knob the driver lacks is reported (warning and
    C(lossless_missing)), never passed as set.
version_added: "0.1.0"
options:
  structured:
    description: The host's structured config (C(build/structured/<host>.yml)); C(qos) is read.
    type: dict
    required: true
  ports:
    description: Ports to program instead of C(qos.ports) (the bond members).
    type: list
    elements: str
    default: []
  persist:
    description: Install the host agent (boot unit, link-up hook) that re-applies the QoS.
    type: bool
    default: true
  backend:
    description: Force a back end instead of probing.
    type: str
    default: auto
    choices: [auto, mlnx_qos, dcb, tc]
  mlnx_qos_path:
    description: mlnx_qos executable (name looked up in PATH, or a path).
    type: str
    default: mlnx_qos
  tc_ceiling_mbps:
    description: Rate of the unlimited tc classes; 0 reads the port speed (100000 if unknown).
    type: int
    default: 0
  tc_burst_ms:
    description:
      - Burst of a limited tc class, in milliseconds of traffic at its limit (1-1000).
      - tc's default assumes the shaper's timers fire on time; late timers then lose tokens
        and the class delivers less than its limit.
    type: int
    default: 10
author: cxfab
"""

EXAMPLES = r"""
- name: Program per-VLAN QoS
  cxfab_host_qos:
    structured: "{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}"
"""

RETURN = r"""
ports:
  description: >-
    Per port - backend, expected state, C(read) (what the port held before the run, as
    read), C(observed) (after the run; in check mode the planned state, never read) and
    the differences before the run.
  type: dict
  returned: always
lossless_missing:
  description: ECN knobs the driver does not expose (lossless RoCE), one sentence each.
  type: list
  returned: always
persisted:
  description: Host agent files written (or that would be).
  type: list
  returned: always
reapply_commands:
  description: Per port, the argument lists that program the same state from scratch.
  type: dict
  returned: always
"""

from ansible.module_utils.cxfab.host.stages import serve  # noqa: E402
from ansible.module_utils.cxfab.host.stages.qos import ARGUMENT_SPEC, run  # noqa: E402

if __name__ == "__main__":
    serve(ARGUMENT_SPEC, run)
