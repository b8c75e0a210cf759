"""cxfab_host_state: every host stage read in one call, in site.yml's order, check mode only.

The rollout skips the stages this reading calls settled, so a wrong "settled" leaves a
drifted host unrepaired: each test below would let such a reading through if broken.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from cxfab.host.stages import check
from test_hostnet_irq import root  # noqa: F401  (the fake sysfs/procfs fixture)


class FakeModule:
    """What a stage may use of AnsibleModule; check_mode False to prove it is forced."""

    check_mode = False

    def __init__(self):
        self.warnings = []

    def warn(self, text):
        self.warnings.append(text)


class Stage:
    """A stage whose read says `changed`; records the module view it was given."""

    def __init__(self, changed=False, fail=None, spec=None):
        self.changed, self.fail, self.seen = changed, fail, []
        self.ARGUMENT_SPEC = spec or {"structured": {"type": "dict", "required": True}}

    def run(self, module):
        self.seen.append({"check_mode": module.check_mode, "params": dict(module.params)})
        if self.fail:
            module.fail_json(msg=self.fail, path="cxfab_host.qos")
        return {"changed": self.changed}


@pytest.fixture
def stages(monkeypatch):
    fakes = {name: Stage() for name in check.STAGE_NAMES}
    fakes["nic"].run = lambda module: {"changed": False, "changes_needed": fakes["nic"].changed}
    monkeypatch.setattr(check, "_stage_code", fakes.__getitem__)
    return fakes


def args(*names):
    return {name: {"structured": {}} for name in names}


def test_every_stage_settled_reads_them_all_in_site_order(stages):
    given = dict(reversed(list(args(*check.STAGE_NAMES).items())))  # order of the dict: not used
    reading = check.read_host(FakeModule(), given)
    assert reading["settled"] == ["nic", "network", "qos", "irq", "rdma"]
    assert reading["differs"] is None and reading["unread"] == []


def test_the_first_stage_that_differs_stops_the_reading(stages):
    stages["qos"].changed = True
    reading = check.read_host(FakeModule(), args(*check.STAGE_NAMES))
    assert reading["settled"] == ["nic", "network"]
    assert reading["differs"] == "qos" and reading["unread"] == ["irq", "rdma"]
    # the later stages would read state the QoS change is about to alter: not read at all
    assert stages["irq"].seen == [] and stages["rdma"].seen == []


def test_a_nic_that_needs_a_change_is_a_differing_stage(stages):
    stages["nic"].changed = True  # changes_needed, although the NIC read changes nothing
    reading = check.read_host(FakeModule(), args("nic", "network"))
    assert reading["differs"] == "nic" and reading["settled"] == []


def test_stages_left_out_are_not_read_nor_settled(stages):
    reading = check.read_host(FakeModule(), args("qos"))
    assert reading["settled"] == ["qos"] and list(reading["stages"]) == ["qos"]
    assert stages["network"].seen == []


def test_each_stage_runs_in_check_mode_with_its_defaults_filled(stages):
    stages["irq"].ARGUMENT_SPEC = {
        "structured": {"type": "dict", "required": True},
        "irqbalance": {"type": "str", "default": "ban", "choices": ["ban", "stop", "ignore"]},
    }
    check.read_host(FakeModule(), args("irq"))
    assert stages["irq"].seen == [
        {"check_mode": True, "params": {"structured": {}, "irqbalance": "ban"}}
    ]


def test_bad_stage_arguments_make_the_stage_unreadable_never_settled(stages):
    stages["irq"].ARGUMENT_SPEC = {"irqbalance": {"type": "str", "choices": ["ban"]}}
    reading = check.read_host(FakeModule(), {"qos": {"structured": {}}, "irq": {"irqbalance": "x"}})
    assert reading["settled"] == ["qos"] and reading["differs"] == "irq"
    assert "irqbalance" in reading["unreadable"]["irq"] and stages["irq"].seen == []
    with pytest.raises(check.StageFailed, match="unknown stage"):
        check.read_host(FakeModule(), {"firewall": {}})


def test_a_failed_read_ends_the_reading_there_and_the_stage_runs_in_full(stages):
    stages["qos"].fail = "qos.ports: interface ens9 does not exist"
    reading = check.read_host(FakeModule(), args(*check.STAGE_NAMES))
    assert reading["settled"] == ["nic", "network"]
    assert reading["differs"] == "qos" and reading["unread"] == ["irq", "rdma"]
    assert reading["unreadable"] == {"qos": "qos.ports: interface ens9 does not exist"}
    assert "qos" not in reading["stages"] and stages["irq"].seen == []


def test_the_summary_says_what_differs_and_why_or_what_is_settled(stages):
    stages["nic"].run = lambda module: {"changes_needed": False, "msg": "every NIC runs it"}
    stages["qos"].run = lambda module: {"changed": True, "actions": []}
    reading = check.read_host(FakeModule(), args(*check.STAGE_NAMES))
    assert check.summary(reading) == "qos differs; runs: qos, irq, rdma"
    stages["qos"].fail = "mlnx_qos -i ens1f0 failed (rc=1)"
    stages["qos"].run = Stage.run.__get__(stages["qos"])
    reading = check.read_host(FakeModule(), args(*check.STAGE_NAMES))
    assert check.summary(reading) == (
        "qos unreadable (mlnx_qos -i ens1f0 failed (rc=1)); runs: qos, irq, rdma"
    )
    reading = check.read_host(FakeModule(), args("nic", "rdma"))
    assert check.summary(reading) == "settled, nothing to run: nic (every NIC runs it), rdma"


def test_the_tags_of_a_run_select_the_stages():
    assert check.selected(["all"], []) == list(check.STAGE_NAMES)
    assert check.selected(["host_qos", "rdma"], []) == ["qos", "rdma"]
    assert check.selected(["all"], ["qos"]) == ["nic", "network", "irq", "rdma"]
    assert check.selected(["switch_mlag"], []) == []
    assert check.selected(["all"], [], ["nic"]) == ["nic"]  # nic_firmware.yml's own reading


def test_the_real_irq_stage_reads_a_drift_without_writing(root):  # noqa: F811
    """The IRQ stage's own code on a fake tree: pinned wrong, it differs; nothing written."""
    structured = {"irq": {"interfaces": ["ens1"], "policy": "numa-local", "cpus": ""}}
    stage_args = {"irq": {"structured": structured, "persist": False, "root": root}}
    affinity = os.path.join(root, "proc/irq/40/smp_affinity_list")
    reading = check.read_host(FakeModule(), stage_args)
    assert reading["differs"] == "irq"
    assert reading["stages"]["irq"]["cpu_list"] == [2, 3]  # node 1's CPUs, read not written
    with open(affinity) as handle:
        assert handle.read() == "0-3\n"
    for irq, cpu in ((40, 2), (41, 3), (42, 2)):
        with open(os.path.join(root, f"proc/irq/{irq}/smp_affinity_list"), "w") as handle:
            handle.write(f"{cpu}\n")
    reading = check.read_host(FakeModule(), stage_args)
    assert reading["settled"] == ["irq"] and reading["differs"] is None


STAGE_ROLES = {  # stage: (role, the task file(s) calling its module, the module)
    "network": ("host_network", ("main.yml", "compare.yml"), "cxfab_host_network"),
    "qos": ("host_qos", ("main.yml",), "cxfab_host_qos"),
    "irq": ("irq_affinity", ("main.yml",), "cxfab_irq_affinity"),
    "rdma": ("rdma_stack", ("main.yml",), "cxfab_rdma_stack"),
}


@pytest.mark.parametrize("stage", sorted(STAGE_ROLES))
def test_a_stage_is_read_with_the_arguments_its_role_runs_it_with(stage):
    """The reading and the run must judge the same thing: each role's state.yml names
    exactly the arguments (and values) of its module task, or "settled" would mean a
    different run than the one skipped."""
    role, task_files, module = STAGE_ROLES[stage]
    tasks = Path(__file__).resolve().parents[2] / "roles" / role / "tasks"
    (reading_task,) = yaml.safe_load((tasks / "state.yml").read_text())
    read_with = next(iter(reading_task["vars"].values()))
    for task_file in task_files:
        calls = [t[module] for t in yaml.safe_load((tasks / task_file).read_text()) if module in t]
        assert calls, f"{role}/tasks/{task_file} does not call {module}"
        for run_with in calls:
            assert read_with == run_with, (role, task_file)
