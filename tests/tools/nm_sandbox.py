"""A real NetworkManager in private namespaces, for the integration tier.

`running(workdir, ports)` starts, under `unshare --net --mount --pid --uts --fork
--mount-proc`, this file's `serve`, which is PID 1 of the new namespaces and:

- mounts a tmpfs on /run (the bus socket, NetworkManager's run state and cxfab's
  rollback record live there), a read-only sysfs of the new network namespace on
  /sys (NetworkManager then needs no udev: see `serve`) and binds `workdir/etc` on
  /etc/NetworkManager and `workdir/lib` on /var/lib/NetworkManager, so the product
  writes its keyfiles to the real default path /etc/NetworkManager/system-connections
  - of the namespace;
- creates a veth pair per data port (`<port>` managed, its peer `peer-<port>` unmanaged,
  up, the far end of the cable) and `mgmt0`, a veth with an address standing in
  for the management interface (unmanaged by NetworkManager too);
- runs a `dbus-daemon` with a system bus of its own on /run/dbus/system_bus_socket
  (the default address, so nmcli and busctl find it unchanged) and
  `NetworkManager --no-daemon` with its own NetworkManager.conf: keyfile plugin only,
  `no-auto-default=*`, every device unmanaged but the test's names (`managed` globs);
- waits until NetworkManager answers and sees the ports, prints `ready`, then waits
  for its stdin to close, stops NetworkManager and the bus, and exits.

When PID 1 of a PID namespace exits the kernel kills every process left in it, and
the network namespace with its veths and the mount namespace go with the last
process: nothing of the sandbox outlives `running`, whatever the test did. The
controller's own interfaces, /etc and /run are never touched (only bind mounts inside
the private mount namespace). Commands run inside with `Sandbox.run` (nsenter into the
three namespaces).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

READY = "ready"
MGMT = ("mgmt0", "192.0.2.10/24")

DBUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>unix:path=/run/dbus/system_bus_socket</listen>
  <policy context="default">
    <allow user="root"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
  </policy>
</busconfig>
"""

NM_CONF = """# cxfab integration sandbox (tests/tools/nm_sandbox.py)
[main]
plugins=keyfile
no-auto-default=*
hostname-mode=none
dhcp=internal
dns=none
rc-manager=unmanaged

[keyfile]
unmanaged-devices={unmanaged}

[logging]
level=INFO
backend=debug
"""


def available() -> str:
    """Empty when the sandbox can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root (namespaces, veths, bind mounts)"
    for tool in ("NetworkManager", "nmcli", "dbus-daemon", "busctl", "unshare", "nsenter", "ip"):
        if not shutil.which(tool):
            return f"{tool} is not installed (network-manager, dbus-daemon: requirements-apt.txt)"
    return ""


class Sandbox:
    def __init__(self, proc: subprocess.Popen, workdir: Path):
        self.proc, self.workdir = proc, workdir

    def run(self, argv, **kwargs) -> subprocess.CompletedProcess:
        """Run `argv` inside the sandbox's network, mount and PID namespaces."""
        enter = ["nsenter", "-t", str(self.proc.pid), "-n", "-m", "-p", "--"]
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("text", True)
        kwargs.setdefault("timeout", 120)
        return subprocess.run([*enter, *argv], check=False, **kwargs)

    def log(self) -> str:
        path = self.workdir / "NetworkManager.log"
        return path.read_text(errors="replace") if path.exists() else ""


@contextlib.contextmanager
def running(workdir: Path, ports, managed=("cx*",), timeout: float = 30):
    """The sandbox, torn down on leaving (also on failure)."""
    workdir = Path(workdir)
    argv = [
        # --uts: NetworkManager sets the kernel hostname from /etc/hostname at start;
        # without a namespace of its own it renamed a lab guest (lab-host1 -> the
        # controller's `vm`, whose /etc the guests share), and its LLDP with it.
        "unshare", "--net", "--mount", "--pid", "--uts", "--fork", "--mount-proc",
        "--propagation", "private", "--kill-child",
        sys.executable, "-m", "tests.tools.nm_sandbox", "serve", str(workdir),
        ",".join(ports), ",".join(managed),
    ]  # fmt: skip
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        ready, _, _ = select.select([proc.stdout], [], [], timeout + 10)
        line = proc.stdout.readline().strip() if ready else f"nothing within {timeout + 10} s"
        if line != READY:
            proc.kill()
            rest = proc.stdout.read()
            log = Sandbox(proc, workdir).log()[-3000:]
            raise RuntimeError(f"NetworkManager sandbox did not start: {line}\n{rest}\n{log}")
        # Commands run in the namespaces of PID 1 there, which is unshare's child.
        child = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        box = Sandbox(proc, workdir)
        box.proc = _Pid(int(child[0])) if child else proc
        yield box
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class _Pid:
    def __init__(self, pid):
        self.pid = pid


# ------------------------------------------------------------------ inside
def peer(port: str) -> str:
    """The far end of a port's veth (never matches `managed`)."""
    return f"peer-{port}"


def _sh(*argv):
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: rc={done.returncode} {done.stderr.strip()}")


def _wait(predicate, what, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise RuntimeError(f"timed out after {timeout} s waiting for {what}")


def _nm_sees(ports) -> bool:
    done = subprocess.run(
        ["nmcli", "-t", "-f", "DEVICE,STATE", "device"], capture_output=True, text=True
    )
    states = dict(line.split(":", 1) for line in done.stdout.splitlines() if ":" in line)
    return done.returncode == 0 and all(
        states.get(p) not in (None, "unmanaged", "unavailable") for p in ports
    )


def serve(workdir: Path, ports: list[str], managed: list[str]) -> int:
    assert os.getpid() == 1, "serve runs as PID 1 of its own namespaces (use running())"
    etc, lib = workdir / "etc", workdir / "lib"
    for path in (etc / "conf.d", etc / "system-connections", etc / "system-conf.d", lib):
        path.mkdir(parents=True, exist_ok=True)
    unmanaged = ",".join(f"except:interface-name:{glob}" for glob in managed)
    (etc / "NetworkManager.conf").write_text(NM_CONF.format(unmanaged=unmanaged))
    (workdir / "dbus.conf").write_text(DBUS_CONF)
    _sh("mount", "-t", "tmpfs", "-o", "mode=0755", "cxfab-nm-run", "/run")
    # A sysfs of this network namespace, read-only: NetworkManager then does not wait
    # for udev (none runs here) to initialise each link, as in any container whose
    # /sys is read-only (it uses udev only when /sys is writable).
    _sh("mount", "-t", "sysfs", "-o", "ro", "cxfab-nm-sys", "/sys")
    _sh("mount", "--bind", str(etc), "/etc/NetworkManager")
    _sh("mount", "--bind", str(lib), "/var/lib/NetworkManager")
    for sub in ("dbus", "NetworkManager", "lock"):
        os.makedirs(f"/run/{sub}", exist_ok=True)
    _sh("ip", "link", "set", "lo", "up")
    for port in ports:
        _sh("ip", "link", "add", port, "type", "veth", "peer", "name", peer(port))
        _sh("ip", "link", "set", peer(port), "up")
    _sh("ip", "link", "add", MGMT[0], "type", "veth", "peer", "name", peer(MGMT[0]))
    _sh("ip", "link", "set", peer(MGMT[0]), "up")
    _sh("ip", "address", "add", MGMT[1], "dev", MGMT[0])
    _sh("ip", "link", "set", MGMT[0], "up")
    children = []
    log = open(workdir / "NetworkManager.log", "ab")  # noqa: SIM115 - open until exit
    bus = ["dbus-daemon", f"--config-file={workdir / 'dbus.conf'}", "--nofork", "--nopidfile"]
    children.append(subprocess.Popen(bus, stdout=log, stderr=log))
    try:
        _wait(lambda: os.path.exists("/run/dbus/system_bus_socket"), "the bus socket", 10)
        daemon = [
            "NetworkManager",
            "--no-daemon",
            "--config=/etc/NetworkManager/NetworkManager.conf",
            "--config-dir=/etc/NetworkManager/conf.d",
            f"--system-config-dir={etc / 'system-conf.d'}",
            "--state-file=/var/lib/NetworkManager/NetworkManager.state",
            "--pid-file=/run/NetworkManager/NetworkManager.pid",
        ]
        children.append(subprocess.Popen(daemon, stdout=log, stderr=log))
        _wait(lambda: _nm_sees(ports), f"NetworkManager to manage {', '.join(ports)}", 20)
        print(READY, flush=True)
        sys.stdin.read()  # until the test closes it
    except Exception as exc:  # the reason goes to running(), which raises it
        print(f"error: {exc}", flush=True)
        return 1
    finally:
        for child in reversed(children):
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        _, _, where, port_list, globs = sys.argv
        sys.exit(serve(Path(where), port_list.split(","), globs.split(",")))
    sys.exit(f"usage: {sys.argv[0]} serve WORKDIR PORTS MANAGED_GLOBS")
