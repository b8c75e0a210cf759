#!/usr/bin/python
"""Ansible module: measure each VLAN's throughput with iperf3 and judge it against its limit."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_qos_measure
short_description: Per-VLAN iperf3 throughput against the VLAN's QoS limit
description:
  - Runs C(iperf3 -c <peer VLAN address> -P <parallel> -t <duration> -J) toward servers
    started on the peer, for every VLAN at the same time, and reads the received
    throughput. The unlimited VLAN is offered a fixed load just above every limit
    (C(-b) per stream) and is the same-moment reference for what the path carried.
  - A limited VLAN passes within C(tolerance) of C(limit_mbps x rate_scale). A reading
    above the band fails at once (the limit does not hold); one below it fails only
    when the unlimited VLAN carried more than that limit at the same moment (the path
    had room) or when there is no unlimited VLAN to compare with; otherwise the machine
    was starved, the round is measured again, and after O(retries) the VLAN is
    reported C(inconclusive), never passed.
  - See module_utils/cxfab/host/net/measure.py for the rules.
version_added: "0.1.0"
options:
  targets:
    description: "List of {vlan, address, port, limit_mbps (null = unlimited)}."
    type: list
    elements: dict
    required: true
  parallel:
    description: Parallel streams per VLAN.
    type: int
    default: 16
  duration:
    description: Seconds per round.
    type: int
    default: 10
  tolerance:
    description: Allowed relative deviation from the limit.
    type: float
    default: 0.1
  rate_scale:
    description: Expected fraction of the configured limit the shaper delivers.
    type: float
    default: 1.0
  retries:
    description: >-
      Rounds measured again while some VLAN has neither passed nor run above its
      band (a starved or a low round).
    type: int
    default: 2
  iperf3_path:
    description: iperf3 executable.
    type: str
    default: iperf3
author: cxfab
"""

EXAMPLES = r"""
- name: Measure per-VLAN QoS
  cxfab_qos_measure:
    targets:
      - {vlan: 10, address: 12.0.10.25, port: 5301, limit_mbps: 1000}
      - {vlan: 30, address: 12.0.30.25, port: 5303, limit_mbps: null}
"""

RETURN = r"""
results:
  description: >-
    Per VLAN - limit_mbps, configured_limit_mbps, measured_mbps (the reading the verdict
    rests on), readings_mbps and reference_mbps (per round), verdict (pass, fail,
    inconclusive), reason, ratio, expected, passed.
  type: list
  elements: dict
  returned: always
passed:
  description: Every VLAN passed.
  type: bool
  returned: always
"""

import subprocess  # noqa: E402

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.net.measure import (  # noqa: E402
    reference_offer_mbps,
    settled,
    verdicts,
)
from ansible.module_utils.cxfab.workloads.pair_runs import iperf3_bps  # noqa: E402


def client_argv(iperf3, target, params, offer_mbps):
    argv = [
        iperf3, "-c", str(target["address"]), "-p", str(target["port"]),
        "-P", str(params["parallel"]), "-t", str(params["duration"]), "-J",
    ]  # fmt: skip
    if not target.get("limit_mbps") and offer_mbps:
        per_stream = offer_mbps * 1e6 / params["parallel"]
        argv += ["-b", f"{per_stream:.0f}"]
    return argv


def measure_round(module, iperf3, targets, params, offer_mbps):
    """Every VLAN at once; {vlan: Mb/s}. A client without a reading fails the module."""
    clients = [
        subprocess.Popen(
            client_argv(iperf3, target, params, offer_mbps),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for target in targets
    ]
    readings = {}
    for index, (target, client) in enumerate(zip(targets, clients, strict=True)):
        try:
            out, _err = client.communicate(timeout=params["duration"] + 60)
        except subprocess.TimeoutExpired:
            for other in clients:
                other.kill()
            module.fail_json(msg=f"targets[{index}] (VLAN {target['vlan']}): iperf3 hung")
        try:
            readings[target["vlan"]] = round(iperf3_bps(out) / 1e6, 1)
        except ValueError as exc:
            for other in clients:
                other.kill()
            module.fail_json(
                msg=f"targets[{index}] (VLAN {target['vlan']}): {exc}", rc=client.returncode
            )
    return readings


def main():
    module = AnsibleModule(
        argument_spec={
            "targets": {"type": "list", "elements": "dict", "required": True},
            "parallel": {"type": "int", "default": 16},
            "duration": {"type": "int", "default": 10},
            "tolerance": {"type": "float", "default": 0.1},
            "rate_scale": {"type": "float", "default": 1.0},
            "retries": {"type": "int", "default": 2},
            "iperf3_path": {"type": "str", "default": "iperf3"},
        },
        supports_check_mode=True,
    )
    params = module.params
    iperf3 = module.get_bin_path(params["iperf3_path"], required=True)
    if module.check_mode:
        module.exit_json(changed=False, results=[], passed=True, skipped=True)
    targets = []
    for index, target in enumerate(params["targets"]):
        for key in ("vlan", "address", "port"):
            if key not in target:
                module.fail_json(msg=f"targets[{index}].{key}: missing")
        limit = target.get("limit_mbps")
        targets.append(
            {
                **target,
                "configured_limit_mbps": limit,
                "limit_mbps": round(limit * params["rate_scale"], 3) if limit else None,
            }
        )
    tolerance = params["tolerance"]
    offer = reference_offer_mbps(targets, tolerance)
    rounds = [measure_round(module, iperf3, targets, params, offer)]
    while len(rounds) <= params["retries"] and not settled(rounds, targets, tolerance):
        rounds.append(measure_round(module, iperf3, targets, params, offer))
    results = verdicts(rounds, targets, tolerance)
    module.exit_json(
        changed=False,
        results=results,
        rounds=len(rounds),
        passed=all(r["passed"] for r in results),
    )


if __name__ == "__main__":
    main()
