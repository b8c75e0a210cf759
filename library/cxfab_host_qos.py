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
    VLAN interfaces: cxfab_host_network sets them over netlink and in networkd.)
  - Back end per port, with C(backend=auto) - C(mlnx_qos) when the tool is
    installed and answers for the port (ConnectX, DCB netlink), else iproute2
    C(dcb) when the port answers DCB queries, else a software shaper with
    C(tc) (HTB classes chosen by the VLAN PCP) so the same limits hold on any NIC.
  - Reads the port back and compares after the hardware's quantisation
    (ConnectX keeps 100 Mb/s steps), so a second run reports no change.
  - Installs the host agent that re-applies the same commands at boot and link-up.
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
author: cxfab
"""

EXAMPLES = r"""
- name: Program per-VLAN QoS
  cxfab_host_qos:
    structured: "{{ hostvars['localhost'].cxfab_structured[inventory_hostname] }}"
"""

RETURN = r"""
ports:
  description: Per port - backend, expected and observed state, differences before the run.
  type: dict
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

import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab import hostnet  # noqa: E402
from ansible.module_utils.cxfab.hostnet import agent, cpulist, irq  # noqa: E402
from ansible.module_utils.cxfab.hostnet import qos as backends  # noqa: E402

DEFAULT_CEILING_MBPS = 100_000


class Runner:
    """run_command with argument lists; failures carry the command and its stderr."""

    def __init__(self, module):
        self.module = module

    def __call__(self, argv, check=True):
        rc, out, err = self.module.run_command(argv)
        if check and rc != 0:
            self.module.fail_json(
                msg=f"{' '.join(argv)} failed (rc={rc}): {(err or out).strip()}",
                rc=rc,
            )
        return rc, out, err


def port_speed_mbps(port):
    try:
        with open(f"/sys/class/net/{port}/speed", encoding="ascii") as handle:
            speed = int(handle.read().strip())
    except (OSError, ValueError):
        return None
    return speed if speed > 0 else None


class Backend:
    """Probe, read and program one port with one back end."""

    def __init__(self, module, run, name):
        self.module, self.run, self.name = module, run, name
        self.tools = {}
        self.legacy_units = False
        # mlnx_qos -i <port> answered the probe: that output is the first read too.
        self.probed = {}

    def available(self, port):
        if self.name == "mlnx_qos":
            tool = self.module.get_bin_path(self.module.params["mlnx_qos_path"])
            if not tool:
                return False
            self.tools["mlnx_qos"] = tool
            rc, out, _ = self.run([tool, "-i", port], check=False)
            if rc == 0:
                self.probed[port] = out
            return rc == 0
        if self.name == "dcb":
            tool = self.module.get_bin_path("dcb")
            if not tool:
                return False
            self.tools["dcb"] = tool
            self.legacy_units = backends.dcb_needs_legacy_units(
                self.run([tool, "-V"], check=False)[1]
            )
            return self.run([tool, "-j", "ets", "show", "dev", port], check=False)[0] == 0
        self.tools["tc"] = self.module.get_bin_path("tc", required=True)
        return True

    def ceiling(self, port):
        return (
            self.module.params["tc_ceiling_mbps"] or port_speed_mbps(port) or (DEFAULT_CEILING_MBPS)
        )

    def read(self, port):
        if self.name == "mlnx_qos":
            text = self.probed.pop(port, None)
            if text is None:
                text = self.run([self.tools["mlnx_qos"], "-i", port])[1]
            return backends.mlnx_qos_state(text)
        if self.name == "dcb":
            dcb = self.tools["dcb"]
            ets = self.run([dcb, "-j", "ets", "show", "dev", port])[1]
            rates = self.run([dcb, "-j", "maxrate", "show", "dev", port], check=False)[1]
            return backends.dcb_state(ets, rates or "{}", self.legacy_units)
        tc = self.tools["tc"]
        outputs = [
            self.run([tc, "-j", kind, "show", "dev", port, *extra])[1]
            for kind, extra in (("qdisc", []), ("class", []), ("filter", ["parent", "1:"]))
        ]
        if '"htb"' not in outputs[0]:
            outputs[2] = "[]"  # no HTB root: no filters of ours to read
        return backends.tc_state(*outputs, ceiling_mbps=self.ceiling(port))

    def commands(self, port, plan):
        if self.name == "mlnx_qos":
            return [backends.mlnx_qos_args(self.tools["mlnx_qos"], port, plan)]
        if self.name == "dcb":
            return backends.dcb_args(self.tools["dcb"], port, plan, self.legacy_units)
        return backends.tc_args(self.tools["tc"], port, plan, self.ceiling(port))


def choose_backend(module, run, port):
    wanted = module.params["backend"]
    order = ["mlnx_qos", "dcb", "tc"] if wanted == "auto" else [wanted]
    for name in order:
        backend = Backend(module, run, name)
        if backend.available(port):
            return backend
    module.fail_json(msg=f"ports: backend {wanted} cannot program {port} (tool missing or no DCB)")
    return None


def main():
    module = AnsibleModule(
        argument_spec={
            "structured": {"type": "dict", "required": True},
            "ports": {"type": "list", "elements": "str", "default": []},
            "backend": {
                "type": "str",
                "default": "auto",
                "choices": ["auto", "mlnx_qos", "dcb", "tc"],
            },
            "mlnx_qos_path": {"type": "str", "default": "mlnx_qos"},
            "tc_ceiling_mbps": {"type": "int", "default": 0},
            "persist": {"type": "bool", "default": True},
        },
        supports_check_mode=True,
    )
    plan = module.params["structured"].get("qos")
    if not plan:
        module.exit_json(changed=False, ports={}, plan=None, reapply_commands={}, persisted=[])
    ports = module.params["ports"] or plan["ports"]
    for port in ports:
        if not os.path.exists(f"/sys/class/net/{port}"):
            module.fail_json(msg=f"qos.ports: interface {port} does not exist", path="ports")
    run = Runner(module)
    changed = False
    before_all, after_all, reapply = {}, {}, {}
    port_results = {}
    for port in ports:
        backend = choose_backend(module, run, port)
        odd = backends.mlnx_unrepresentable(plan) if backend.name == "mlnx_qos" else []
        if odd:
            module.fail_json(
                msg=f"cxfab_host.qos: rate limit of traffic class(es) {odd} is not a whole "
                f"Gb/s, which is all mlnx_qos can set on {port}",
                path="cxfab_host.qos",
            )
        expected = backends.expected_state(plan, backend.name)
        observed = backend.read(port)
        found = backends.differences(expected, observed)
        commands = backend.commands(port, plan)
        reapply[port] = commands
        before_all[port] = observed
        if found:
            changed = True
            if not module.check_mode:
                for command in commands:
                    # Removing a root qdisc that is not there fails harmlessly.
                    run(command, check=command[1:3] != ["qdisc", "del"])
                observed = backend.read(port)
                left = backends.differences(expected, observed)
                if left:
                    module.fail_json(
                        msg=f"{port}: {backend.name} read-back differs after apply: "
                        + "; ".join(left),
                        changed=True,
                        observed=observed,
                    )
            else:
                observed = expected
        after_all[port] = observed
        port_results[port] = {
            "backend": backend.name,
            "expected": expected,
            "observed": observed,
            "differences_before": found,
        }
    persisted = []
    if module.params["persist"]:
        sources = agent.package_sources([hostnet, cpulist, irq, agent])
        persisted = agent.install(
            "qos", {"commands": reapply}, sources, apply=not module.check_mode
        )
        if persisted and os.path.isdir("/run/systemd/system") and not module.check_mode:
            module.run_command(["systemctl", "daemon-reload"], check_rc=True)
            module.run_command(["systemctl", "enable", agent.UNIT_NAME], check_rc=True)
    module.exit_json(
        changed=changed or bool(persisted),
        ports=port_results,
        plan=plan,
        reapply_commands=reapply,
        persisted=persisted,
        diff={"before": before_all, "after": after_all},
    )


if __name__ == "__main__":
    main()
