#!/usr/bin/python
"""Ansible module: run the clients of a batch of runs, one run after another."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_workload_clients
short_description: Run each run's clients together, one run after another
description:
  - For every run, starts all its clients at once (its parallel pairs or processes;
    a workload run has one), waits for them, then goes on with the next run - two
    runs never overlap.
  - A run with C(skip) (its server is not listening, or the plan skipped it) is not
    run and keeps its reason. A client longer than C(timeout) is killed (its process
    group). Clients are not retried - their servers were seen listening before
    (cxfab_workload_servers).
  - With C(judge=reading) a client that exits 0 must also print the workload's
    reading (the same judgement as the filter cxfab_workload_client_error) - iperf3 -J
    exits 0 when it could not connect.
  - One run failing does not stop the next; the module fails only on bad input.
  - Check mode runs nothing and reports every run as not run.
version_added: "0.1.0"
options:
  runs:
    description: >-
      Per run, C(clients) (a list of argv) or C(skip) (why it does not run); with
      C(judge=reading) also the run's C(tool) (a workload plan entry).
    type: list
    elements: dict
    required: true
  judge:
    description: What makes a run good, its clients' exit status or also their reading.
    type: str
    choices: [exit, reading]
    default: exit
  timeout:
    description: Seconds one client may run.
    type: int
    default: 300
author: cxfab
"""

EXAMPLES = r"""
- name: Run the clients of a batch
  cxfab_workload_clients:
    runs: "{{ batch.runs | cxfab_batch_client_runs(batch.servers, started.missing) }}"
    judge: reading
    timeout: 300
"""

RETURN = r"""
runs:
  description: >-
    Per run, clients (each rc, stdout, stderr, fault), skip ('' when it ran) and
    error ('' when every client exited 0, with a reading under judge=reading).
  type: list
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.workloads.batch import (  # noqa: E402
    check_client_runs,
    run_groups,
)
from ansible.module_utils.cxfab.workloads.pair_runs import client_error  # noqa: E402

CHECK_MODE = "not run in check mode"


def main():
    module = AnsibleModule(
        argument_spec={
            "runs": {"type": "list", "elements": "dict", "required": True},
            "judge": {"type": "str", "choices": ["exit", "reading"], "default": "exit"},
            "timeout": {"type": "int", "default": 300},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["timeout"] < 1:
        module.fail_json(msg=f"timeout: expected seconds >= 1, got {p['timeout']}", runs=[])
    try:
        check_client_runs(p["runs"])
        if p["judge"] == "reading":
            for index, run in enumerate(p["runs"]):
                if not isinstance(run.get("tool"), str):
                    raise ValueError(f"runs[{index}].tool: judge=reading needs the run's tool")
    except ValueError as exc:
        module.fail_json(msg=str(exc), runs=[])
    if module.check_mode:
        not_run = {"clients": [], "skip": CHECK_MODE, "error": CHECK_MODE}
        module.exit_json(changed=False, runs=[dict(not_run) for _ in p["runs"]])
    judge = client_error if p["judge"] == "reading" else None
    module.exit_json(changed=bool(p["runs"]), runs=run_groups(p["runs"], p["timeout"], judge))


if __name__ == "__main__":
    main()
