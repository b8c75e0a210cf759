#!/usr/bin/python
"""Ansible module: per-VLAN QoS (egress map, prio->TC, TSA/share, per-TC rate limits)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_qos
short_description: Program per-VLAN QoS through mlnx_qos, iproute2 dcb or a tc shaper
description:
  - Sets every VLAN's egress-qos-map (all socket priorities to the VLAN's user
    priority), then on each port the priority to traffic class map, the TSA and
    ETS share and the rate limit of every traffic class.
  - Back end per port, with C(backend=auto) - C(mlnx_qos) when the tool is
    installed and answers for the port (ConnectX, DCB netlink), else iproute2
    C(dcb) when the port answers DCB queries, else a software shaper with
    C(tc) (HTB classes chosen by the VLAN PCP) so the same limits hold on any NIC.
  - Reads the port back and compares after the hardware's quantisation
    (ConnectX keeps 100 Mb/s steps), so a second run reports no change.
version_added: "0.1.0"
options:
  host:
    description: The host's C(cxfab_host) (keys qos, vlans, bond).
    type: dict
    required: true
  ports:
    description: Ports to program. Default the bond members (the ports carrying the VLANs).
    type: list
    elements: str
    default: []
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
    host: "{{ cxfab_host }}"
"""

RETURN = r"""
ports:
  description: Per port - backend, expected and observed state, differences before the run.
  type: dict
  returned: always
egress_maps:
  description: VLAN interface -> egress map read back ({priority: user priority}).
  type: dict
  returned: always
reapply_commands:
  description: Argument lists that program the same state from scratch (for the boot hook).
  type: list
  elements: list
  returned: always
"""

import json  # noqa: E402
import os  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.hostnet import IntentError  # noqa: E402
from ansible.module_utils.cxfab.hostnet import qos as backends  # noqa: E402
from ansible.module_utils.cxfab.hostnet.intent import network_intent, qos_plan  # noqa: E402
from ansible.module_utils.cxfab.hostnet.linkplan import normalise_map  # noqa: E402

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


def vlan_egress(run, ip, name):
    _, out, _ = run([ip, "-d", "-j", "link", "show", "dev", name])
    links = json.loads(out.strip() or "[{}]")
    info = (links[0].get("linkinfo") or {}).get("info_data") or {}
    return {int(m["from"]): int(m["to"]) for m in info.get("egress_qos") or []}


def egress_args(ip, name, mapping):
    pairs = [f"{prio}:{mapping.get(prio, 0)}" for prio in range(8)]
    return [ip, "link", "set", "dev", name, "type", "vlan", "egress-qos-map", *pairs]


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

    def available(self, port):
        if self.name == "mlnx_qos":
            tool = self.module.get_bin_path(self.module.params["mlnx_qos_path"])
            if not tool:
                return False
            self.tools["mlnx_qos"] = tool
            return self.run([tool, "-i", port], check=False)[0] == 0
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
            return backends.mlnx_qos_state(self.run([self.tools["mlnx_qos"], "-i", port])[1])
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
            "host": {"type": "dict", "required": True},
            "ports": {"type": "list", "elements": "str", "default": []},
            "backend": {
                "type": "str",
                "default": "auto",
                "choices": ["auto", "mlnx_qos", "dcb", "tc"],
            },
            "mlnx_qos_path": {"type": "str", "default": "mlnx_qos"},
            "tc_ceiling_mbps": {"type": "int", "default": 0},
        },
        supports_check_mode=True,
    )
    host = module.params["host"]
    try:
        intent = network_intent(host)
        plan = qos_plan(host)
    except IntentError as exc:
        module.fail_json(msg=str(exc), path=exc.path)
    ports = (
        module.params["ports"]
        or (intent["bond"] or {}).get("members")
        or sorted({v["link"] for v in intent["vlans"]})
    )
    for port in ports:
        if not os.path.exists(f"/sys/class/net/{port}"):
            module.fail_json(msg=f"ports: interface {port} does not exist", path="ports")
    run = Runner(module)
    ip = module.get_bin_path("ip", required=True)
    changed = False
    before_all, after_all, reapply = {}, {}, []

    egress_maps = {}
    for vlan in intent["vlans"]:
        wanted = vlan["egress_qos_map"]
        if wanted is None:
            continue
        if not os.path.exists(f"/sys/class/net/{vlan['name']}"):
            module.fail_json(
                msg=f"cxfab_host.vlans: {vlan['name']} does not exist (run host_network first)",
                path="cxfab_host.vlans",
            )
        have = vlan_egress(run, ip, vlan["name"])
        command = egress_args(ip, vlan["name"], wanted)
        reapply.append(command)
        before_all[vlan["name"]] = {"egress_qos_map": normalise_map(have)}
        if normalise_map(have) != normalise_map(wanted):
            changed = True
            if not module.check_mode:
                run(command)
                have = vlan_egress(run, ip, vlan["name"])
            else:
                have = wanted
        after_all[vlan["name"]] = {"egress_qos_map": normalise_map(have)}
        egress_maps[vlan["name"]] = normalise_map(have)

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
        reapply.extend(commands)
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
    module.exit_json(
        changed=changed,
        ports=port_results,
        egress_maps=egress_maps,
        plan=plan,
        reapply_commands=reapply,
        diff={"before": before_all, "after": after_all},
    )


if __name__ == "__main__":
    main()
