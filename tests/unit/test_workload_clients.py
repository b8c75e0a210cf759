"""Workload clients run in turn, retried while their server is not listening (real sockets)."""

import json
import socket
import sys

from cxfab.workloads import pair_runs as workloads
from cxfab.workloads.clients import run_clients

# An iperf3-shaped client: its JSON reading when the server accepts, nothing when refused.
CONNECT = """
import json, socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
except OSError as exc:
    print(exc, file=sys.stderr)
    sys.exit(1)
print(json.dumps({"end": {"sum_received": {"bits_per_second": 1e9}}}))
"""


def _iperf3_run(argv):
    return {"tool": "iperf3", "transport": "tcp", "size_bytes": None, "client": argv}


def test_a_client_is_retried_until_its_server_listens():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))  # bound, not listening yet: connections are refused
    port = server.getsockname()[1]
    delays = []

    def server_starts_listening(delay):
        delays.append(delay)
        server.listen(1)

    run = _iperf3_run([sys.executable, "-c", CONNECT, str(port)])
    try:
        (result,) = run_clients([run], workloads.client_error, 11, 3, 30, server_starts_listening)
    finally:
        server.close()
    assert result["attempts"] == 2 and result["error"] == "" and result["rc"] == 0
    assert delays == [3]
    assert workloads.run_result(run, result["stdout"])["bits_per_second"] == 1e9


def test_a_run_without_a_reading_fails_after_its_attempts_and_the_next_one_runs():
    refused = {"error": "unable to connect to server: Connection refused"}
    silent = _iperf3_run(["sh", "-c", f"echo '{json.dumps(refused)}'; echo oops >&2"])
    fine = _iperf3_run(["echo", json.dumps({"end": {"sum": {"bits_per_second": 5.0}}})])
    delays = []
    first, second = run_clients([silent, fine], workloads.client_error, 3, 0.5, 30, delays.append)
    # iperf3 exits 0 on a refused connection: the output, not the status, says so.
    assert first["rc"] == 0 and first["attempts"] == 3
    assert first["error"] == "iperf3: unable to connect to server: Connection refused"
    assert first["stderr"] == "oops\n"
    assert delays == [0.5, 0.5]
    assert second == {"rc": 0, "stdout": second["stdout"], "stderr": "", "attempts": 1, "error": ""}


def test_a_failed_exit_without_a_parse_error_names_the_status():
    # rcat's output is not parsed: its exit status alone decides.
    run = {"tool": "rcat", "transport": "rdma", "client": ["sh", "-c", "exit 4"]}
    (result,) = run_clients([run], workloads.client_error, 2, 0, 30, lambda _: None)
    assert result["error"] == "non-zero return code 4" and result["attempts"] == 2


def test_a_hung_client_is_killed_with_its_children_and_not_retried():
    # The forked sleep holds the output pipes: only a process-group kill ends the read.
    run = _iperf3_run(["sh", "-c", "sleep 600 & sleep 600"])
    (result,) = run_clients([run], workloads.client_error, 5, 0, 0.5, lambda _: None)
    assert result["error"] == "timed out after 0.5 s"
    assert result["attempts"] == 1 and result["rc"] is None


def test_a_client_that_cannot_start_is_not_retried():
    run = _iperf3_run(["/nonexistent/iperf3", "-c", "x"])
    (result,) = run_clients([run], workloads.client_error, 5, 0, 30, lambda _: None)
    assert result["error"] == "/nonexistent/iperf3: No such file or directory"
    assert result["attempts"] == 1
