"""The host network stage: bond, VLAN interfaces, MTUs, addresses and IPoIB over netlink.

The module cxfab_host_network runs it; cxfab_host_state runs it in check mode with the
host's other stages, in one call.
"""

from __future__ import annotations

import os
import socket
import sys

from ansible.module_utils.basic import missing_required_lib

from ...structured import nmkeyfile
from .. import net as hostnet
from ..net import (
    IntentError,
    agent,
    backendfacts,
    bonding,
    ipoib,
    linkplan,
    netlink,
    pyroute2_lean,
    restore,
    rollback,
)
from ..net import backend as backends
from ..net.linkplan import check_protected, describe, plan, simulate, summary
from ..net.netlink import apply, read_links
from . import network_netplan, network_nm

try:
    IPRoute, NetlinkError = pyroute2_lean.load()
    PYROUTE2_IMPORT_ERROR = None
except ImportError as exc:  # pragma: no cover - reported through fail_json
    IPRoute = None
    NetlinkError = OSError
    PYROUTE2_IMPORT_ERROR = exc

# Every systemd-networkd file cxfab writes starts with this (build/structured networkd).
NETWORKD_PREFIX = "60-cxfab-"


class NotConverged(RuntimeError):
    """The links still differ from the intent after applying the plan."""


def connection_seeds(ipr, links: dict, mgmt: str, ssh_connection: str, extra) -> dict:
    """Interfaces never to touch, each with the reason shown in the refusal."""
    seeds = {}
    if mgmt:
        seeds[mgmt] = "is the management interface (cxfab_host.mgmt_interface)"
    for name in extra or []:
        seeds[name] = "is listed in protected_interfaces"
    fields = (ssh_connection or ssh_connection_of_session()).split()
    if len(fields) >= 3:
        controller, local = fields[0], fields[2]
        for name, info in links.items():
            if any(a.split("/")[0] == local for a in info["addresses"]):
                seeds.setdefault(name, f"holds {local}, the address the Ansible connection uses")
        try:
            family = socket.AF_INET6 if ":" in controller else socket.AF_INET
            for route in ipr.route("get", dst=controller, family=family):
                oif = route.get_attr("RTA_OIF")
                name = next((n for n, i in links.items() if i["index"] == oif), None)
                if name:
                    seeds.setdefault(
                        name, f"routes to the Ansible controller {controller} (the connection)"
                    )
        except (NetlinkError, OSError, ValueError):
            pass  # no route back: the address check above still protects the link
    return seeds


def ssh_connection_of_session(pid: int | None = None) -> str:
    """SSH_CONNECTION of this process or the nearest ancestor that has it.

    become (sudo) starts the module without it; the login shell above still has it.
    """
    pid = os.getpid() if pid is None else pid
    for _ in range(16):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return ""
        for entry in environ:
            if entry.startswith(b"SSH_CONNECTION="):
                return entry.split(b"=", 1)[1].decode("ascii", "replace")
        if parent <= 1:
            return ""
        pid = parent
    return ""


def file_changes(directory: str, files: dict, prefix: str) -> list[str]:
    """What making `directory` hold exactly `files` among the `prefix` names would do."""
    changes = []
    for name, text in files.items():
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except FileNotFoundError:
            pass
        changes.append(f"write {path}")
    if os.path.isdir(directory):
        for name in sorted(n for n in os.listdir(directory) if n.startswith(prefix)):
            if name not in files:
                changes.append(f"remove {os.path.join(directory, name)}")
    return changes


def write_files(directory: str, files: dict, prefix: str) -> None:
    os.makedirs(directory, mode=0o755, exist_ok=True)
    for name, text in files.items():
        path = os.path.join(directory, name)
        with open(path + ".cxfab-new", "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(path + ".cxfab-new", 0o644)
        os.replace(path + ".cxfab-new", path)
    for name in os.listdir(directory):
        if name.startswith(prefix) and name not in files and not name.endswith(".cxfab-new"):
            os.unlink(os.path.join(directory, name))


def watchdog_sources() -> dict[str, str]:
    """The package files the revert watchdog runs, from this module's own payload."""
    modules = [hostnet, bonding, ipoib, linkplan, restore, netlink, pyroute2_lean, rollback]
    return agent.package_sources(modules, rollback.PACKAGE_FILES)


def _view(intent, links):
    """Diff-friendly slice: drop ifindex, which changes on every re-creation."""
    return {
        name: ({k: v for k, v in info.items() if k != "index"} if info else None)
        for name, info in summary(intent, links).items()
    }


ARGUMENT_SPEC = {
    "structured": {"type": "dict", "required": True},
    "ssh_connection": {"type": "str", "default": ""},
    "protected_interfaces": {"type": "list", "elements": "str", "default": []},
    "purge_addresses": {"type": "bool", "default": True},
    "persist": {"type": "bool", "default": True},
    "networkd_dir": {"type": "path", "default": "/etc/systemd/network"},
    "revert_seconds": {"type": "int", "default": 0},
    "rollback_dir": {"type": "path", "default": rollback.ROLLBACK_DIR},
    "root": {"type": "path", "default": "/"},
    "backend": {
        "type": "str",
        "default": "networkd",
        "choices": ["auto", "networkd", "networkmanager", "netplan"],
    },
    "nm_keyfile_dir": {"type": "path", "default": nmkeyfile.KEYFILE_DIR},
    "netplan_dir": {"type": "path", "default": "/etc/netplan"},
}


def run(module) -> dict:
    if PYROUTE2_IMPORT_ERROR is not None:
        module.fail_json(msg=missing_required_lib("pyroute2"), exception=str(PYROUTE2_IMPORT_ERROR))
    params = module.params
    if params["revert_seconds"] < 0:
        module.fail_json(msg=f"revert_seconds: must be 0 or more, got {params['revert_seconds']}")
    backend = params["backend"]
    if backend == "auto":
        backend = detected_backend(module, params["root"])
    structured = params["structured"]
    interfaces = structured.get("ipoib") or []
    nics = structured.get("nics") or []
    # IPoIB addresses and up state are planned with the other links (linkplan).
    intent = {
        **structured["network"],
        "ipoib": [{**i, "path": ipoib.port_path(nics, i)} for i in interfaces],
    }
    directory = params["networkd_dir"]
    wanted_files = (structured.get("networkd") or {}) if params["persist"] else None
    try:
        found = ipoib.resolve(params["root"], interfaces, nics)
    except IntentError as exc:
        module.fail_json(msg=str(exc), path=exc.path, changed=False)
    ipoib_before = {name: entry["state"] for name, entry in found.items()}
    ipoib_actions = ipoib.plan(interfaces, ipoib_before)

    with IPRoute() as ipr:
        links = read_links(ipr)
        seeds = connection_seeds(
            ipr, links, structured.get("mgmt_interface"), params["ssh_connection"],
            params["protected_interfaces"],
        )  # fmt: skip
        try:
            protected = check_protected(intent, links, seeds)
            actions = plan(intent, links, params["purge_addresses"])
        except IntentError as exc:
            module.fail_json(msg=str(exc), path=exc.path, protected=seeds, changed=False)
        if backend == "networkmanager":
            return network_nm.run(
                module, ipr, intent, structured, links, actions, protected, _view, read_links,
                ipoib_found=found,
            )  # fmt: skip
        boot, leftover, files = None, [], []
        if backend == "netplan":
            if params["persist"]:
                boot, files = netplan_boot(module, structured)
        elif wanted_files is not None:
            files = file_changes(directory, wanted_files, NETWORKD_PREFIX)
            leftover = network_netplan.leftover(params["netplan_dir"], directory)
            files += [f"remove {path}" for path in leftover]
        before = ipoib.with_states(_view(intent, links), ipoib_before)
        timer = {"armed": False}
        ipoib_after = ipoib.simulate(ipoib_before, ipoib_actions)
        if module.check_mode or not (actions or files or ipoib_actions):
            after = ipoib.with_states(_view(intent, simulate(links, actions)), ipoib_after)
        else:
            if params["revert_seconds"]:
                timer = arm_timer(module, intent, links, wanted_files, ipoib_before, boot, leftover)
            try:
                # Mode and MTU first: an address is never added to a half-set interface.
                ipoib.apply(params["root"], ipoib_actions)
                ipoib_after = ipoib.verify(params["root"], interfaces)
                after = change(module, ipr, intent, actions, wanted_files, files, boot, leftover)
                after = ipoib.with_states(after, ipoib_after)
            except (NetlinkError, OSError, RuntimeError) as exc:
                fail_and_restore(module, exc, timer, ipoib_actions + actions, files)
    differs = before != after or bool(files)
    return {
        **({"backend": backend} if backend != "networkd" else {}),
        "changed": differs,
        "differs": differs,
        "actions": [describe(a) for a in ipoib_actions + actions],
        "ipoib": ipoib.report(found, ipoib_after),
        "protected": protected,
        "links": after,
        "intent": intent,
        "files": files,
        "rollback": timer,
        "diff": {"before": before, "after": after},
    }


def netplan_boot(module, structured) -> tuple[tuple[dict, list[str]], list[str]]:
    """The netplan backend's files (wanted, present now) and what would change in them.

    netplan is asked about cxfab's file only when it is to be written: a run that reads
    (check mode of a host's one-call reading, verify) spawns no netplan on a host whose
    file netplan already accepted when it was written.
    """
    params = module.params
    boot = (
        network_netplan.wanted(structured, params["netplan_dir"], params["networkd_dir"]),
        network_netplan.owned(params["netplan_dir"], params["networkd_dir"]),
    )
    changes = network_netplan.changes(*boot)
    if any(change.startswith("write ") for change in changes):
        refusal = network_netplan.accepted(_status(module), boot[0], params["netplan_dir"])
        if refusal:
            module.fail_json(msg=f"backend netplan: {refusal}; nothing was changed", changed=False)
    return boot, changes


def arm_timer(module, intent, links, wanted_files, ipoib_before, boot=None, leftover=()) -> dict:
    """Snapshot what the change can alter and start the watchdog, or fail changing nothing."""
    params = module.params
    if boot is not None:  # netplan: absolute paths in two directories, then `netplan generate`
        files = rollback.snapshot_paths(network_netplan.snapshot(*boot))
    elif wanted_files is None:
        files = {}
    else:  # networkd: its files by name, a netplan leftover by absolute path
        files = rollback.snapshot_files(params["networkd_dir"], NETWORKD_PREFIX, wanted_files)
        files.update(rollback.snapshot_paths(leftover))
    snapshot = {
        "links": restore.take_snapshot(intent, links),
        "files": files,
        "netplan_generate": boot is not None or bool(leftover),
        "networkd_dir": params["networkd_dir"],
        # sysfs mode and MTU of every intended IPoIB interface, as read before the change
        "ipoib": ipoib_before,
        "root": params["root"],
    }
    try:
        return rollback.arm(
            params["rollback_dir"], snapshot, params["revert_seconds"], watchdog_sources(),
            python=sys.executable, runner=_runner(module),
        )  # fmt: skip
    except (rollback.RollbackError, OSError, ValueError) as exc:
        module.fail_json(msg=f"could not arm the revert timer, nothing changed: {exc}")


def detected_backend(module, root: str) -> str:
    """`auto`: the backend this host's daemons show (backend.choose), before any change.

    A host where no owner can be told apart is refused with what was seen, and so is a
    NetworkManager host without nmcli or a netplan host without netplan, the commands
    those paths drive (docs/host-network-backends.md).
    An explicit backend is the operator's word and is not checked (the lab's guests
    boot without systemd and apply over netlink).
    """

    status = _status(module)

    def run(argv):
        code, out, _err = status(argv)
        return code, out

    facts = {}
    try:
        facts = backendfacts.gather(root, run)
        chosen = backends.choose("auto", facts)
    except backends.BackendError as exc:
        module.fail_json(
            msg=f"{backends.BACKEND_KEY}=auto: {exc.reason}; nothing was changed",
            backend_facts=facts,
            changed=False,
        )
    except Exception as exc:  # an unreadable netplan file, /run or /sys: fail closed
        module.fail_json(
            msg=f"{backends.BACKEND_KEY}=auto: could not tell the host's network "
            f"backend apart ({exc}); nothing was changed",
            changed=False,
        )
    probe = {"networkmanager": ["nmcli", "--version"], "netplan": ["netplan", "--help"]}
    if chosen in probe and run(probe[chosen])[0] == 127:
        module.fail_json(
            msg=f"{backends.BACKEND_KEY}=auto: this host's network belongs to {chosen} "
            f"({_evidence(chosen, facts)}) but {probe[chosen][0]}, which cxfab applies it "
            "with, is not "
            "installed: nothing was changed",
            backend_facts=facts,
            changed=False,
        )
    return chosen


def _status(module):
    """run(argv) -> (rc, stdout, stderr); rc 127 when the command is not installed."""

    def run(argv):
        try:
            return module.run_command(argv, handle_exceptions=False)
        except OSError:
            return 127, "", ""

    return run


def _evidence(chosen: str, facts: dict) -> str:
    if chosen == "netplan":
        return "netplan files define " + ", ".join(facts.get("netplan_interfaces") or [])
    links = ", ".join(facts.get("networkmanager_links") or []) or "no link yet"
    return f"NetworkManager runs and manages: {links}"


def _runner(module):
    def run(argv, **_kwargs):
        rc, out, err = module.run_command(argv)
        return _Completed(rc, out, err)

    return run


class _Completed:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def change(module, ipr, intent, actions, wanted_files, files, boot=None, leftover=()) -> dict:
    """Apply the links then the files; the links as read back afterwards."""
    params = module.params
    apply(ipr, actions, intent)
    links = read_links(ipr)
    after = _view(intent, links)
    left = plan(intent, links, params["purge_addresses"])
    if left:
        raise NotConverged("links did not converge: " + "; ".join(describe(a) for a in left))
    if files and boot is not None:
        network_netplan.write(*boot)
        network_netplan.generate(_status(module))
    elif files:
        write_files(params["networkd_dir"], wanted_files, NETWORKD_PREFIX)
        if leftover:
            network_netplan.remove_leftover(list(leftover), _status(module))
    if files and rollback.systemd_is_init():
        # The live state is already applied over netlink: networkd only adopts the files.
        rc, _, err = module.run_command(["networkctl", "reload"])
        if rc != 0:
            module.warn(f"networkctl reload failed (rc={rc}): {err.strip()}")
    return after


def fail_and_restore(module, exc, timer, actions, files):
    """A change that failed half way: restore the snapshot now when a timer holds one."""
    cause = f"netlink refused a change: {exc}" if isinstance(exc, NetlinkError) else str(exc)
    details = {"actions": [describe(a) for a in actions], "files": files, "changed": True}
    if not timer.get("armed"):
        module.fail_json(msg=cause, **details)
    result = rollback.fire(
        module.params["rollback_dir"], timer["token"], cause, stop=_runner(module)
    )
    if result is None:  # the watchdog got there first
        result = rollback.disarm(module.params["rollback_dir"], timer["token"])
    module.fail_json(
        msg=rollback.describe_result(result), reverted=True, rollback=result, **details
    )
