#!/usr/bin/python
"""Ansible module: measure each VLAN's throughput with iperf3 and judge it against its limit."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_qos_measure
short_description: Per-VLAN iperf3 throughput against the VLAN's QoS limit
description:
  - Runs, one VLAN after the other, C(iperf3 -c <peer VLAN address> -P <parallel>
    -t <duration> -J) toward servers started on the peer, and reads the received
    throughput.
  - A limited VLAN passes within C(tolerance) of C(limit_mbps x rate_scale); an
    unlimited VLAN passes when it is above every limit measured in the same run.
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
    description: Seconds per VLAN.
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
      Times a VLAN measured below its band is measured again; the highest reading
      counts. A shaper never delivers more than its limit, a starved machine only
      less, so a low reading is retried and a high one (the limit does not hold)
      never is.
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
  description: Per VLAN - limit_mbps, expected, measured_mbps, ratio, passed.
  type: list
  elements: dict
  returned: always
passed:
  description: Every VLAN passed.
  type: bool
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.hostnet.measure import judge  # noqa: E402
from ansible.module_utils.cxfab.workloads import iperf3_bps  # noqa: E402


def best(measured: list[dict]) -> list[dict]:
    """Each VLAN with its highest reading as the measurement."""
    return [{**m, "measured_mbps": max(m["readings_mbps"])} for m in measured]


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

    def measure(index, target):
        argv = [
            iperf3, "-c", str(target["address"]), "-p", str(target["port"]),
            "-P", str(params["parallel"]), "-t", str(params["duration"]), "-J",
        ]  # fmt: skip
        rc, out, _err = module.run_command(argv)
        try:
            return iperf3_bps(out) / 1e6
        except ValueError as exc:
            module.fail_json(msg=f"targets[{index}] (VLAN {target['vlan']}): {exc}", rc=rc)
        return 0.0

    measured = []
    for index, target in enumerate(params["targets"]):
        for key in ("vlan", "address", "port"):
            if key not in target:
                module.fail_json(msg=f"targets[{index}].{key}: missing")
        limit = target.get("limit_mbps")
        measured.append(
            {
                "vlan": target["vlan"],
                "configured_limit_mbps": limit,
                "limit_mbps": round(limit * params["rate_scale"], 3) if limit else None,
                "readings_mbps": [round(measure(index, target), 1)],
            }
        )
    for _retry in range(params["retries"]):
        low = [i for i, r in enumerate(judge(best(measured), params["tolerance"])) if r["low"]]
        if not low:
            break
        for index in low:
            reading = measure(index, params["targets"][index])
            measured[index]["readings_mbps"].append(round(reading, 1))
    measured = best(measured)
    results = judge(measured, params["tolerance"])
    module.exit_json(changed=False, results=results, passed=all(r["passed"] for r in results))


if __name__ == "__main__":
    main()
