"""The NVUE REST API of one emulated Cumulus Linux switch: HTTPS, basic auth, /nvue_v1.

    python -m tests.lab.nvue.server --name lab-sw-a --run-dir DIR [--port 0] [--role primary]

Generates a self-signed certificate for 127.0.0.1 at start (`DIR/<name>.pem`, as the
switch does at first boot: NVUE API page, "Certificates"), listens on 127.0.0.1
(port 0: any free one) and writes `DIR/<name>.json` ({port, cert, fingerprint, pid})
once it accepts connections. Every request is checked: path, query, JSON body
(PATCH and DELETE bodies against the kept spec parts); a refusal answers 400 with
an RFC 7807 body (UNCONFIRMED: the shape NVUE's API framework answers with) and is
recorded. `/_lab/...` (same auth) is the lab's control, not NVUE: status, faults.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import logging
import os
import ssl
import subprocess
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from tests.lab.onyx.dataplane_agent import Target
from tests.lab.onyx.switch import Keepalive

from .dataplane_agent import NvueDataplaneAgent
from .model import FAULTS, Garbled, NotFound, Refused, Switch

ROOT = "/nvue_v1"
QUERY_KEYS = {"rev", "filled", "diff"}


def make_certificate(run_dir: Path, name: str) -> tuple[Path, Path, str]:
    """A self-signed certificate for IP 127.0.0.1 (CA:TRUE so that it can be its own trust
    anchor, as an operator pins a switch's self-signed certificate); its SHA-256."""
    cert, key = run_dir / f"{name}.pem", run_dir / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "2", "-subj", f"/CN={name}", "-keyout", str(key), "-out", str(cert),
         "-addext", "subjectAltName=IP:127.0.0.1",
         "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,digitalSignature,keyCertSign"],
        check=True, capture_output=True,
    )  # fmt: skip
    os.chmod(key, 0o600)
    der = ssl.PEM_cert_to_DER_cert(cert.read_text(encoding="ascii"))
    return cert, key, hashlib.sha256(der).hexdigest()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes: with Nagle on, the client's delayed ACK
    # holds the body 40 ms per request.
    disable_nagle_algorithm = True
    server: NvueServer

    def log_message(self, fmt, *args):  # one line per request in the switch's log
        sys.stdout.write(f"{self.command} {self.path} -> {args[1] if len(args) > 1 else ''}\n")
        sys.stdout.flush()

    # ------------------------------------------------------------ plumbing
    def _send(self, status: int, body, headers: dict | None = None) -> None:
        data = body.encode() if isinstance(body, Garbled) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _refuse(self, problems: list[str], status: int = 400) -> None:
        title = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}[status]
        detail = "; ".join(problems)
        if status == 400:
            self.server.switch.refusals.append(
                {"method": self.command, "path": self.path, "problems": problems}
            )
        self._send(
            status, {"detail": detail, "status": status, "title": title, "type": "about:blank"}
        )

    def _authorised(self) -> bool:
        header = self.headers.get("Authorization", "")
        expected = "Basic " + base64.b64encode(self.server.credentials.encode()).decode()
        if hmac.compare_digest(header.encode(), expected.encode()):
            return True
        denied = {"detail": "Unauthorized", "status": 401, "title": "Unauthorized"}
        self._send(401, {**denied, "type": "about:blank"}, {"WWW-Authenticate": "Basic"})
        return False

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None, False
        try:
            return json.loads(raw), True
        except ValueError:
            raise Refused(["(body): not JSON"]) from None

    def _route(self) -> tuple[str, tuple, dict]:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        unknown = sorted(set(query) - QUERY_KEYS)
        if unknown:
            raise Refused([f"query: {unknown} not known"])
        if parts.path.startswith("/_lab/"):
            return "lab", tuple(parts.path[len("/_lab/") :].split("/")), query
        if parts.path != ROOT and not parts.path.startswith(ROOT + "/"):
            raise NotFound(parts.path)
        path = tuple(unquote(p) for p in parts.path[len(ROOT) :].split("/") if p)
        if path[:1] == ("revision",):
            return "revision", path[1:], query
        return "tree", path, query

    def _handle(self) -> None:
        if not self._authorised():
            return
        try:
            kind, path, query = self._route()
            body, has_body = (
                self._body() if self.command in ("PATCH", "POST", "DELETE") else (None, False)
            )
            status, answer = getattr(self, f"_{kind}")(path, query, body, has_body)
        except Refused as exc:
            self._refuse(exc.problems)
            return
        except NotFound as exc:
            self._refuse([f"{exc}: not found"], 404)
            return
        self._send(status, answer)

    do_GET = do_POST = do_PATCH = do_DELETE = _handle

    # ------------------------------------------------------------ NVUE
    def _tree(self, path, query, body, has_body):
        switch, rev = self.server.switch, query.get("rev")
        if self.command == "GET":
            if "diff" in query:  # `nv config diff <rev> <diff>` (model.diff, UNCONFIRMED form)
                if not rev or not query["diff"]:
                    raise Refused(["diff: needs ?rev=<base>&diff=<target>"])
                return 200, switch.diff(path, rev, query["diff"])
            if query.get("filled", "false") not in ("true", "false"):
                raise Refused(["filled: not true or false"])
            return 200, switch.read(path, rev)
        if not rev:
            raise Refused([f"{self.command} needs ?rev=<revision>"])
        if self.command == "PATCH":
            if not has_body:
                raise Refused(["(body): a PATCH needs a JSON body"])
            return 200, switch.patch(rev, path, body)
        if self.command == "DELETE":
            return 200, switch.delete(rev, path)
        raise Refused([f"{self.command} {ROOT}/{'/'.join(path)}: not allowed"])

    def _revision(self, path, query, body, has_body):
        switch = self.server.switch
        if query:
            raise Refused([f"query: {sorted(query)} not known on /revision"])
        if not path:
            if self.command == "POST":
                if has_body:
                    raise Refused(["(body): POST /revision takes no body"])
                rev, record = switch.create_revision()
                return 200, {rev: record}
            if self.command == "GET":
                with switch.lock:
                    return 200, {r: switch.public(r) for r in switch.revisions}
            raise Refused([f"{self.command} /revision: not allowed"])
        if len(path) != 1:
            raise NotFound("/".join(path))
        rev = path[0]
        if self.command == "GET":
            with switch.lock:
                if rev not in switch.revisions:
                    raise NotFound(f"revision {rev}")
                return 200, switch.public(rev)
        if self.command == "PATCH":
            return 200, switch.change_state(rev, body)
        if self.command == "DELETE":
            switch.detach(rev)
            return 200, {}
        raise Refused([f"{self.command} /revision/{rev}: not allowed"])

    # ------------------------------------------------------------ the lab's control
    def _lab(self, path, query, body, has_body):
        switch = self.server.switch
        if path == ("status",) and self.command == "GET":
            return 200, switch.status()
        if path == ("fault",) and self.command == "POST":
            lists = {"refuse-paths", "garble-paths", "ipl-cut"}
            if not isinstance(body, dict) or not set(body) <= set(FAULTS) | lists:
                raise Refused([f"fault: body must map {list(FAULTS)} or {sorted(lists)}"])
            with switch.lock:
                for name in FAULTS:
                    if body.get(name) is True:
                        switch.faults.add(name)
                    elif body.get(name) is False:
                        switch.faults.discard(name)
                if "refuse-paths" in body:
                    switch.refused_paths = list(body["refuse-paths"])
                if "garble-paths" in body:
                    switch.garbled_paths = list(body["garble-paths"])
                if "ipl-cut" in body:  # the lab pair's `fail ipl`: the peer-link cable gone
                    switch.peering.ipl_cut = body["ipl-cut"] is True
            return 200, switch.status()
        raise NotFound("/_lab/" + "/".join(path))


class NvueServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, switch: Switch, credentials: str):
        super().__init__(address, Handler)
        self.switch, self.credentials = switch, credentials


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--run-dir", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--role", choices=("primary", "secondary"), default="primary")
    parser.add_argument("--username", default="cumulus")
    parser.add_argument(
        "--startup", help="JSON file of the applied tree: loaded at start, written by applies"
    )
    parser.add_argument("--keepalive-port", type=int, help="the lab pair's (pair.py): UDP here")
    parser.add_argument("--peer-keepalive-port", type=int, help="... and to the peer's")
    parser.add_argument(
        "--dataplane", help="JSON file of the lab's fabric guest (lab.py): drive this switch's "
        "namespace there from its applied tree"
    )  # fmt: skip
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr
    )
    # The password comes in the environment, never on a command line (`ps` shows those).
    password = os.environ.get("NVUE_LAB_PASSWORD", "CumulusLinux!")
    args.run_dir.mkdir(parents=True, exist_ok=True)
    cert, key, fingerprint = make_certificate(args.run_dir, args.name)
    switch = Switch(args.name, args.role)
    if args.startup:
        switch.startup_path = args.startup
        if Path(args.startup).exists():
            switch.applied = json.loads(Path(args.startup).read_text(encoding="utf-8"))
    server = NvueServer(("127.0.0.1", args.port), switch, f"{args.username}:{password}")
    if args.keepalive_port:
        switch.peering.enabled = True
        Keepalive(switch.peering, args.keepalive_port, args.peer_keepalive_port).start()
    if args.dataplane:
        spec = json.loads(Path(args.dataplane).read_text(encoding="utf-8"))
        mine = spec["switches"][args.name]
        target = Target(ssh=spec["ssh"], namespace=mine["namespace"], cabled=mine["cabled"])
        NvueDataplaneAgent(switch, target).start()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    ready = {"port": server.server_address[1], "cert": str(cert), "fingerprint": fingerprint,
             "pid": os.getpid()}  # fmt: skip
    marker = args.run_dir / f"{args.name}.json"
    marker.with_suffix(".tmp").write_text(json.dumps(ready), encoding="utf-8")
    marker.with_suffix(".tmp").rename(marker)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
