"""NetworkManager as the owner of a lab guest's own data network (not a sandbox).

The lab's guests boot virtme-ng's init, not systemd, so nothing starts a system bus or
NetworkManager there. `make lab-up` (tests/lab/vm/host_stack.py) makes lab-host2 a
NetworkManager host with this file, run in the guest over SSH as root (the guest's
python3, this checkout on PYTHONPATH), and again at every boot of it; tests/system/
test_host_reboot.py power-cycles the guest and waits for its network to come back:

    python3 -m tests.tools.nm_guest start     # bus, NetworkManager, its dispatcher
    python3 -m tests.tools.nm_guest back S.yml  # after a boot: the network as S.yml says
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
overlays of its own, so nothing of this reaches the controller; /etc/NetworkManager
(keyfiles, dispatcher hook, this conf.d file) is bound from the guest's own disk
(guest-init.sh), so it survives a reboot as on an installed host.

`back` waits, after a boot, until the VLANs have their addresses and every egress map is
whole (NetworkManager activating cxfab's profiles by itself, its dispatcher running the
host agent on each link-up), and reads the links and the boot's id.

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


def back(structured_path: str) -> dict:
    """After a boot (tests/system/test_host_reboot.py): waits until NetworkManager has
    the VLANs' addresses back and the host agent, run by the dispatcher, every egress
    map whole; the links then, and which boot this is."""
    import yaml

    intent = {**yaml.safe_load(Path(structured_path).read_text())["network"], "ipoib": []}
    vlans = [vlan["name"] for vlan in intent["vlans"]]

    def rebuilt() -> bool:
        now = nm_lab_selftest.links()
        return all(now.get(name, {}).get("addresses") for name in vlans)

    out = {"rebuilt_s": nm_lab_selftest._wait_for(rebuilt, 180)}
    out["settled_s"] = nm_lab_selftest._wait_for(
        lambda: nm_lab_selftest._maps_whole(intent, nm_lab_selftest.links()), 60
    )
    out["links"] = nm_lab_selftest.links()
    out["boot_id"] = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
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
    steps = {"start": start, "stop": stop, "back": back, "links": nm_lab_selftest.links}
    if len(argv) >= 2 and argv[1] in steps:
        try:
            print(json.dumps(steps[argv[1]](*argv[2:])), flush=True)
        except Exception as exc:  # the test shows it with NetworkManager's log
            print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "log": _log_tail()}))
        return 0
    print(f"usage: {argv[0]} start|back STRUCTURED.yml|stop|links", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
