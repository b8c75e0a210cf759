"""Lab tier: both Molecule scenarios, converge + idempotence + verify, on the deployed lab.

The scenarios are what docs/lab.md and docs/switches.md tell a contributor to run
(`molecule test -s lab`, `molecule test -s switches`); run here, a scenario that
drifts from the inventory or the playbooks fails CI instead of the first user who
tries it. The lab stays up: the lab scenario's destroy is skipped (`--destroy=never`)
and its create, on a lab that is up, only rewrites the inventory. On the lab as
site.yml left it, both converges are no-op runs, so idempotence is checked on a
configured fabric, and verify is the product's own (the switch section of
verify.yml) or the lab's shape (NUMA node of the data ports, management interface).
"""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.lab.vm.topology import REPO_ROOT
from tests.system.deployment import ANSIBLE_BIN

pytestmark = [pytest.mark.lab, pytest.mark.timeout(900)]

# Molecule 26 ends each action with "[<scenario> > <action>] Executed: <result>" (on a
# terminal "<scenario> ➜ <action>: Executed: ..."; both forms are read).
ACTION = re.compile(r"(?:\[\w+ > |➜ )(\w+)\]?:? Executed: (\w+)")


def molecule(scenario: str, *extra: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        PATH=f"{ANSIBLE_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        ANSIBLE_NOCOLOR="1",
        NO_COLOR="1",
        ANSIBLE_FORCE_COLOR="0",
    )
    return subprocess.run(
        [str(ANSIBLE_BIN / "molecule"), "test", "-s", scenario, *extra],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=850,
        check=False,
    )


def actions(run: subprocess.CompletedProcess) -> dict[str, str]:
    """Each action Molecule ran and how it ended (Successful, Skipped, Failed...)."""
    return dict(ACTION.findall(run.stdout + run.stderr))


def tail(run: subprocess.CompletedProcess, chars: int = 5000) -> str:
    return f"molecule exited {run.returncode}:\n{(run.stdout + run.stderr)[-chars:]}"


def test_switches_scenario_converges_idempotent_and_verifies(deployed):
    run = molecule("switches")
    assert run.returncode == 0, tail(run)
    ran = actions(run)
    for action in ("converge", "idempotence", "verify"):
        assert ran.get(action) == "Successful", f"{action}: {ran}\n{tail(run)}"
    # verify.yml's switch section ran checks and none failed (the exit says it too).
    summary = re.search(r"Summary: (\d+) passed, \d+ warned, (\d+) failed", run.stdout)
    assert summary and int(summary[1]) > 0 and summary[2] == "0", tail(run)


def test_lab_scenario_converges_idempotent_and_verifies(deployed):
    run = molecule("lab", "--destroy=never")
    assert run.returncode == 0, tail(run)
    ran = actions(run)
    for action in ("converge", "idempotence", "verify"):
        assert ran.get(action) == "Successful", f"{action}: {ran}\n{tail(run)}"
    # create found the lab up (or, with Molecule's state of an earlier run, skipped);
    # destroy was skipped, so the lab is still up for the suites after this one.
    assert ran.get("create") in ("Successful", "Skipped"), ran
    assert "Skipping, '--destroy=never' requested" in run.stdout + run.stderr, tail(run)
