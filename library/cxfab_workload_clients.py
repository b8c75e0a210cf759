#!/usr/bin/python
"""Ansible module: run the clients of a host pair's workload runs, one after another."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_workload_clients
short_description: Run each client of a pair's workload runs in turn, retried until it reads
description:
  - Runs the client of every run of the plan strictly one after another (two
    measurements never overlap). A client is run again, C(delay) seconds later,
    while it exits non-zero or its output holds no reading (the same judgement as
    the filter cxfab_workload_client_error): its server may not listen yet.
  - An attempt longer than C(timeout) is killed (its process group) and not retried.
  - One run failing does not stop the next; each run's outcome is returned, the
    module itself fails only on bad input.
  - Check mode runs nothing and reports every run as not run.
version_added: "0.1.0"
options:
  runs:
    description: The plan of the pair (filter cxfab_workload_plan).
    type: list
    elements: dict
    required: true
  retries:
    description: Attempts after the first one while a client has no reading.
    type: int
    default: 10
  delay:
    description: Seconds between two attempts.
    type: float
    default: 3
  timeout:
    description: Seconds one attempt may run.
    type: int
    default: 300
author: cxfab
"""

EXAMPLES = r"""
- name: Run the clients
  cxfab_workload_clients:
    runs: "{{ plan }}"
    retries: 10
    timeout: 300
"""

RETURN = r"""
clients:
  description: Per run, rc, stdout, stderr, attempts and error ('' when it has a reading).
  type: list
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.workloads.clients import run_clients  # noqa: E402
from ansible.module_utils.cxfab.workloads.pair_runs import check_runs, client_error  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec={
            "runs": {"type": "list", "elements": "dict", "required": True},
            "retries": {"type": "int", "default": 10},
            "delay": {"type": "float", "default": 3},
            "timeout": {"type": "int", "default": 300},
        },
        supports_check_mode=True,
    )
    p = module.params
    for key, low in (("retries", 0), ("delay", 0), ("timeout", 1)):
        if p[key] < low:
            module.fail_json(msg=f"{key}: expected at least {low}, got {p[key]}", clients=[])
    try:
        check_runs(p["runs"])
    except ValueError as exc:
        module.fail_json(msg=str(exc), clients=[])
    if module.check_mode:
        not_run = {"rc": None, "stdout": "", "stderr": "", "attempts": 0}
        clients = [dict(not_run, error="not run in check mode") for _ in p["runs"]]
        module.exit_json(changed=False, clients=clients)
    clients = run_clients(p["runs"], client_error, p["retries"] + 1, p["delay"], p["timeout"])
    module.exit_json(changed=bool(clients), clients=clients)


if __name__ == "__main__":
    main()
