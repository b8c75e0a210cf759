#!/usr/bin/python
"""Ansible module: continuous timestamped pings from a host for the failover drill."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_drill_ping
short_description: Start continuous pings in the background, or collect their outputs
description:
  - C(state=started) - one C(ping -D -O -n -i <interval> -W 1 -c <duration/interval>) per
    target (each VLAN's gateway and peers, from the VLAN interface), in the background,
    output to C(<run_dir>/<id>.txt); returns at once. A count, not a deadline (C(-w)) -
    with a deadline iputils ping ends at the first ICMP error from the network (e.g. a
    Destination Host Unreachable while a switch fails over), the very event a drill
    provokes, and the path's figures after it would be lost.
  - C(state=collected) - waits (at most C(duration) + 30 s) until each ping has ended and
    returns its output; with C(stop=true) it first ends them (SIGINT - ping prints its
    summary) and waits at most 30 s. The drill's figures are computed on the controller
    (module_utils/cxfab/verify/drill.py).
version_added: "0.2.0"
options:
  state:
    description: started or collected.
    type: str
    choices: [started, collected]
    required: true
  interval:
    description: Seconds between probes (0.2 and above work unprivileged; root may go lower).
    type: float
    default: 0.1
  duration:
    description: Seconds each ping runs at most (as a probe count, C(-c)).
    type: int
    default: 60
  run_dir:
    description: Where the outputs are written on the host.
    type: path
    default: /tmp/cxfab-drill
  stop:
    description: With C(state=collected), end the pings now instead of waiting for C(duration).
    type: bool
    default: false
extends_documentation_fragment: [cxfab_dataplane_targets]
author: cxfab
"""

EXAMPLES = r"""
- name: Start the pings
  cxfab_drill_ping:
    targets: "{{ drill_targets }}"
    state: started
    duration: 40
"""

RETURN = r"""
results: {description: "[{id, kind, address, stdout}] (collected).", type: list, returned: always}
"""

import math  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.verify.dataplane import ping_id  # noqa: E402

IFNAME = re.compile(r"^[A-Za-z0-9_.:-]{1,15}$")
IPV4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")


def planned(module, targets):
    """[(id, kind, interface, address)] with every value checked before it reaches argv."""
    found = []
    for vlan in targets.get("vlans") or []:
        ends = (
            [("gateway", None, (vlan.get("gateway") or {}).get("address"))]
            if vlan.get("gateway")
            else []
        )
        ends += [("peer", p, p.get("address")) for p in vlan.get("peers") or []]
        for kind, peer, address in ends:
            check_id = ping_id(kind, vlan, peer).replace("dataplane.", "drill.")
            if not IFNAME.match(str(vlan.get("interface"))) or not IPV4.match(str(address)):
                module.fail_json(msg=f"targets.vlans[vlan {vlan.get('vlan')}]: bad interface "
                                 f"{vlan.get('interface')!r} or address {address!r}")  # fmt: skip
            found.append((check_id, kind, vlan["interface"], address))
    return found


def ping_argv(interval: float, duration: int, interface: str, address: str) -> list[str]:
    """The background ping of one target: `duration` seconds of probes as a count (-c).
    Never -w: with a deadline ping exits at the first ICMP error it receives."""
    count = max(1, math.ceil(duration / interval))
    return ["ping", "-D", "-O", "-n", "-i", str(interval), "-W", "1", "-c", str(count),
            "-I", interface, address]  # fmt: skip


def stop_ping(pid_file: str) -> None:
    """SIGINT to a ping this module started (it then prints its summary and ends)."""
    try:
        with open(pid_file, encoding="ascii") as handle:
            pid = int(handle.read().strip())
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            if handle.read().split(b"\0")[0].rsplit(b"/", 1)[-1] != b"ping":
                return  # ended, and the pid is someone else's now
        os.kill(pid, signal.SIGINT)
    except (OSError, ValueError):
        return  # ended already


def main():
    module = AnsibleModule(
        argument_spec={
            "targets": {"type": "dict", "required": True},
            "state": {"type": "str", "choices": ["started", "collected"], "required": True},
            "interval": {"type": "float", "default": 0.1},
            "duration": {"type": "int", "default": 60},
            "run_dir": {"type": "path", "default": "/tmp/cxfab-drill"},
            "stop": {"type": "bool", "default": False},
        },
        supports_check_mode=False,
    )
    p = module.params
    probes = planned(module, p["targets"])
    os.makedirs(p["run_dir"], mode=0o700, exist_ok=True)
    if p["state"] == "started":
        for check_id, _, interface, address in probes:
            cmd = ping_argv(p["interval"], p["duration"], interface, address)
            out = os.path.join(p["run_dir"], f"{check_id}.txt")
            with open(out, "w", encoding="ascii") as handle:
                # An argv of checked values, no shell; the ping outlives this module on purpose.
                proc = subprocess.Popen(
                    cmd, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
                )
            with open(out + ".pid", "w", encoding="ascii") as handle:
                handle.write(f"{proc.pid}\n")
        module.exit_json(changed=True, results=[{"id": c} for c, *_ in probes])
    if p["stop"]:
        for check_id, *_ in probes:
            stop_ping(os.path.join(p["run_dir"], f"{check_id}.txt.pid"))
    deadline = time.monotonic() + (30 if p["stop"] else p["duration"] + 30)
    results = []
    for check_id, kind, _, address in probes:
        out = os.path.join(p["run_dir"], f"{check_id}.txt")
        text = ""
        while time.monotonic() < deadline:
            with open(out, encoding="ascii", errors="replace") as handle:
                text = handle.read()
            if "packets transmitted" in text:
                break
            time.sleep(0.5)
        results.append({"id": check_id, "kind": kind, "address": address, "stdout": text})
    module.exit_json(changed=False, results=results)


if __name__ == "__main__":
    main()
