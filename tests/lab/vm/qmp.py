"""A minimal QMP client: enough to cut or restore a guest's link and to quit a guest."""

from __future__ import annotations

import json
import socket
from pathlib import Path


class QmpError(RuntimeError):
    pass


class Qmp:
    """One QMP session over the guest's unix socket (capabilities negotiated on open)."""

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(timeout)
        self._sock.connect(str(path))
        self._reader = self._sock.makefile("r", encoding="utf-8")
        self._read_reply()  # the greeting
        self.execute("qmp_capabilities")

    def _read_reply(self) -> dict:
        while True:
            line = self._reader.readline()
            if not line:
                raise QmpError("QMP socket closed")
            message = json.loads(line)
            if "event" not in message:  # asynchronous events are not replies
                return message

    def execute(self, command: str, **arguments) -> object:
        request = {"execute": command}
        if arguments:
            request["arguments"] = arguments
        self._sock.sendall(json.dumps(request).encode() + b"\n")
        reply = self._read_reply()
        if "error" in reply:
            raise QmpError(f"{command}: {reply['error'].get('desc', reply['error'])}")
        return reply.get("return")

    def close(self) -> None:
        self._reader.close()
        self._sock.close()

    def __enter__(self) -> Qmp:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
