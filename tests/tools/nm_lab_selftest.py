"""The NetworkManager backend building the lab host's bond and VLANs, inside a lab guest.

The controller's kernel has neither bonding nor 802.1Q, so the integration tier's real
NetworkManager (tests/integration/test_networkmanager_apply.py) never builds cxfab's bond
or VLANs. The lab guests' kernel (Debian 6.1) has both: tests/system/test_lab_networkmanager.py
runs this file there over SSH, as root, with the guest's python3 and the controller's venv
on PYTHONPATH (the guests share the controller's root fs, read-only):

    python3 -m tests.tools.nm_lab_selftest run STRUCTURED.yml

`run` loads the modules (bonding with max_bonds=0: no bond0 appears in the guest's own
namespace), starts the sandbox of tests/tools/nm_sandbox.py (a private NetworkManager in
fresh net/mount/PID namespaces, veth ports ens1f0/ens1f1: the guest's real data ports,
bond and VLANs are in another network namespace and never touched) and runs `inside`
there, which drives the product's own code and reads the links back over netlink:

1. baseline: `ip -d -j address show` of the bare ports;
2. arms the backend's revert timer (rollback.arm_checkpoint: a NetworkManager checkpoint of
   the ports, LONG seconds - TCG guests are slow) and applies the structured config's
   keyfiles (nmcheckpoint + nmapply.render/apply, as the module's networkmanager backend does);
   reads the links back (`applied`: what NetworkManager alone made of them);
   completes the VLAN egress maps NetworkManager left short as the module does
   (net/nmegress.py) and reads the links again (`completed`);
3. applies again: plan, steps and the links after it (`again`);
4. re-arms the pending checkpoint with SHORT seconds (arm_checkpoint adjusts a pending one),
   confirms nothing, waits until NetworkManager has rolled back (bond0 gone) and reads the
   links, the profiles and the keyfiles (`reverted`), then disarm's verdict;
A reboot is not shown here: the deployed NetworkManager host is power-cycled, with the
role's real host agent and dispatcher hook on its disk (tests/system/test_host_reboot.py,
nm_guest.back); the sandbox no longer reboots (two restarts, about 50 s of the self tier,
proved the same with a hand-made agent).

It prints one JSON line (the last line of its output) that the system test compares with the
structured config; it judges nothing itself.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PORTS = ("ens1f0", "ens1f1")
KEYFILES = "/etc/NetworkManager/system-connections"
ROLLBACK = "/run/cxfab/network-rollback"
LONG = 240  # seconds the checkpoint covers the two applies (a TCG guest is slow)
SHORT = 5  # seconds left once the applies are read back: then NetworkManager rolls back
INFO = ("mode", "miimon", "xmit_hash_policy", "ad_lacp_rate", "protocol", "id", "egress_qos")


def links() -> dict:
    """{ifname: what netlink says that cxfab configures} from `ip -d -j address show`."""
    done = subprocess.run(["ip", "-d", "-j", "address", "show"], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"ip -d -j address show: {done.stderr.strip()}")
    found = {}
    for link in json.loads(done.stdout):
        info = link.get("linkinfo", {})
        data = info.get("info_data", {})
        found[link["ifname"]] = {
            "mtu": link["mtu"],
            "master": link.get("master"),
            "parent": link.get("link"),
            "kind": info.get("info_kind"),
            "slave_kind": info.get("info_slave_kind"),
            "info": {key: data[key] for key in INFO if key in data},
            "operstate": link.get("operstate"),
            "addresses": sorted(
                f"{a['local']}/{a['prefixlen']}"
                for a in link.get("addr_info", [])
                if a["family"] == "inet"
            ),
        }
    return found


def complete_egress_maps(structured: dict) -> dict:
    """What the module's NetworkManager stage does after activation (stages/network_nm.py):
    the egress maps NetworkManager left short, set over netlink by nmegress."""
    from cxfab.host.net import netlink, nmegress
    from pyroute2 import IPRoute

    intent = {**structured["network"], "ipoib": []}
    with IPRoute() as ipr:
        _links, steps = nmegress.complete(
            ipr, intent, netlink.read_links(ipr), False, netlink.read_links
        )
    return {"steps": steps}


DISPATCHER = "/usr/lib/NetworkManager/nm-dispatcher"


def _networkmanager() -> tuple[int, list[str]]:
    """The sandbox's running NetworkManager: its pid and command line (to start it again).
    `--no-daemon` writes no pid file; the sandbox's /proc shows only its own processes."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and not _exited(int(entry.name)):
            try:
                if (entry / "comm").read_text().strip() == "NetworkManager":
                    argv = (entry / "cmdline").read_bytes().rstrip(b"\0").decode().split("\0")
                    return int(entry.name), argv
            except OSError:
                continue
    raise RuntimeError("no NetworkManager runs in the sandbox")


def _wait_for(predicate, seconds: float) -> float:
    began = time.monotonic()
    while time.monotonic() - began < seconds:
        if predicate():
            return round(time.monotonic() - began, 1)
        time.sleep(0.5)
    return -1.0


def _exited(pid: int) -> bool:
    """Gone, or a zombie (its parent, the sandbox's PID 1 or this script, reaps it later)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def _maps_whole(intent: dict, now: dict) -> bool:
    """Every VLAN's egress map in the kernel as the intent says (zero entries unreported)."""
    from cxfab.host.net.linkplan import normalise_map

    for vlan in intent["vlans"]:
        entries = now.get(vlan["name"], {}).get("info", {}).get("egress_qos", [])
        got = {entry["from"]: entry["to"] for entry in entries}
        if normalise_map(got) != normalise_map(vlan.get("egress_qos_map")):
            return False
    return True


def inside(structured_path: str) -> dict:
    """Inside the sandbox: the product's apply path, the links read back after each step."""
    import yaml
    from cxfab.host.net import nmapply, rollback

    structured = yaml.safe_load(Path(structured_path).read_text())
    files = nmapply.render(structured)
    out, clock = {"files": sorted(files)}, time.monotonic()
    out["baseline"] = links()
    armed = rollback.arm_checkpoint(ROLLBACK, PORTS, LONG)
    out["armed"] = {key: armed[key] for key in ("armed", "method", "seconds") if key in armed}
    calls: list = []

    def timed(argv, **kwargs):  # subprocess.run, with each nmcli call's seconds kept
        began = time.monotonic()
        done = subprocess.run(argv, **kwargs)
        calls.append([" ".join(argv[1:6]), round(time.monotonic() - began, 1)])
        return done

    start = time.monotonic()
    out["first"] = {
        "plan": nmapply.plan(KEYFILES, files),
        "steps": nmapply.apply(timed, KEYFILES, files, relink=()),
        "calls": calls,
    }
    out["first"]["seconds"] = round(time.monotonic() - start, 1)
    out["applied"] = links()
    out["read_back"] = nmapply.read_back(KEYFILES)
    out["completed"] = complete_egress_maps(structured)
    out["completed"]["links"] = links()
    start = time.monotonic()
    out["again"] = {
        "plan": nmapply.plan(KEYFILES, files),
        "steps": nmapply.apply(subprocess.run, KEYFILES, files, relink=()),
    }
    out["again"]["seconds"] = round(time.monotonic() - start, 1)
    out["again"]["links"] = links()

    rearmed = rollback.arm_checkpoint(ROLLBACK, PORTS, SHORT)
    deadline = rearmed["deadline"]
    while time.time() < deadline + 60:  # NetworkManager acts at the deadline
        now = links()
        ports_back = all(now[p]["master"] is None for p in PORTS)
        if "bond0" not in now and ports_back:
            break
        time.sleep(0.2)
    out["rollback_after_deadline_s"] = round(time.time() - deadline, 1)
    time.sleep(1)  # let NetworkManager finish with the ports, then read them
    out["reverted"] = links()
    out["profiles"] = [row["name"] for row in nmapply.profiles(subprocess.run)]
    out["keyfiles_left"] = sorted(os.listdir(KEYFILES))
    result = rollback.disarm(ROLLBACK, rearmed["token"])
    out["disarm"] = {key: result.get(key) for key in ("state", "reason")}
    out["inside_seconds"] = round(time.monotonic() - clock, 1)
    return out


def run(structured_path: str) -> dict:
    """In the guest's own namespaces: modules, the sandbox, `inside` in it; the timings."""
    from tests.tools import nm_sandbox

    start, structured_path = time.monotonic(), str(Path(structured_path).resolve())
    hostname = socket.gethostname()
    for module in (["bonding", "max_bonds=0"], ["8021q"]):
        subprocess.run(["modprobe", *module], check=True)
    workdir = Path(tempfile.mkdtemp(prefix="cxfab-nmlab-"))
    try:
        with nm_sandbox.running(
            workdir / "nm", PORTS, managed=("ens1f*", "bond0*"), timeout=60
        ) as box:
            started = time.monotonic() - start
            done = box.run(
                [sys.executable, "-m", "tests.tools.nm_lab_selftest", "inside", structured_path],
                timeout=600,
            )
            log = box.log()
        if done.returncode != 0:
            return {"error": done.stderr[-4000:], "log": log[-4000:]}
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result["sandbox_start_s"] = round(started, 1)
        result["nm_version"] = subprocess.run(
            ["NetworkManager", "--version"], capture_output=True, text=True
        ).stdout.strip()
        result["kernel"] = os.uname().release
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["total_s"] = round(time.monotonic() - start, 1)
    # Nothing of the sandbox may leak into the guest: its hostname is what the host's
    # lldpd announces to the switches (NetworkManager once renamed it, see nm_sandbox).
    result["hostname"] = {"before": hostname, "after": socket.gethostname()}
    return result


def serve_steps(argv, steps: dict) -> int:
    """`<tool> run|inside STRUCTURED.yml`: the step's JSON as the last line (the lab
    self-tests' shared command line)."""
    if len(argv) == 3 and argv[1] in steps:
        print(json.dumps(steps[argv[1]](argv[2])), flush=True)
        return 0
    print(f"usage: {argv[0]} run|inside STRUCTURED.yml", file=sys.stderr)
    return 2


def main(argv) -> int:
    return serve_steps(argv, {"run": run, "inside": inside})


if __name__ == "__main__":
    sys.exit(main(sys.argv))
