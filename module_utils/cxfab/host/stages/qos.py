"""The host QoS stage: egress map, prio->TC, TSA/share and per-TC rate limits, persistently.

The module cxfab_host_qos runs it; cxfab_host_state runs it in check mode with the
host's other stages, in one call.
"""

from __future__ import annotations

import os

from ..net import agent
from ..net import lossless as lossless_lib
from ..net import qos as backends

DEFAULT_CEILING_MBPS = 100_000
SYSFS_ROOT = "/"


class Runner:
    """run_command with argument lists; failures carry the command and its stderr."""

    def __init__(self, module):
        self.module = module

    def __call__(self, argv, check=True):
        rc, out, err = self.module.run_command(argv)
        if check and rc != 0:
            self.module.fail_json(
                msg=f"{' '.join(argv)} failed (rc={rc}): {(err or out).strip()}",
                rc=rc,
            )
        return rc, out, err


def port_speed_mbps(port):
    try:
        with open(f"/sys/class/net/{port}/speed", encoding="ascii") as handle:
            speed = int(handle.read().strip())
    except (OSError, ValueError):
        return None
    return speed if speed > 0 else None


class Backend:
    """Probe, read and program one port with one back end."""

    def __init__(self, module, run, name):
        self.module, self.run, self.name = module, run, name
        self.tools = {}
        self.legacy_units = False
        # mlnx_qos -i <port> answered the probe: that output is the first read too.
        self.probed = {}
        # The last `mlnx_qos -i <port>` text: it also carries trust and PFC.
        self.last_text = {}

    def available(self, port):
        if self.name == "mlnx_qos":
            tool = self.module.get_bin_path(self.module.params["mlnx_qos_path"])
            if not tool:
                return False
            self.tools["mlnx_qos"] = tool
            rc, out, _ = self.run([tool, "-i", port], check=False)
            if rc == 0:
                self.probed[port] = out
            return rc == 0
        if self.name == "dcb":
            tool = self.module.get_bin_path("dcb")
            if not tool:
                return False
            self.tools["dcb"] = tool
            self.legacy_units = backends.dcb_needs_legacy_units(
                self.run([tool, "-V"], check=False)[1]
            )
            return self.run([tool, "-j", "ets", "show", "dev", port], check=False)[0] == 0
        self.tools["tc"] = self.module.get_bin_path("tc", required=True)
        return True

    def ceiling(self, port):
        return (
            self.module.params["tc_ceiling_mbps"] or port_speed_mbps(port) or (DEFAULT_CEILING_MBPS)
        )

    def read(self, port):
        if self.name == "mlnx_qos":
            text = self.probed.pop(port, None)
            if text is None:
                text = self.run([self.tools["mlnx_qos"], "-i", port])[1]
            self.last_text[port] = text
            return backends.mlnx_qos_state(text)
        if self.name == "dcb":
            dcb = self.tools["dcb"]
            ets = self.run([dcb, "-j", "ets", "show", "dev", port])[1]
            rates = self.run([dcb, "-j", "maxrate", "show", "dev", port], check=False)[1]
            return backends.dcb_state(ets, rates or "{}", self.legacy_units)
        tc = self.tools["tc"]
        outputs = [
            self.run([tc, "-j", kind, "show", "dev", port, *extra])[1]
            for kind, extra in (("qdisc", []), ("class", []), ("filter", ["parent", "1:"]))
        ]
        if '"htb"' not in outputs[0]:
            outputs[2] = "[]"  # no HTB root: no filters of ours to read
        return backends.tc_state(*outputs, ceiling_mbps=self.ceiling(port))

    def read_lossless(self, port):
        """Trust and PFC of the port (call after read(): mlnx_qos reuses its text)."""
        if self.name == "mlnx_qos":
            text = self.last_text.get(port)
            if text is None:
                text = self.run([self.tools["mlnx_qos"], "-i", port])[1]
            return lossless_lib.mlnx_qos_state(text, f"mlnx_qos -i {port}")
        dcb = self.tools["dcb"]
        pfc = self.run([dcb, "-j", "pfc", "show", "dev", port])[1]
        app = self.run([dcb, "-j", "app", "show", "dev", port, "dscp-prio"])[1]
        return lossless_lib.dcb_state(pfc, app)

    def trust_commands(self, port, trust):
        """The commands that set the port's trust alone (mlnx_qos or dcb)."""
        if self.name == "mlnx_qos":
            return [[self.tools["mlnx_qos"], "-i", port, *lossless_lib.mlnx_qos_trust_args(trust)]]
        return lossless_lib.dcb_trust_args(self.tools["dcb"], port, {"trust": trust})

    def commands(self, port, plan, lossless=None):
        if self.name == "mlnx_qos":
            argv = backends.mlnx_qos_args(self.tools["mlnx_qos"], port, plan)
            return [argv + (lossless_lib.mlnx_qos_args(lossless) if lossless else [])]
        if self.name == "dcb":
            commands = backends.dcb_args(self.tools["dcb"], port, plan, self.legacy_units)
            if lossless:
                commands += lossless_lib.dcb_args(self.tools["dcb"], port, lossless)
            return commands
        burst_ms = self.module.params["tc_burst_ms"]
        return backends.tc_args(self.tools["tc"], port, plan, self.ceiling(port), burst_ms)


def read_lossless(module, backend, port):
    try:
        return backend.read_lossless(port)
    except lossless_lib.LosslessReadError as exc:
        module.fail_json(msg=f"lossless: {port}: {exc}", path="cxfab_roce.lossless")
    return {}


def apply_ecn(module, lossless, port_results, root=SYSFS_ROOT, label="lossless"):
    """Per port of `lossless` (its `ports`, `ecn_priorities`): ECN knobs read, enabled
    where off, read back. Results go into port_results[port]['ecn']; returns {port:
    {changed, missing, paths}}. The NIC runtime stage uses it for the roce profile's
    DCQCN priorities (label "dcqcn")."""
    where = "cxfab_roce.lossless" if label == "lossless" else "nics[].profiles.roce"
    out = {}
    for port in lossless["ports"]:
        try:
            before = lossless_lib.ecn_state(root, port, lossless["ecn_priorities"])
        except lossless_lib.LosslessReadError as exc:
            module.fail_json(msg=f"{label}: {exc}", path=where)
        paths = [
            lossless_lib.ecn_path(root, port, *knob.split("/"))
            for knob, value in sorted(before.items())
            if value is not None
        ]
        off = lossless_lib.ecn_to_enable(root, port, before)
        after = before
        if off and not module.check_mode:
            errors = agent.ecn_enable(off)
            if errors:
                module.fail_json(msg=f"{label}: ECN not enabled: " + "; ".join(errors))
            after = lossless_lib.ecn_state(root, port, lossless["ecn_priorities"])
            still = [knob for knob, value in after.items() if value == 0]
            if still:
                module.fail_json(msg=f"{label}: {port}: ECN {still} read 0 after writing 1")
        elif off:
            after = {knob: (1 if value == 0 else value) for knob, value in before.items()}
        port_results.setdefault(port, {})["ecn"] = {"before": before, "after": after}
        out[port] = {
            "changed": bool(off),
            "missing": lossless_lib.ecn_missing(port, before),
            "paths": paths,
        }
    return out


def apply_memlock(module, lossless, before_all, after_all):
    """The limits.d file of the locked-memory limit; True when it changed."""
    path = lossless_lib.MEMLOCK_FILE
    wanted = lossless_lib.memlock_text(lossless["memlock_kb"])
    try:
        with open(path, encoding="utf-8") as handle:
            current = handle.read()
    except FileNotFoundError:
        current = None
    before_all[path], after_all[path] = current, wanted
    if current == wanted:
        return False
    if not module.check_mode:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(wanted)
    return True


def choose_backend(module, run, port):
    wanted = module.params["backend"]
    order = ["mlnx_qos", "dcb", "tc"] if wanted == "auto" else [wanted]
    for name in order:
        backend = Backend(module, run, name)
        if backend.available(port):
            return backend
    module.fail_json(msg=f"ports: backend {wanted} cannot program {port} (tool missing or no DCB)")
    return None


ARGUMENT_SPEC = {
    "structured": {"type": "dict", "required": True},
    "ports": {"type": "list", "elements": "str", "default": []},
    "backend": {"type": "str", "default": "auto", "choices": ["auto", "mlnx_qos", "dcb", "tc"]},
    "mlnx_qos_path": {"type": "str", "default": "mlnx_qos"},
    "tc_ceiling_mbps": {"type": "int", "default": 0},
    "tc_burst_ms": {"type": "int", "default": backends.TC_BURST_MS_DEFAULT},
    "persist": {"type": "bool", "default": True},
}


def run(module) -> dict:
    plan = module.params["structured"].get("qos")
    lossless = module.params["structured"].get("lossless")
    if not plan:
        return {
            "changed": False,
            "ports": {},
            "plan": None,
            "reapply_commands": {},
            "persisted": [],
            "lossless_missing": [],
        }
    if not 1 <= module.params["tc_burst_ms"] <= 1000:
        module.fail_json(
            msg=f"tc_burst_ms: {module.params['tc_burst_ms']} is outside 1-1000 (milliseconds)",
            path="tc_burst_ms",
        )
    ports = module.params["ports"] or plan["ports"]
    for port in ports:
        if not os.path.exists(f"/sys/class/net/{port}"):
            module.fail_json(msg=f"qos.ports: interface {port} does not exist", path="ports")
    run = Runner(module)
    changed = False
    before_all, after_all, reapply = {}, {}, {}
    port_results = {}
    for port in ports:
        backend = choose_backend(module, run, port)
        odd = backends.mlnx_unrepresentable(plan) if backend.name == "mlnx_qos" else []
        if odd:
            module.fail_json(
                msg=f"cxfab_host.qos: rate limit of traffic class(es) {odd} is not a whole "
                f"Gb/s, which is all mlnx_qos can set on {port}",
                path="cxfab_host.qos",
            )
        expected = backends.expected_state(plan, backend.name)
        observed = backend.read(port)
        found = backends.differences(expected, observed)
        port_lossless = lossless if lossless and port in lossless["ports"] else None
        if port_lossless:
            if backend.name == "tc":
                module.fail_json(
                    msg=f"lossless: {port} has no DCB (neither mlnx_qos nor dcb answers for "
                    "it): PFC and DSCP trust cannot be set, so RoCE on it cannot be lossless",
                    path="cxfab_roce.lossless",
                )
            expected.update(lossless_lib.expected_state(port_lossless))
            observed.update(read_lossless(module, backend, port))
            found += lossless_lib.differences(expected, observed)
        commands = backend.commands(port, plan, port_lossless)
        reapply[port] = commands
        before_all[port] = observed
        if found:
            changed = True
            if not module.check_mode:
                for command in commands:
                    # Removing a root qdisc that is not there fails harmlessly.
                    run(command, check=command[1:3] != ["qdisc", "del"])
                observed = backend.read(port)
                left = backends.differences(expected, observed)
                if port_lossless:
                    observed.update(read_lossless(module, backend, port))
                    left += lossless_lib.differences(expected, observed)
                if left:
                    module.fail_json(
                        msg=f"{port}: {backend.name} read-back differs after apply: "
                        + "; ".join(left),
                        changed=True,
                        observed=observed,
                    )
            else:
                observed = expected
        after_all[port] = observed
        port_results[port] = {
            "backend": backend.name,
            "expected": expected,
            "read": before_all[port],
            "observed": observed,
            "differences_before": found,
        }
    ecn = apply_ecn(module, lossless, port_results) if lossless else {}
    missing = [m for port in sorted(ecn) for m in ecn[port]["missing"]]
    for message in missing:
        module.warn(f"lossless: {message}")
    changed |= any(info["changed"] for info in ecn.values())
    if lossless:
        changed |= apply_memlock(module, lossless, before_all, after_all)
    persisted = []
    if module.params["persist"]:
        sources = agent.sources()
        section = {"commands": reapply}
        if ecn:
            section["ecn"] = {port: info["paths"] for port, info in sorted(ecn.items())}
        persisted = agent.install("qos", section, sources, apply=not module.check_mode)
        if persisted and os.path.isdir("/run/systemd/system") and not module.check_mode:
            module.run_command(["systemctl", "daemon-reload"], check_rc=True)
            module.run_command(["systemctl", "enable", agent.UNIT_NAME], check_rc=True)
    return {
        "changed": changed or bool(persisted),
        "ports": port_results,
        "plan": plan,
        "reapply_commands": reapply,
        "persisted": persisted,
        "lossless_missing": missing,
        "diff": {"before": before_all, "after": after_all},
    }
