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


ROOT = Path(__file__).resolve().parents[2]
STAGE_ROLES = {  # stage: (role, its module, the one definition of the module's arguments)
    "network": ("host_network", "cxfab_host_network", "__host_network_args"),
    "qos": ("host_qos", "cxfab_host_qos", "__host_qos_args"),
    "irq": ("irq_affinity", "cxfab_irq_affinity", "__irq_affinity_args"),
    "rdma": ("rdma_stack", "cxfab_rdma_stack", "__rdma_stack_args"),
}


def _tasks(items, defaults=None):
    """Every task of a task list (blocks walked), with the module_defaults in force."""
    for item in items or []:
        here = {**(defaults or {}), **(item.get("module_defaults") or {})}
        if "block" in item:
            for key in ("block", "rescue", "always"):
                yield from _tasks(item.get(key), here)
        else:
            yield item, here


def _every_task():
    """(file, task, module_defaults) for each task of the roles and the playbooks."""
    for path in sorted((ROOT / "roles").glob("*/tasks/*.yml")):
        for task, defaults in _tasks(yaml.safe_load(path.read_text())):
            yield path, task, defaults
    for path in sorted((ROOT / "playbooks").glob("*.yml")):
        for play in yaml.safe_load(path.read_text()) or []:
            if "hosts" not in play:  # a task file (verify_health.yml) or an import
                for task, defaults in _tasks([play]):
                    yield path, task, defaults
                continue
            for key in ("pre_tasks", "tasks", "post_tasks", "handlers"):
                for task, defaults in _tasks(play.get(key), play.get("module_defaults")):
                    yield path, task, defaults


@pytest.mark.parametrize("stage", sorted(STAGE_ROLES))
def test_every_call_of_a_stage_module_takes_the_roles_one_definition(stage):
    """The run, the comparison, the one-call reading and verify must judge the same
    thing: a call that names an argument of its own (or lives outside the role, where
    the role's definition does not reach) would diverge from the others."""
    role, module, name = STAGE_ROLES[stage]
    calls = [(path, task, defaults) for path, task, defaults in _every_task() if module in task]
    assert any(path.name == "main.yml" for path, _, _ in calls), f"{role} never calls {module}"
    for path, task, defaults in calls:
        where = f"{path.relative_to(ROOT)}: {task.get('name')}"
        assert path.is_relative_to(ROOT / "roles" / role / "tasks"), where
        assert not task[module], f"{where} passes its own arguments"
        assert defaults.get(module) == f"{{{{ {name} }}}}", where
    definition = yaml.safe_load((ROOT / "roles" / role / "vars" / "main.yml").read_text())[name]
    spec = check._stage_code(stage).ARGUMENT_SPEC
    assert set(definition) <= set(spec) and "structured" in definition
    (reading,) = yaml.safe_load((ROOT / "roles" / role / "tasks" / "state.yml").read_text())
    value = reading["ansible.builtin.set_fact"]["cxfab_host_state_args"]
    assert f"combine({{'{stage}': {name}}})" in value


def _load(path):
    """A YAML file as Ansible reads it (its templates trusted, as a playbook's are)."""
    from ansible.parsing.dataloader import DataLoader

    return DataLoader().load_from_file(str(path), trusted_as_template=True)


def _verify_call(module):
    """verify.yml's call of `module`: (its own arguments, module_defaults, role dir, vars)."""
    for play in _load(ROOT / "playbooks" / "verify.yml"):
        for task, defaults in _tasks(play.get("tasks"), play.get("module_defaults")):
            if module in task:
                return task[module] or {}, defaults, None, task.get("vars") or {}
            include = task.get("ansible.builtin.include_role")
            if include:
                role = ROOT / "roles" / include["name"]
                path = role / "tasks" / f"{include.get('tasks_from', 'main')}.yml"
                for inner, inner_defaults in _tasks(_load(path)):
                    if module in inner:
                        return inner[module] or {}, inner_defaults, role, task.get("vars") or {}
    raise AssertionError(f"verify.yml does not read {module}")


@pytest.mark.parametrize(
    "module,variable,argument",
    [
        ("cxfab_host_network", "host_network_persist", "persist"),
        ("cxfab_host_qos", "host_qos_persist", "persist"),
    ],
)
def test_verify_reads_a_stage_with_the_inventorys_settings(module, variable, argument):
    """With host_network_persist: false the run writes no networkd files (host_qos_persist:
    false, no agent): verify must read with the same setting, or it reports as drift what
    the run was told not to do."""
    from ansible.parsing.dataloader import DataLoader
    from ansible.template import Templar

    own, defaults, role, include_vars = _verify_call(module)
    loader = DataLoader()
    variables = {"verify_structured": {"network": {}}, "hostvars": {"localhost": {}}}
    for part in ("defaults", "vars"):
        if role is not None and (role / part / "main.yml").exists():
            variables.update(_load(role / part / "main.yml"))
    variables.update({key: value for key, value in include_vars.items()})
    variables[variable] = False  # the inventory's override
    templar = Templar(loader=loader, variables=variables)
    from_defaults = defaults.get(module)
    given = dict(templar.template(from_defaults) if from_defaults else {})
    given.update(templar.template(own))
    spec = check._stage_code({"cxfab_host_network": "network", "cxfab_host_qos": "qos"}[module])
    effective = given.get(argument, spec.ARGUMENT_SPEC[argument].get("default"))
    assert effective in (False, "False", "false"), (module, argument, effective)
