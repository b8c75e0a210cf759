"""Lab tier: tests that run on the two host guests of the lab (make lab-up).

Two kinds of test. The `test_lab_*` suites (fixture `clean_lab`) build the interfaces
they need on the guests' bare data ports and remove them afterwards (names start with
`lt`, addresses in 10.250.0.0/16), so the guests are left as `make lab-up` made them.
The other suites (fixture `deployed`) need the lab as site.yml leaves it, so they run
after those, in a pytest run of their own (tests/lab/lab.mk).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import (
    DATA_NETDEVS,
    GUESTS,
    HOSTS_FILE,
    SSH_DIR,
    SSH_KEY,
    Guest,
)
from tests.system.deployment import Deployment

pytestmark = pytest.mark.lab

# Removes what any lab test may have added (interfaces and rxe devices named lt*,
# addresses in 10.250.0.0/16, test processes) and puts each data port back in the
# admin state it had when the session started: configuration made by others stays.
RESET_SCRIPT = """
for dev in $(ip -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep '^lt'); do
    ip link del "$dev" 2>/dev/null
done
for rxe in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1 | grep '^lt'); do
    rdma link del "$rxe"
done
pkill -x rping; pkill -x ib_write_bw; pkill -x iperf3; pkill -x busybox
for port_state in {ports}; do
    port=${port_state%=*}
    for address in $(ip -4 -o address show dev "$port" | awk '{print $4}' | grep '^10\\.250\\.'); do
        ip address del "$address" dev "$port"
    done
    ip link set "$port" "${port_state#*=}"
done
true
"""


def guest_post_mortem(guest: Guest, lines: int = 25) -> str:
    """Why SSH (exit 255) may not reach `guest`: its QEMU process, a wedge the console
    shows (a TCG vCPU whose timer never fires, tests/lab/vm/guests.py), the console's end.
    CI keeps only this output, not the lab's run directory."""
    pid = labctl.guest_pid(guest)
    wedge = labctl.boot_wedged(guest)
    try:
        tail = guest.console_log.read_text(errors="replace").splitlines()[-lines:]
    except OSError as exc:
        tail = [f"(console unreadable: {exc})"]
    return (
        f"\n--- lab post-mortem of {guest.name}: QEMU pid {pid or 'gone'}; "
        f"wedge sign: {wedge or 'none'}; load {os.getloadavg()[0]:.1f}; "
        f"console {guest.console_log} ends:\n" + "\n".join(tail)
    )


# Suites that change the lab for good run at the end, in this order: `reboot` (a
# rebooted guest lacks what no boot-time service restores there, the guests run no
# systemd: e.g. its soft-RoCE device, which a later suite of the Onyx lab would miss),
# then `cumulus` (it replaces the Onyx pair with the NVUE one, test_cumulus_pair.py).
LAST_MARKERS = ("reboot", "cumulus")


def pytest_collection_modifyitems(items):
    """The LAST_MARKERS suites after every other; the others keep their order."""

    def rank(item) -> int:
        marked = [n for n, m in enumerate(LAST_MARKERS, 1) if item.get_closest_marker(m)]
        return max(marked, default=0)

    items.sort(key=rank)


@dataclass
class LabHost:
    """One lab guest reached over SSH (a shared connection per host)."""

    guest: Guest
    # Admin state (up/down) of each data port when the session began.
    port_states: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.guest.name

    def _argv(self, command: str) -> list[str]:
        control = ["-o", "ControlMaster=auto", "-o", f"ControlPath={self.control_path}"]
        argv = labctl.ssh_argv(self.guest, command)
        return [argv[0], *control, "-o", "ControlPersist=600", *argv[1:]]

    @property
    def control_path(self) -> str:
        return str(SSH_DIR / f"cm-{self.guest.ssh_port}")

    def run(self, command: str, check: bool = True, timeout: float = 120) -> str:
        try:
            result = subprocess.run(
                self._argv(command), capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(self._timeout_diagnosis(command, exc)) from None
        if check and result.returncode != 0:
            raise AssertionError(
                f"{self.name}: `{command}` exited {result.returncode}\n"
                f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
                + (guest_post_mortem(self.guest) if result.returncode == 255 else "")
            )
        return result.stdout

    def _timeout_diagnosis(self, command: str, exc: subprocess.TimeoutExpired) -> str:
        """What a command that outlived its timeout leaves to tell a stalled guest from a
        stalled shared SSH connection (test_fabric_ipl's pings once did, 2026-11-27):
        the output so far, the control master's state, a fresh connection's answer."""

        def text(data) -> str:
            return data.decode(errors="replace") if isinstance(data, bytes) else data or ""

        master = subprocess.run(
            ["ssh", "-O", "check", "-o", f"ControlPath={self.control_path}", "lab"],
            capture_output=True, text=True, timeout=15, check=False,
        )  # fmt: skip
        try:
            fresh = subprocess.run(
                labctl.ssh_argv(self.guest, "cat /proc/uptime /proc/loadavg"),
                capture_output=True, text=True, timeout=30, check=False,
            )  # fmt: skip
            answer = f"exit {fresh.returncode}: {fresh.stdout.strip()} {fresh.stderr.strip()}"
        except subprocess.TimeoutExpired:
            answer = "no answer within 30 s either"
        return (
            f"{self.name}: `{command}` still ran after {exc.timeout} s\n"
            f"stdout so far:\n{text(exc.stdout)}\nstderr so far:\n{text(exc.stderr)}\n"
            f"shared SSH connection (ssh -O check): exit {master.returncode} "
            f"{master.stderr.strip()}\nfresh SSH connection: {answer}"
            + guest_post_mortem(self.guest)
        )

    def start(self, command: str, log: str) -> None:
        """Run `command` in the background on the guest, output into `log` (guest path)."""
        self.run(f"nohup sh -c {shlex.quote(command)} >{log} 2>&1 </dev/null &")

    def pci_device(self, netdev: str) -> str:
        """The PCI function behind a netdev, whether `device` is it or a virtio child of it."""
        script = (
            f"d=$(readlink -f /sys/class/net/{netdev}/device); "
            '[ -e "$d/numa_node" ] || d=$(dirname "$d"); echo "$d"'
        )
        return self.run(script).strip()

    def close(self) -> None:
        subprocess.run(
            ["ssh", "-O", "exit", "-o", f"ControlPath={self.control_path}", "lab"],
            capture_output=True,
            check=False,
        )


@dataclass
class Lab:
    hosts: list[LabHost]

    def cut(self, side: str) -> None:
        labctl.set_side(side, up=False)

    def restore(self, side: str) -> None:
        labctl.set_side(side, up=True)

    def reset(self) -> None:
        for side, up in labctl.link_states().items():
            if not up:
                self.restore(side)
        for host in self.hosts:
            ports = " ".join(f"{port}={state}" for port, state in host.port_states.items())
            host.run(RESET_SCRIPT.replace("{ports}", ports))


@pytest.fixture(scope="session")
def lab():
    if labctl.UNAVAILABLE_FILE.exists():
        why = f"the lab cannot run here: {labctl.UNAVAILABLE_FILE.read_text().strip()}"
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI=true: a skipped lab tier proves nothing)")
        pytest.skip(why)
    if not HOSTS_FILE.exists() or not SSH_KEY.exists():
        pytest.fail("the lab is not up: run `make lab-up` (or `make test-system`)")
    down = [g.name for g in GUESTS if labctl.guest_pid(g) is None or not labctl.ssh_ok(g)]
    if down:
        pytest.fail(f"lab guests not reachable over SSH: {', '.join(down)} (make lab-status)")
    the_lab = Lab([LabHost(g) for g in GUESTS])
    for host in the_lab.hosts:
        for port in DATA_NETDEVS:
            flags = host.run(f"ip -o link show dev {port}").split("<", 1)[1].split(">", 1)[0]
            host.port_states[port] = "up" if "UP" in flags.split(",") else "down"
    yield the_lab
    for host in the_lab.hosts:
        host.close()


@pytest.fixture
def clean_lab(lab):
    """The lab with its data ports bare before and after the test; both switch sides up;
    host 1's ports wired straight to host 2's (no switch between: these tests check the
    guests' kernels end to end, LACP and VLAN tags included).

    Ports that belong to an interface a lab test did not make (e.g. the roles' bond0)
    fail the test before anything is touched.
    """
    for host in lab.hosts:
        for port in DATA_NETDEVS:
            link = host.run(f"ip -o link show dev {port}")
            master = link.split(" master ")[1].split()[0] if " master " in link else None
            if master and not master.startswith("lt"):
                pytest.fail(
                    f"{host.name}: {port} is already a member of {master}: the lab tests need "
                    "bare data ports (run them before the roles configure the guests)"
                )
    lab.reset()
    if labctl.wiring() != "direct":
        labctl.wire("direct")
    yield lab
    lab.reset()


@pytest.fixture
def host1(lab) -> LabHost:
    return lab.hosts[0]


@pytest.fixture
def host2(lab) -> LabHost:
    return lab.hosts[1]


_SITE_FAILURE: list[str] = []


@pytest.fixture(scope="session")
def deployed(lab):
    """The lab configured by site.yml on inventories/lab, once per session.

    CXFAB_LAB_CONFIGURED=1 skips the run when the lab was just configured (e.g. by
    `make demo LAB_KEEP=1`). A failed site.yml fails every test that needs it with
    the play's output, without running it again.
    """
    if _SITE_FAILURE:
        pytest.fail(_SITE_FAILURE[0], pytrace=False)
    if labctl.wiring() != "fabric":  # the hosts reach each other through the switch pair
        labctl.wire("fabric")
    deployment = Deployment()
    if os.environ.get("CXFAB_LAB_CONFIGURED") != "1":
        run = deployment.play("site.yml")
        if run.returncode != 0:
            _SITE_FAILURE.append(f"site.yml failed on the lab: {run.tail()}")
            pytest.fail(_SITE_FAILURE[0], pytrace=False)
        deployment.first_site = run
        deployment.first_site_deploy_records = deployment.deploy_records()
    return deployment


@pytest.fixture(autouse=True)
def _wedged_guest_restarted(request):
    """Before each test on the deployed lab: a host guest that the TCG wedge took (its
    console shows the sign, tests/lab/vm/guests.py WEDGE_SIGNS, and it no longer answers
    SSH) is booted again and redeployed (site.yml limited to it), loudly, so the
    emulator's defect fails the test it struck and not every test after it. The test
    during which it struck keeps its failure, with the post-mortem in its message."""
    if "deployed" not in request.fixturenames:
        yield
        return
    for guest in GUESTS:
        sign = labctl.boot_wedged(guest)
        if not sign or labctl.ssh_ok(guest):
            continue
        print(f"\n>> lab: {guest.name} wedged ({sign}): booting it again", file=sys.__stderr__)
        for host in request.getfixturevalue("lab").hosts:
            if host.name == guest.name:
                host.close()  # its SSH master talks to the old boot
        seconds = labctl.restart_guest(guest)
        run = request.getfixturevalue("deployed").play(
            "site.yml", "--limit", f"localhost,{guest.name}"
        )
        print(
            f">> lab: {guest.name} back after {seconds:.0f} s; site.yml on it exited"
            f" {run.returncode}",
            file=sys.__stderr__,
            flush=True,
        )
        assert run.returncode == 0, f"{guest.name} redeployed after a wedge: {run.tail()}"
    yield
