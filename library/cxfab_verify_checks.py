#!/usr/bin/python
"""Ansible module: turn what verify.yml observed into checks in the report's shape."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_verify_checks
short_description: Judge the observations of a verify run against the fabric intent
description:
  - Pure computation (run it on the controller) - host facts and read-only module
    runs, switch health results, per-VLAN QoS measurements and workload results
    become C({id, target, category, status, expected, observed, message}) checks,
    plus the bandwidth and QoS series for the report's plots.
  - Verify cannot shrink - every check the structured config implies for the sections
    that ran must appear; one the run did not produce fails C(not measured - <why>).
    C(skip) is only "not applicable by intent"; a missing or mistyped tool, an
    unreachable host or a missing start snapshot fails. A failure or warning matched
    by O(waive) becomes C(waived).
version_added: "0.1.0"
options:
  fabric:
    description: The validated fabric's C(hosts), C(vlans) and C(workloads) (no credentials).
    type: dict
    required: true
  sections:
    description:
      - Sections of verify.yml that ran (switches, hosts, cabling, health, dataplane, qos,
        perf), as C(cxfab_verify_sections) reads them from the tags. C(health) (link, cable
        and card health) and C(dataplane) (the probe through the switch pair) are judged
        only when listed. C(cabling) without C(hosts) judges only each cabled port's LLDP
        neighbour.
    type: list
    elements: str
    default: [switches, hosts, health, dataplane, qos, perf]
  host_data:
    description: Per host - facts, firmware, link_type, network, qos (registered results).
    type: dict
    default: {}
  switch_results:
    description: Per switch - the cxfab_onyx_health result.
    type: dict
    default: {}
  qos_measurements:
    description: Per client host - the cxfab_qos_measure result.
    type: dict
    default: {}
  workload_results:
    description: The rdma_workloads results.
    type: list
    elements: dict
    default: []
  workload_error:
    description: Why the workload run failed, when it did.
    type: str
    default: ""
  health:
    description: >-
      Per host - C({start, end}), the cxfab_nic_health results of verify_health.yml.
      Left out, no link/cable/card health check is made.
    type: dict
  supported_cables:
    description: The fabric's supported cables (C({vendor, part_number}) entries).
    type: list
    elements: dict
    default: []
  max_temp_c:
    description: >-
      NIC ASIC temperature (C) from which C(temp.<nic>) fails; keep it below the card's
      own thermal limits (the adapter's user manual gives them).
    type: float
    default: 95
  switches:
    description: The switches of the run; each must return its health checks.
    type: list
    elements: str
    default: []
  fleet:
    description: >-
      The generated plan (C(workloads.plan=generated)) - C(plan), the published plan's JSON
      text; C(results), per client host the tests it ran; C(seconds), per host how long its
      rounds took. Judged with the C(perf) section into C(perf.fleet.*) checks.
    type: dict
    default: {}
  waive:
    description: >-
      The inventory's C(verify_waive) - a list of C({id, target, reason}); C(id) and
      C(target) are globs, C(target) is optional, C(reason) is shown in the report.
    type: list
    elements: raw
    default: []
author: cxfab
"""

EXAMPLES = r"""
- name: Judge everything observed
  cxfab_verify_checks:
    fabric:
      hosts: "{{ cxfab_fabric.hosts }}"
      vlans: "{{ cxfab_fabric.vlans }}"
      workloads: "{{ cxfab_fabric.workloads }}"
    host_data: "{{ verify_host_data }}"
  delegate_to: localhost
"""

RETURN = r"""
checks: {description: Every check., type: list, returned: always}
bandwidth: {description: Bandwidth vs message size series., type: list, returned: always}
qos: {description: Per-VLAN throughput series., type: list, returned: always}
fleet:
  description: The fleet's pair matrix and verdict (None without a generated plan).
  type: dict
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.host.net import IntentError  # noqa: E402
from ansible.module_utils.cxfab.verify.checks import WaiverError, all_checks  # noqa: E402

ARGUMENT_SPEC = {
    "fabric": {"type": "dict", "required": True},
    "sections": {
        "type": "list",
        "elements": "str",
        "default": ["switches", "hosts", "health", "dataplane", "qos", "perf"],
    },
    "host_data": {"type": "dict", "default": {}},
    "switch_results": {"type": "dict", "default": {}},
    "qos_measurements": {"type": "dict", "default": {}},
    "workload_results": {"type": "list", "elements": "dict", "default": []},
    "workload_error": {"type": "str", "default": ""},
    "health": {"type": "dict"},
    "supported_cables": {"type": "list", "elements": "dict", "default": []},
    "max_temp_c": {"type": "float", "default": 95.0},
    "switches": {"type": "list", "elements": "str", "default": []},
    "waive": {"type": "list", "elements": "raw", "default": []},
    "fleet": {"type": "dict", "default": {}},
}


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    if not 0 < p["max_temp_c"] <= 150:
        module.fail_json(msg=f"max_temp_c: {p['max_temp_c']:g} C is not a limit in (0, 150] C")
    try:
        result = all_checks(
            p["fabric"],
            p["host_data"],
            p["switch_results"],
            p["qos_measurements"],
            p["workload_results"],
            p["sections"],
            p["workload_error"],
            p["health"],
            p["supported_cables"],
            p["max_temp_c"],
            p["switches"],
            p["waive"],
            p["fleet"],
        )
    except WaiverError as exc:
        module.fail_json(msg=str(exc))
    except IntentError as exc:
        module.fail_json(msg=f"fabric.hosts: {exc}", path=exc.path)
    except (KeyError, TypeError, ValueError) as exc:
        module.fail_json(msg=f"observations do not have the expected shape: {exc!r}")
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
