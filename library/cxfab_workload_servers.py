#!/usr/bin/python
"""Ansible module: start the servers of a host pair's workload runs, later collect them."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_workload_servers
short_description: Start every server of a pair's workload runs at once, then collect them
description:
  - C(state=started) spawns the server of every run of the plan (runs without one
    have none) detached, each in its own session, its output in files under C(dir),
    and returns once they listen. Servers a previous batch left running from the
    same C(dir) are killed first (they would hold the ports).
  - A run with C(listen) is waited for (up to C(listen_timeout) seconds) until its
    port listens, read from this host's kernel without connecting (a one-shot server
    would take a probe connection for its client) - TCP from /proc/net/tcp{,6},
    RDMA-CM from C(rdma -j resource show cm_id). A server whose process ended is not
    waited for; a read that fails counts as not listening. C(missing) lists the ports
    not listening, with why.
  - C(state=collected) gives the servers in C(wait_for) up to C(timeout) seconds to
    exit, kills the others and any still running then (its whole session), and
    returns how each ended; C(dir) is removed.
  - A server that fails is reported in its entry, not as a module failure.
  - Check mode starts, waits for and kills nothing.
version_added: "0.1.0"
options:
  state:
    description: Start the servers, or collect them.
    type: str
    choices: [started, collected]
    required: true
  dir:
    description: Run directory on the server host (outputs, exit statuses, manifest).
    type: path
    required: true
  runs:
    description: >-
      Per server, its C(server) (an argv, or null for a run without one) and, to be
      waited for until it listens, C(listen) (C(kind) tcp or rdma_cm, C(port));
      required to start.
    type: list
    elements: dict
  listen_timeout:
    description: Seconds the started servers with C(listen) get to listen.
    type: int
    default: 30
  lifetime:
    description: Seconds after which a server is killed even if never collected.
    type: int
    default: 3600
  wait_for:
    description: Indexes of the runs whose server is expected to exit (its client ran).
    type: list
    elements: int
    default: []
  timeout:
    description: Seconds the servers in wait_for get to exit.
    type: int
    default: 300
author: cxfab
"""

EXAMPLES = r"""
- name: Start the servers
  cxfab_workload_servers:
    state: started
    dir: /opt/cxfab/servers/pair1
    runs:
      - {tool: iperf3, server: [iperf3, -s, -1, -p, "18500"], listen: {kind: tcp, port: 18500}}
- name: Collect the servers
  cxfab_workload_servers:
    state: collected
    dir: /opt/cxfab/servers/pair1
    wait_for: [0, 1, 3]
    timeout: 300
"""

RETURN = r"""
started:
  description: Per run, the session id of its server (null for none). state=started.
  type: list
  returned: always
missing:
  description: The servers not listening once started, each kind, port and why. state=started.
  type: list
  returned: always
stale_killed:
  description: Session ids of a previous batch killed before the start.
  type: list
  returned: always
servers:
  description: >-
    Per run (null for none): rc (null when killed), stdout, stderr, killed, and
    error ('' when it exited 0). state=collected; empty in check mode.
  type: list
  returned: always
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible.module_utils.cxfab.workloads import listening  # noqa: E402
from ansible.module_utils.cxfab.workloads import servers as workload_servers  # noqa: E402
from ansible.module_utils.cxfab.workloads.pair_runs import check_runs  # noqa: E402


def main():
    module = AnsibleModule(
        argument_spec={
            "state": {"type": "str", "choices": ["started", "collected"], "required": True},
            "dir": {"type": "path", "required": True},
            "runs": {"type": "list", "elements": "dict"},
            "lifetime": {"type": "int", "default": 3600},
            "listen_timeout": {"type": "int", "default": 30},
            "wait_for": {"type": "list", "elements": "int", "default": []},
            "timeout": {"type": "int", "default": 300},
        },
        required_if=[("state", "started", ["runs"])],
        supports_check_mode=True,
    )
    p = module.params
    for key in ("lifetime", "timeout"):
        if p[key] <= 0:
            module.fail_json(msg=f"{key}: expected seconds > 0, got {p[key]}")
    if p["listen_timeout"] < 0:
        module.fail_json(msg=f"listen_timeout: expected seconds >= 0, got {p['listen_timeout']}")
    empty = {"started": [], "stale_killed": [], "servers": [], "missing": []}
    try:
        if p["state"] == "started":
            check_runs(p["runs"], sides=("server",))
            for index, run in enumerate(p["runs"]):
                if run.get("listen") is not None:
                    listening.check_listen(run["listen"], f"runs[{index}].listen")
            if module.check_mode:
                module.exit_json(changed=False, msg="check mode: no server started", **empty)
            servers = [run["server"] for run in p["runs"]]
            result = workload_servers.start(p["dir"], servers, p["lifetime"])
            listeners = [
                {**run["listen"], "pid": pid}
                for run, pid in zip(p["runs"], result["started"], strict=True)
                if pid and run.get("listen")
            ]
            readers = listening.kernel_readers(module.run_command)
            waited = listening.wait_listening(listeners, readers, p["listen_timeout"])
            module.exit_json(changed=any(servers), servers=[], missing=waited["missing"], **result)
        if module.check_mode:
            module.exit_json(changed=False, msg="check mode: no server collected", **empty)
        servers = workload_servers.collect(p["dir"], p["wait_for"], p["timeout"])
    except (OSError, ValueError) as exc:
        module.fail_json(msg=f"{p['state']}: {exc}", **empty)
    module.exit_json(changed=True, started=[], stale_killed=[], servers=servers, missing=[])


if __name__ == "__main__":
    main()
