#!/usr/bin/python
"""Ansible module: wait until servers on this host listen (TCP or RDMA-CM), without connecting."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_listening
short_description: Wait until this host's servers listen on their TCP or RDMA-CM ports
description:
  - Reads the kernel's listeners until every given port listens or C(timeout) passes -
    TCP ports from /proc/net/tcp and /proc/net/tcp6 (LISTEN state), RDMA-CM ports from
    C(rdma -j resource show cm_id) (LISTEN state). Nothing connects to the servers - a
    one-shot server would take a probe connection for its client.
  - Returns the ports still not listening with the reason; a read that fails counts as
    not listening (fails closed), and so does a server whose process ended first (it is
    not waited for). The module itself fails only on bad input.
  - Reads only; runs the same in check mode.
version_added: "0.1.0"
options:
  listeners:
    description: >-
      The servers that must listen, each C(kind) (tcp or rdma_cm, RDMA-CM in port space
      TCP), C(port), and optionally C(pid), the process that should listen: once it has
      ended, its port is not waited for.
    type: list
    elements: dict
    required: true
  timeout:
    description: Seconds to wait for all of them.
    type: int
    default: 30
author: cxfab
"""

EXAMPLES = r"""
- name: Wait until the servers listen
  cxfab_listening:
    listeners:
      - {kind: tcp, port: 18600, pid: 4711}
      - {kind: rdma_cm, port: 18602}
    timeout: 30
"""

RETURN = r"""
missing:
  description: The ports not listening at the end, each with kind (tcp, rdma_cm), port and why.
  type: list
  returned: always
waited_s:
  description: Seconds spent waiting.
  type: float
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.workloads import listening  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec={
            "listeners": {"type": "list", "elements": "dict", "required": True},
            "timeout": {"type": "int", "default": 30},
        },
        supports_check_mode=True,
    )
    p = module.params
    for index, item in enumerate(p["listeners"]):
        if item.get("kind") not in ("tcp", "rdma_cm"):
            module.fail_json(msg=f"listeners[{index}].kind: expected tcp or rdma_cm", missing=[])
        port, pid = item.get("port"), item.get("pid")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            module.fail_json(msg=f"listeners[{index}].port: {port!r} is not a port", missing=[])
        if pid is not None and (isinstance(pid, bool) or not isinstance(pid, int) or pid < 1):
            module.fail_json(msg=f"listeners[{index}].pid: {pid!r} is not a pid", missing=[])
    if p["timeout"] < 0:
        module.fail_json(msg=f"timeout: expected seconds >= 0, got {p['timeout']}", missing=[])

    def read_tcp():
        tables = []
        for path in listening.PROC_NET_TCP:
            try:
                with open(path, encoding="ascii") as handle:
                    tables.append(handle.read())
            except FileNotFoundError:  # no IPv6 in this kernel
                continue
        if not tables:
            raise OSError("neither /proc/net/tcp nor /proc/net/tcp6 could be read")
        return listening.tcp_listening(tables)

    def read_rdma_cm():
        rc, out, err = module.run_command(listening.RDMA_CM_COMMAND)
        if rc != 0:
            raise OSError(f"{' '.join(listening.RDMA_CM_COMMAND)}: exit {rc}: {err.strip()[:200]}")
        return listening.rdma_cm_listening(out)

    result = listening.wait_listening(
        p["listeners"], {"tcp": read_tcp, "rdma_cm": read_rdma_cm}, p["timeout"]
    )
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
