"""NetworkManager as the owner of a lab guest's own data network (not a sandbox).

The lab's guests boot virtme-ng's init, not systemd, so nothing starts a system bus or
NetworkManager there. `make lab-up` (tests/lab/vm/host_stack.py) makes lab-host2 a
NetworkManager host with this file, run in the guest over SSH as root (the guest's
python3, this checkout on PYTHONPATH); tests/system/test_host_networkmanager.py reboots
its network:

    python3 -m tests.tools.nm_guest start     # bus, NetworkManager, its dispatcher
    python3 -m tests.tools.nm_guest reboot    # what a boot leaves, NetworkManager again
    python3 -m tests.tools.nm_guest stop      # all three gone, cxfab's profiles forgotten

`start` runs, in the guest's own namespaces, a `dbus-daemon` system bus (the sandbox's
bus configuration, tests/tools/nm_sandbox.py: root only, no activation), Debian's
`NetworkManager --debug` (in the foreground, its log on stderr into LOG: without it
NetworkManager logs to syslog, and the guest has no /dev/log) with a conf.d file of its
own (keyfile plugin, no automatic profiles, no hostname, DNS or resolv.conf changes,
every device unmanaged but the data ports, the bond and its VLANs: the management
interface stays out of its hands) and
NetworkManager's dispatcher (`nm-dispatcher --persist`: the bus is not configured to
start it on demand, as systemd's bus does). The guest's /etc and /run are tmpfs
overlays of its own, so nothing of this reaches the controller.

`reboot` is nm_lab_selftest.reboot on the guest's own links: NetworkManager stopped,
/run/NetworkManager emptied, the bond (with its VLANs) deleted, the ports down at MTU
1500, then NetworkManager started again on the same keyfiles (the dispatcher keeps
running: at a boot the bus starts it for NetworkManager's first event); it waits until
the VLANs have their addresses and every egress map is whole. A real reboot of a guest
would lose its /etc (tmpfs): the keyfiles would be gone with it.

Each command prints one JSON line (the last line of its output).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.tools import nm_lab_selftest, nm_sandbox

RUN = Path("/run/cxfab-lab-nm")
PIDS = RUN / "pids.json"
LOG = RUN / "NetworkManager.log"
CONF = Path("/etc/NetworkManager/conf.d/90-cxfab-lab.conf")
BUS = Path("/run/dbus/system_bus_socket")
MANAGED = ("ens1f*", "bond0*")
KEYFILES = Path(nm_lab_selftest.KEYFILES)
DISPATCHER = [nm_lab_selftest.DISPATCHER, "--persist"]


def _spawn(argv: list[str]) -> int:
    with LOG.open("ab") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=sink, start_new_session=True)
    return proc.pid


def _wait(predicate, seconds: float, what: str) -> float:
    waited = nm_lab_selftest._wait_for(predicate, seconds)
    if waited < 0:
        raise RuntimeError(f"timed out after {seconds} s waiting for {what}:\n{_log_tail()}")
    return waited


def _log_tail() -> str:
    return LOG.read_text(errors="replace")[-3000:] if LOG.exists() else ""


def start() -> dict:
    if BUS.exists() or PIDS.exists():
        raise RuntimeError(f"a system bus or a cxfab NetworkManager runs already ({BUS}, {PIDS})")
    began = time.monotonic()
    RUN.mkdir(parents=True, exist_ok=True)
    BUS.parent.mkdir(parents=True, exist_ok=True)
    # NetworkManager reads the static hostname at start; the guest's /etc/hostname is the
    # controller's (the overlay's lower layer), and the hostname is what lldpd announces.
    hostname = socket.gethostname()
    Path("/etc/hostname").write_text(hostname + "\n")
    CONF.parent.mkdir(parents=True, exist_ok=True)
    unmanaged = ",".join(f"except:interface-name:{glob}" for glob in MANAGED)
    CONF.write_text(nm_sandbox.NM_CONF.format(unmanaged=unmanaged))
    (RUN / "dbus.conf").write_text(nm_sandbox.DBUS_CONF)
    pids = {"dbus-daemon": _spawn(["dbus-daemon", "--nofork", "--nopidfile",
                                   f"--config-file={RUN / 'dbus.conf'}"])}  # fmt: skip
    _wait(BUS.exists, 30, "the system bus")
    pids["NetworkManager"] = _spawn(["NetworkManager", "--debug"])
    pids["nm-dispatcher"] = _spawn(DISPATCHER)
    PIDS.write_text(json.dumps(pids))
    ports = nm_lab_selftest.PORTS
    _wait(lambda: nm_sandbox._nm_sees(ports), 90, f"NetworkManager to manage {ports}")
    return {"pids": pids, "seconds": round(time.monotonic() - began, 1),
            "hostname": {"before": hostname, "after": socket.gethostname()}}  # fmt: skip


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if nm_lab_selftest._wait_for(lambda: nm_lab_selftest._exited(pid), 30) < 0:
        os.kill(pid, signal.SIGKILL)


def reboot(structured_path: str) -> dict:
    import yaml

    intent = {**yaml.safe_load(Path(structured_path).read_text())["network"], "ipoib": []}
    pids = json.loads(PIDS.read_text())
    # The dispatcher stays: at a boot the bus starts it for NetworkManager's first event.
    out = nm_lab_selftest.reboot(
        intent, LOG, settled=lambda now: nm_lab_selftest._maps_whole(intent, now)
    )
    pids["NetworkManager"] = nm_lab_selftest._networkmanager()[0]  # a new process
    PIDS.write_text(json.dumps(pids))
    return out


def stop() -> dict:
    """Everything `start` began stopped; cxfab's profiles forgotten (the links stay as
    they are: NetworkManager leaves them configured when it stops)."""
    pids = json.loads(PIDS.read_text()) if PIDS.exists() else {}
    for name in ("nm-dispatcher", "NetworkManager", "dbus-daemon"):
        if name in pids:
            _stop(pids[name])
    # cxfab's dispatcher hook stays: the module installs it wherever /etc/NetworkManager
    # exists (the controller's, under the guest's overlay), networkd hosts included.
    removed = sorted(str(p) for p in KEYFILES.glob("cxfab-*"))
    removed += [str(CONF)] if CONF.exists() else []
    for path in removed:
        Path(path).unlink()
    for leftover in (BUS, Path("/run/NetworkManager")):
        if leftover.is_dir():
            shutil.rmtree(leftover)
        elif leftover.exists():
            leftover.unlink()
    PIDS.unlink(missing_ok=True)
    return {"stopped": sorted(pids), "removed": removed}


def main(argv) -> int:
    steps = {"start": start, "stop": stop, "reboot": reboot, "links": nm_lab_selftest.links}
    if len(argv) >= 2 and argv[1] in steps:
        try:
            print(json.dumps(steps[argv[1]](*argv[2:])), flush=True)
        except Exception as exc:  # the test shows it with NetworkManager's log
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "log": _log_tail()}))
        return 0
    print(f"usage: {argv[0]} start|reboot STRUCTURED.yml|stop|links", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
