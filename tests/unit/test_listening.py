"""Servers seen listening from the kernel's tables, without a connection to them."""

import os
import socket
import subprocess
from pathlib import Path

import pytest
from cxfab.workloads import listening

OUTPUTS = Path(__file__).parent / "outputs"


def recorded(name):
    return (OUTPUTS / name).read_text().partition("# ---\n")[2]


def test_tcp_listeners_from_proc_net_tcp_and_tcp6_only_in_listen_state():
    # The capture also holds the listener's established connection (local port 0xE306)
    # and a connection in TIME_WAIT: neither is a listener.
    assert listening.tcp_listening([recorded("proc_net_tcp.txt")]) == {18657}
    tables = [recorded("proc_net_tcp.txt"), recorded("proc_net_tcp6.txt")]
    assert listening.tcp_listening(tables) == {18657, 18658}
    assert listening.tcp_listening([recorded("proc_net_tcp.txt").splitlines()[0]]) == set()


# Layout of `rdma -j resource show cm_id` (iproute2 rdma/res-cmid.c): one object per
# cm_id, the address and port together in src-addr ("ADDR:PORT", IPv6 unbracketed).
CM_IDS = """[{"ifindex":2,"ifname":"rxe0","port":1,"qp-type":"RC","state":"LISTEN","ps":"TCP",
"pid":812,"comm":"pingpong","cm-idn":3,"src-addr":"0.0.0.0:18602"},
{"ifindex":2,"ifname":"rxe0","port":1,"lqpn":17,"qp-type":"RC","state":"CONNECT","ps":"TCP",
"pid":813,"comm":"pingpong","cm-idn":4,"src-addr":"12.0.30.2:18603",
"dst-addr":"12.0.30.1:40112"},
{"ifindex":2,"ifname":"rxe0","state":"LISTEN","ps":"TCP","pid":9,"comm":"qperf",
"src-addr":":::18604"}]"""


def test_rdma_cm_listeners_are_the_listen_state_source_ports():
    assert listening.rdma_cm_listening(CM_IDS) == {18602, 18604}
    assert listening.rdma_cm_listening("[]") == set()
    assert listening.rdma_cm_listening('[[{"state": "LISTEN", "src-port": 7}]]') == {7}


def test_rdma_cm_output_that_is_not_the_tools_json_fails_closed():
    with pytest.raises(ValueError, match="rdma resource show cm_id: not JSON"):
        listening.rdma_cm_listening("Error: unknown resource cm_id")
    with pytest.raises(ValueError, match="expected a JSON list"):
        listening.rdma_cm_listening('{"state": "LISTEN"}')


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_waits_until_every_port_listens():
    clock = Clock()
    reads = iter([set(), {1}, {1, 2}])
    done = listening.wait_listening(
        [{"kind": "tcp", "port": 1}, {"kind": "tcp", "port": 2}],
        {"tcp": lambda: next(reads)},
        timeout=30,
        clock=clock,
        sleep=clock.sleep,
    )
    assert done == {"missing": [], "waited_s": 1.0}


def test_a_port_that_never_listens_or_cannot_be_read_is_missing_with_why():
    clock = Clock()

    def no_tool():
        raise OSError("rdma -j resource show cm_id: exit 255: Error: no such device")

    result = listening.wait_listening(
        [{"kind": "tcp", "port": 5}, {"kind": "rdma_cm", "port": 6}],
        {"tcp": lambda: {4}, "rdma_cm": no_tool},
        timeout=3,
        alive=lambda pid: True,
        clock=clock,
        sleep=clock.sleep,
    )
    assert result["waited_s"] == 3.0
    assert result["missing"] == [
        {"kind": "tcp", "port": 5, "why": "not listening"},
        {
            "kind": "rdma_cm",
            "port": 6,
            "why": "rdma -j resource show cm_id: exit 255: Error: no such device",
        },
    ]


def test_a_server_that_exited_is_not_waited_for():
    clock = Clock()
    result = listening.wait_listening(
        [{"kind": "rdma_cm", "port": 6, "pid": 41}, {"kind": "tcp", "port": 5, "pid": 42}],
        {"tcp": lambda: {5}, "rdma_cm": set},
        timeout=30,
        alive=lambda pid: pid != 41,
        clock=clock,
        sleep=clock.sleep,
    )
    assert result == {
        "missing": [{"kind": "rdma_cm", "port": 6, "why": "its server exited without listening"}],
        "waited_s": 0.0,
    }


def test_process_alive_reads_proc():
    assert listening.process_alive(os.getpid())
    child = subprocess.Popen(["true"])
    child.wait()
    assert not listening.process_alive(child.pid)


def test_the_kernel_readers_read_this_hosts_tcp_listeners_and_the_rdma_tools_json():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        port = server.getsockname()[1]
        calls = []

        def run_command(argv):
            calls.append(argv)
            return 0, CM_IDS, ""

        readers = listening.kernel_readers(run_command)
        assert port in readers["tcp"]()
        assert readers["rdma_cm"]() == {18602, 18604}
        assert calls == [listening.RDMA_CM_COMMAND]
    finally:
        server.close()
    assert port not in readers["tcp"]()


def test_a_failed_rdma_tool_is_an_oserror_naming_the_command_and_its_stderr():
    readers = listening.kernel_readers(lambda argv: (255, "", "Error: unknown object cm_id\n"))
    with pytest.raises(OSError, match=r"^rdma -j resource show cm_id: exit 255: Error: unknown"):
        readers["rdma_cm"]()


@pytest.mark.parametrize(
    ("listen", "message"),
    [
        ({"kind": "udp", "port": 1}, r"runs\[2\].listen.kind: expected tcp or rdma_cm"),
        ({"kind": "tcp", "port": 0}, r"runs\[2\].listen.port: 0 is not a port"),
        ({"kind": "tcp", "port": True}, r"runs\[2\].listen.port: True is not a port"),
        ("tcp", r"runs\[2\].listen.kind"),
    ],
)
def test_a_bad_listen_entry_is_refused_naming_its_path(listen, message):
    with pytest.raises(ValueError, match=message):
        listening.check_listen(listen, "runs[2].listen")
    listening.check_listen({"kind": "rdma_cm", "port": 18600}, "ok")
