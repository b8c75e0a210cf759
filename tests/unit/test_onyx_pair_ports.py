"""The switch pair's port check agrees with the servers' own bind (SO_REUSEADDR).

A lab brought up within a minute of the last one going down found the last
switches' ports in TIME_WAIT (the emulator closes its connections first): the check
bound without SO_REUSEADDR and called the port in use, while the servers, which set
it, would have listened there fine (seen on the shared lab: `--ports: port 2402 on
127.0.0.1 is in use` right after another worktree's `make lab-down`).
"""

from __future__ import annotations

import socket

from tests.lab.switch_processes import port_free


def _time_wait_port() -> int:
    """A port whose only socket is the server side of a connection in TIME_WAIT."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    served, _ = listener.accept()
    listener.close()
    served.close()  # the server closes first: its end goes to TIME_WAIT
    client.recv(1)
    client.close()
    return port


def test_a_port_left_in_time_wait_is_free_for_the_switches():
    port = _time_wait_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as plain:
        try:
            plain.bind(("127.0.0.1", port))
            blocked_without_reuse = False
        except OSError:
            blocked_without_reuse = True
    assert blocked_without_reuse, "no TIME_WAIT to test against"
    assert port_free(port)


def test_a_listening_port_is_in_use():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        assert not port_free(listener.getsockname()[1])


def test_a_bound_udp_port_is_in_use():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as keepalive:
        keepalive.bind(("127.0.0.1", 0))
        assert not port_free(keepalive.getsockname()[1], socket.SOCK_DGRAM)
