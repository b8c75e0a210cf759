"""Read a whole host in one process: each stage's own `run` in check mode, in order.

A no-op rollout used to pay one module call per stage and host (Python start-up and
the module payload, seconds each on a slow target) only to learn that nothing
differs. `read_host` runs the stages' own code in check mode instead, so "settled"
means exactly what the stage itself would have found, and the rollout skips the
stages it names.

It stops at the first stage that would change something: a later stage reads state
an earlier one is about to change (a NIC reset drops the port's QoS, a rebuilt bond
its egress map), so it runs for real in its turn and is not read here at all.
"""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

# The host stages in the order site.yml runs them, each with the tags that select it
# (a stage is read only when the run selects it: `--tags host_qos` reads QoS alone).
STAGES = (
    ("nic", ("nic", "nic_firmware", "nic_link_type")),
    ("network", ("network", "host_network")),
    ("qos", ("qos", "host_qos")),
    ("irq", ("irq", "irq_affinity")),
    ("rdma", ("rdma", "rdma_stack")),
)
STAGE_NAMES = tuple(name for name, _ in STAGES)


class StageFailed(Exception):
    """A stage's fail_json inside the combined read: its message and extra fields."""

    def __init__(self, msg: str, fields: dict):
        super().__init__(msg)
        self.msg, self.fields = msg, fields


class CheckOnly:
    """One stage's view of the module: its own parameters, check mode forced on.

    Everything else (run_command, get_bin_path, warn, ...) is the real module's, so
    the stage reads the host exactly as it does on its own. fail_json raises instead
    of exiting, so the caller can name the stage.
    """

    check_mode = True

    def __init__(self, module, params: dict):
        self._module = module
        self.params = params

    def fail_json(self, msg, **fields):
        raise StageFailed(msg, fields)

    def exit_json(self, **_result):  # pragma: no cover - stages return their result
        raise TypeError("a stage returns its result; it does not exit")

    def __getattr__(self, name):
        return getattr(self._module, name)


def selected(run_tags, skip_tags, wanted=None) -> list[str]:
    """The stages a run with these tags (ansible_run_tags, ansible_skip_tags) executes."""
    run_tags, skip_tags = set(run_tags or ["all"]), set(skip_tags or [])
    out = []
    for name, tags in STAGES:
        if wanted is not None and name not in wanted:
            continue
        chosen = "all" in run_tags or bool(run_tags & set(tags))
        if chosen and not (skip_tags & set(tags)):
            out.append(name)
    return out


def _stage_code(name):
    """The stage's module_utils, imported only when read (network brings pyroute2).

    Spelled out, not importlib: AnsiballZ packs only the module_utils it finds in
    import statements.
    """
    if name == "nic":
        from . import nic_state as code
    elif name == "network":
        from . import network as code
    elif name == "qos":
        from . import qos as code
    elif name == "irq":
        from . import irq as code
    elif name == "rdma":
        from . import rdma as code
    else:
        raise KeyError(name)
    return code


def differs(name: str, result: dict) -> bool:
    """Whether the stage would change the host (the NIC stage names what it needs)."""
    if name == "nic":
        return bool(result.get("changes_needed"))
    return bool(result.get("changed"))


def read_host(module, stage_args: dict) -> dict:
    """Run the given stages in check mode, in site.yml's order, until one differs.

    Returns {"stages": {name: result}, "settled": [...], "differs": name or None,
    "unread": [...], "unreadable": {name: reason}}. A stage that cannot be read (its
    arguments refused, its fail_json) is never settled: it ends the reading like a
    stage that differs and runs in full in its turn, where it fails with its own
    message if the cause is still there (a tool its role installs first may be
    missing now).
    """
    unknown = sorted(set(stage_args) - set(STAGE_NAMES))
    if unknown:
        raise StageFailed(f"stages: unknown stage(s) {unknown}; known: {list(STAGE_NAMES)}", {})
    order = [name for name in STAGE_NAMES if name in stage_args]
    results, settled = {}, []
    for position, name in enumerate(order):
        unreadable = _read_stage(module, name, stage_args[name], results)
        if unreadable is not None or differs(name, results[name]):
            return {
                "stages": results,
                "settled": settled,
                "differs": name,
                "unread": order[position + 1 :],
                "unreadable": {} if unreadable is None else {name: unreadable},
            }
        settled.append(name)
    return {"stages": results, "settled": settled, "differs": None, "unread": [], "unreadable": {}}


def _read_stage(module, name: str, arguments: dict | None, results: dict) -> str | None:
    """Run one stage in check mode into results[name]; the reason when it cannot be read."""
    code = _stage_code(name)
    checked = ArgumentSpecValidator(code.ARGUMENT_SPEC).validate(arguments or {})
    if checked.error_messages:
        return "arguments: " + "; ".join(checked.error_messages)
    try:
        results[name] = code.run(CheckOnly(module, checked.validated_parameters))
    except StageFailed as exc:
        return exc.msg
    return None


def summary(reading: dict) -> str:
    """The reading in one line: what differs and why, what runs; or what is settled."""

    def detail(name):
        if name in reading["unreadable"]:
            return f"unreadable ({reading['unreadable'][name]})"
        result = reading["stages"].get(name) or {}
        said = result.get("msg") or "; ".join(result.get("actions") or [])
        return f"differs ({said})" if said else "differs"

    name = reading["differs"]
    if name:
        runs = ", ".join([name, *reading["unread"]])
        return f"{name} {detail(name)}; runs: {runs}"
    settled = [
        f"{n} ({reading['stages'][n]['msg']})" if reading["stages"][n].get("msg") else n
        for n in reading["settled"]
    ]
    return "settled, nothing to run: " + (", ".join(settled) or "no stage read")
