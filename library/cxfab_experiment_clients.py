#!/usr/bin/python
"""Ansible module: run the clients of a batch of experiment runs, one run after another."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_experiment_clients
short_description: Run each experiment run's clients together, one run after another
description:
  - For every run, starts all its clients at once (its parallel pairs or processes),
    waits for them, then goes on with the next run: two runs never overlap.
  - A run with C(skip) (its server is not listening, or the plan skipped it) is not
    run and keeps its reason. A client longer than C(timeout) is killed (its process
    group). Clients are not retried: their servers were seen listening before.
  - One run failing does not stop the next; the module fails only on bad input.
  - Check mode runs nothing and reports every run as not run.
version_added: "0.1.0"
options:
  runs:
    description: Per run, C(clients) (a list of argv) or C(skip) (why it does not run).
    type: list
    elements: dict
    required: true
  timeout:
    description: Seconds one client may run.
    type: int
    default: 180
author: cxfab
"""

EXAMPLES = r"""
- name: Run the clients of a batch
  cxfab_experiment_clients:
    runs: "{{ batch | cxfab_experiment_client_runs(listening.missing) }}"
    timeout: 180
"""

RETURN = r"""
runs:
  description: Per run, clients (each rc, stdout, stderr, fault) and skip ('' when it ran).
  type: list
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.workloads.experiments.runner import (  # noqa: E402
    check_client_runs,
    run_groups,
)


def main():
    module = AnsibleModule(
        argument_spec={
            "runs": {"type": "list", "elements": "dict", "required": True},
            "timeout": {"type": "int", "default": 180},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["timeout"] < 1:
        module.fail_json(msg=f"timeout: expected seconds >= 1, got {p['timeout']}", runs=[])
    try:
        check_client_runs(p["runs"])
    except ValueError as exc:
        module.fail_json(msg=str(exc), runs=[])
    if module.check_mode:
        module.exit_json(
            changed=False,
            runs=[{"clients": [], "skip": "not run in check mode"} for _ in p["runs"]],
        )
    module.exit_json(changed=bool(p["runs"]), runs=run_groups(p["runs"], p["timeout"]))


if __name__ == "__main__":
    main()
