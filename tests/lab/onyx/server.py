"""One emulated switch process: SSH server, IPL keepalive and a control port.

Run by `pair.py`; by hand:
  python -m tests.lab.onyx.server --name lab-sw-a --port 2201 \
      --keepalive-port 2301 --peer-keepalive-port 2302 --ctl-port 2401 --run-dir DIR

Control port (127.0.0.1, one line per connection, answer `ok` or JSON):
  cut-ipl | heal-ipl | set-system-mac <mac> | status | logins
  reject-line <config line> | accept-lines
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import random
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import paramiko

from .cli import Session
from .dataplane_agent import DataplaneAgent, Target
from .lldp import LldpReader
from .objects import CliError
from .runcfg import config_lines
from .switch import Identity, Keepalive, Switch

LOG = logging.getLogger("onyx")
USERNAME = "admin"
DEFAULT_PASSWORD = "admin"
# A pair started with another password keeps it here (0600), never in argv or pair.json,
# so a test can grep the switch logs and every other output for it.
PASSWORD_FILE = "login.password"
ASYNC_MESSAGES = ("other state: ready", "Active HA nodes: 2")


def banner(release: str) -> str:
    product = "Mellanox MLNX-OS" if release.startswith("3.6") else "NVIDIA Onyx"
    return f"\r\n{product} Switch Management\r\n\r\n"


class _Auth(paramiko.ServerInterface):
    def __init__(self, release: str, switch: Switch, password: str):
        self.release = release
        self.switch = switch
        self.password = password
        self.shell = threading.Event()

    def get_allowed_auths(self, username: str) -> str:
        return "password"

    def check_auth_password(self, username: str, password: str) -> int:
        if username == USERNAME and password == self.password:
            with self.switch.lock:
                self.switch.logins += 1
            return paramiko.AUTH_SUCCESSFUL
        return paramiko.AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return paramiko.OPEN_SUCCEEDED
        return paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_pty_request(self, *args, **kwargs) -> bool:
        return True

    def check_channel_window_change_request(self, *args, **kwargs) -> bool:
        return True

    def check_channel_shell_request(self, channel) -> bool:
        self.shell.set()
        return True

    def get_banner(self) -> tuple[str, str]:
        return banner(self.release).strip() + "\r\n", "en-US"


class Terminal:
    """Line discipline of one SSH shell channel: echo, line editing, async messages."""

    def __init__(self, switch: Switch, channel: paramiko.Channel):
        self.switch = switch
        self.channel = channel
        self.session = Session(switch)
        self.write_lock = threading.Lock()
        self.buffer = ""
        self.last_io = time.monotonic()

    def send(self, text: str) -> None:
        with self.write_lock:
            self.channel.sendall(text.replace("\r\n", "\n").replace("\n", "\r\n").encode())
            self.last_io = time.monotonic()

    def run(self) -> None:
        host = self.switch.cfg.hostname
        login = time.strftime("%a %b %d %H:%M:%S %Y")
        self.send(
            banner(self.switch.identity.release)
            + f"Last login: {login} from 127.0.0.1\r\n\r\n"
            + f"Mellanox Switch\r\n\r\n{self.session.prompt()}"
        )
        LOG.info("%s: session opened", host)
        last = ""
        while not self.session.closed:
            data = self.channel.recv(4096)
            if not data:
                break
            self.last_io = time.monotonic()
            echo = ""
            for char in data.decode("utf-8", errors="replace"):
                if char == "\n" and last == "\r":
                    last = char
                    continue
                last = char
                if char in "\r\n":
                    self.send(echo + "\r\n")
                    echo = ""
                    self._line(self.buffer)
                    self.buffer = ""
                    if self.session.closed:
                        break
                elif char in "\x7f\x08":
                    if self.buffer:
                        self.buffer = self.buffer[:-1]
                        echo += "\b \b"
                elif char == "\x03":
                    self.buffer = ""
                    echo += "\r\n" + self.session.prompt()
                elif char >= " " or char == "\t":
                    self.buffer += char
                    echo += char
            if echo:
                self.send(echo)
        LOG.info("%s: session closed", host)

    def _line(self, line: str) -> None:
        if line.strip():
            LOG.info("%s: cmd %r", self.switch.cfg.hostname, line.strip())
        output = self.session.handle(line)
        if self.session.closed:
            return
        text = output.rstrip("\n")
        self.send((text + "\n" if text else "") + self.session.prompt())

    def maybe_async_message(self) -> None:
        """Write an unsolicited cluster message, as a real switch does, when idle."""
        if self.buffer or time.monotonic() - self.last_io < 1.0 or self.session.closed:
            return
        message = random.choice(ASYNC_MESSAGES)
        with contextlib.suppress(OSError):
            self.send(f"\n{message}\n{self.session.prompt()}")


class SwitchServer:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        run_dir = Path(args.run_dir)
        identity = Identity(args.name, args.version, args.host_mac, args.mgmt_ip)
        saved = run_dir / f"{args.name}.saved.cfg"
        self.switch = Switch(identity, saved_path=str(saved))
        if saved.exists():
            self._load(saved)
        self.host_key = self._host_key(run_dir / f"{args.name}.host_key")
        password_file = run_dir / PASSWORD_FILE
        self.password = (
            password_file.read_text(encoding="utf-8").strip()
            if password_file.exists()
            else DEFAULT_PASSWORD
        )
        self.terminals: list[Terminal] = []
        self.terminals_lock = threading.Lock()

    def _load(self, path: Path) -> None:
        for line in config_lines(path.read_text(encoding="utf-8")):
            try:
                self.switch.cfg.apply(line)
            except CliError as exc:
                LOG.warning("%s: saved config line %r refused: %s", self.args.name, line, exc)
        self.switch.mark_saved()
        LOG.info("%s: loaded %s", self.args.name, path)

    @staticmethod
    def _host_key(path: Path) -> paramiko.PKey:
        if path.exists():
            return paramiko.RSAKey(filename=str(path))
        key = paramiko.RSAKey.generate(2048)
        key.write_private_key_file(str(path))
        return key

    # ------------------------------------------------------------------ SSH
    def serve_ssh(self) -> None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.args.port))
        listener.listen(16)
        LOG.info("%s: SSH on 127.0.0.1:%d", self.args.name, self.args.port)
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=self._connection, args=(conn,), daemon=True).start()

    def _connection(self, conn: socket.socket) -> None:
        transport = paramiko.Transport(conn)
        transport.add_server_key(self.host_key)
        auth = _Auth(self.args.version, self.switch, self.password)
        try:
            transport.start_server(server=auth)
            channel = transport.accept(30)
            if channel is None or not auth.shell.wait(10):
                return
            terminal = Terminal(self.switch, channel)
            with self.terminals_lock:
                self.terminals.append(terminal)
            try:
                terminal.run()
            finally:
                with self.terminals_lock:
                    self.terminals.remove(terminal)
                channel.close()
        except (paramiko.SSHException, EOFError, OSError) as exc:
            LOG.info("%s: connection ended: %s", self.args.name, exc)
        finally:
            transport.close()

    # ------------------------------------------------------------------ async + control
    def async_messages(self) -> None:
        while True:
            time.sleep(random.uniform(2.0, 5.0))
            with self.terminals_lock:
                terminals = list(self.terminals)
            for terminal in terminals:
                terminal.maybe_async_message()

    def serve_control(self, listener: socket.socket) -> None:
        while True:
            conn, _ = listener.accept()
            with conn:
                request = conn.makefile("r").readline().split()
                conn.sendall((self.control(request) + "\n").encode())

    def control(self, request: list[str]) -> str:
        LOG.info("%s: control %s", self.args.name, request)
        switch = self.switch
        if request == ["cut-ipl"]:
            switch.ipl_cut = True
        elif request == ["heal-ipl"]:
            switch.ipl_cut = False
        elif request[:1] == ["set-system-mac"] and len(request) == 2:
            try:
                with switch.lock:
                    switch.cfg.apply(f"mlag system-mac {request[1]}")
            except CliError as exc:
                return f"error {exc}"
        elif request[:1] == ["config"] and len(request) > 1:
            # A line applied behind cxfab's back (a planted fault): not saved.
            try:
                with switch.lock:
                    switch.cfg.apply(" ".join(request[1:]))
            except CliError as exc:
                return f"error {exc}"
        elif request[:1] == ["reject-line"] and len(request) > 1:
            switch.rejected_lines.add(" ".join(request[1:]))
        elif request == ["accept-lines"]:
            switch.rejected_lines.clear()
        elif request == ["logins"]:
            return str(switch.logins)
        elif request == ["status"]:
            status = switch.status()
            return json.dumps(
                {
                    "oper": status["oper"],
                    "ipl_up": status["ipl_up"],
                    "peer_reachable": status["peer"] is not None,
                    "unsaved": switch.unsaved(),
                    "vrrp": switch.vrrp_view(),
                    "rejected_lines": sorted(switch.rejected_lines),
                    "mpos": {str(n): mpo["state"] for n, mpo in status["mpos"].items()},
                }
            )
        else:
            return "error unknown request"
        return "ok"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--keepalive-port", type=int, required=True)
    parser.add_argument("--peer-keepalive-port", type=int, required=True)
    parser.add_argument("--ctl-port", type=int, required=True)
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--version", default="3.10.2002")
    parser.add_argument("--host-mac", default="7C:FE:90:11:00:0A")
    parser.add_argument("--mgmt-ip", default="127.0.0.1")
    parser.add_argument("--async-messages", action="store_true")
    parser.add_argument(
        "--dataplane", help="JSON file of the lab's fabric guest (lab.py): drive this switch's "
        "namespace there from its config"
    )  # fmt: skip
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = SwitchServer(args)
    Keepalive(server.switch, args.keepalive_port, args.peer_keepalive_port).start()
    control = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    control.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    control.bind(("127.0.0.1", args.ctl_port))
    control.listen(4)
    threading.Thread(target=server.serve_control, args=(control,), daemon=True).start()
    if args.async_messages:
        threading.Thread(target=server.async_messages, daemon=True).start()
    if args.dataplane:
        spec = json.loads(Path(args.dataplane).read_text(encoding="utf-8"))
        mine = spec["switches"][args.name]
        server.switch.lag_states = {}
        server.switch.dataplane_links = frozenset()
        target = Target(ssh=spec["ssh"], namespace=mine["namespace"], cabled=mine["cabled"])
        DataplaneAgent(server.switch, target).start()
        server.switch.lldp_reader = LldpReader(spec["ssh"], mine["namespace"])
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_ssh()
    return 0


if __name__ == "__main__":
    sys.exit(main())
