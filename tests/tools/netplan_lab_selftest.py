"""The netplan backend of cxfab_host_network on a real netplan and a real kernel, sandboxed.

tests/system/test_lab_netplan.py runs this in lab-host1 over SSH (the guest's python3,
the controller's venv and this checkout on PYTHONPATH: the guests share the
controller's root fs), as root:

    python3 -m tests.tools.netplan_lab_selftest run STRUCTURED.yml

`run` loads bonding (max_bonds=0: no bond0 appears in the guest's own namespace) and
8021q, then runs `inside` under `unshare --net --mount --fork`: a fresh network
namespace holding veth ports named like the lab's data ports (ens1f0/ens1f1, their far
ends peer-<port>) and mgmt0 (192.0.2.10/24, the sandbox's management interface), and
a private mount namespace where /run, /etc/netplan and /etc/systemd/network are empty
tmpfs mounts. The guest's own links and files are never touched, and nothing of the
sandbox outlives it (the namespaces go with their last process).

`inside` runs the module's own code (cxfab.host.stages.network.run under a real
AnsibleModule, arguments as Ansible hands them over; only the SSH transport is left
out) with `backend: netplan`:

1. check mode on the bare ports (`check`), and what that wrote (`written_by_check`);
2. the apply (`first`), the links over netlink (`ip -d -j address show`), cxfab's
   files and what `netplan generate` made of them in /run/systemd/network;
3. the same apply again (`again`);
4. a changed intent (the last VLAN dropped, the first one's MTU lowered) with a SHORT revert
   timer that nobody confirms (`pending`), the links right after it, then, once the
   watchdog has restored the host (`result.json`), links, files and netplan's output
   again (`reverted`).

It prints one JSON line that the system test compares with the structured config and
with itself; it judges nothing.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.tools.nm_lab_selftest import links, serve_steps

PORTS = ("ens1f0", "ens1f1")
MGMT = ("mgmt0", "192.0.2.10/24")
TMPFS = ("/run", "/etc/netplan", "/etc/systemd/network")
GENERATED = "/run/systemd/network"
ROLLBACK = "/run/cxfab/network-rollback"
SHORT = 8  # seconds of the unconfirmed change's revert timer


def _sh(*argv) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.stderr.strip()}")


def module(structured: dict, check: bool = False, **params) -> dict:
    """cxfab_host_network's run() under a real AnsibleModule: its result, failed or not."""
    from ansible.module_utils import basic
    from cxfab.host.stages import network

    args = {"structured": structured, "backend": "netplan", **params, "_ansible_check_mode": check}
    basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode()
    basic._ANSIBLE_PROFILE = "legacy"  # as tests/unit/plugin_loading.py hands them over
    out = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        built = basic.AnsibleModule(argument_spec=network.ARGUMENT_SPEC, supports_check_mode=True)
        built.exit_json(**network.run(built))
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def files() -> dict[str, str]:
    """cxfab's netplan file and drop-ins (absolute path: text), as read back."""
    found = {}
    for directory in ("/etc/netplan", "/etc/systemd/network"):
        for path in sorted(Path(directory).rglob("*")):
            if path.is_file():
                found[str(path)] = path.read_text()
    return found


def generated() -> dict[str, str]:
    """What `netplan generate` wrote for networkd."""
    base = Path(GENERATED)
    return {p.name: p.read_text() for p in sorted(base.glob("*"))} if base.is_dir() else {}


def _reading() -> dict:
    return {"links": links(), "files": files(), "generated": generated()}


def inside(structured_path: str) -> dict:
    """In the sandbox's namespaces: the mounts, the veths, then the four steps."""
    start = time.monotonic()
    _sh("mount", "--make-rprivate", "/")
    for target in TMPFS:
        _sh("mount", "-t", "tmpfs", "-o", "mode=0755", "cxfab-netplan", target)
    _sh("ip", "link", "set", "lo", "up")
    for port in PORTS:
        _sh("ip", "link", "add", port, "type", "veth", "peer", "name", f"peer-{port}")
        _sh("ip", "link", "set", f"peer-{port}", "up")
    _sh("ip", "link", "add", MGMT[0], "type", "veth", "peer", "name", f"peer-{MGMT[0]}")
    _sh("ip", "address", "add", MGMT[1], "dev", MGMT[0])
    _sh("ip", "link", "set", MGMT[0], "up")
    structured = yaml.safe_load(Path(structured_path).read_text())
    structured["mgmt_interface"] = MGMT[0]
    result: dict = {"baseline": links()}
    result["check"] = module(structured, check=True, revert_seconds=SHORT)
    result["written_by_check"] = {"files": files(), "generated": generated()}
    result["first"] = module(structured)
    result["after_first"] = _reading()
    result["again"] = module(structured, revert_seconds=SHORT)
    changed = copy.deepcopy(structured)
    changed["network"]["vlans"] = changed["network"]["vlans"][:-1]
    changed["network"]["vlans"][0]["mtu"] = 1500
    result["pending"] = module(changed, revert_seconds=SHORT)
    result["after_pending"] = _reading()
    record = Path(ROLLBACK, "result.json")
    deadline = time.monotonic() + SHORT + 90
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    result["watchdog"] = json.loads(record.read_text()) if record.exists() else None
    result["after_revert"] = _reading()
    result["inside_s"] = round(time.monotonic() - start, 1)
    return result


def run(structured_path: str) -> dict:
    """In the guest's own namespaces: the modules, then `inside` in fresh ones."""
    start = time.monotonic()
    for kernel_module in (["bonding", "max_bonds=0"], ["8021q"]):
        subprocess.run(["modprobe", *kernel_module], check=True)
    argv = [sys.executable, "-m", "tests.tools.netplan_lab_selftest", "inside"]
    done = subprocess.run(
        ["unshare", "--net", "--mount", "--fork", *argv, str(Path(structured_path).resolve())],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr[-4000:] or done.stdout[-4000:]}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["netplan"] = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Version}", "netplan.io"], capture_output=True, text=True
    ).stdout.strip()
    result["kernel"] = os.uname().release
    result["total_s"] = round(time.monotonic() - start, 1)
    return result


def main(argv) -> int:
    return serve_steps(argv, {"run": run, "inside": inside})


if __name__ == "__main__":
    sys.exit(main(sys.argv))
