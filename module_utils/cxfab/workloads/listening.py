"""Which ports a host's servers listen on, read from the kernel, without connecting.

A one-shot server (iperf3 -s -1, pingpong, rcat) takes the first connection that
reaches it as its client, so readiness is read on the server's host instead of
probed with a connect: TCP listeners from /proc/net/tcp{,6} (state 0A), RDMA-CM
listeners (librdmacm: rdma and rsocket transports, perftest -R) from the kernel's
resource tracking (`rdma -j resource show cm_id`), which have no TCP socket at all.
Every read fails closed: what could not be read counts as not listening, and the
reason is kept.
"""

from __future__ import annotations

import json
import time

TCP_STATE_LISTEN = "0A"
PROC_NET_TCP = ("/proc/net/tcp", "/proc/net/tcp6")
RDMA_CM_COMMAND = ["rdma", "-j", "resource", "show", "cm_id"]


def tcp_listening(tables: list[str]) -> set[int]:
    """Local ports in LISTEN state in /proc/net/tcp-style tables (hex `addr:port`)."""
    ports = set()
    for text in tables:
        for line in text.splitlines()[1:]:
            fields = line.split()
            if len(fields) < 4 or fields[3] != TCP_STATE_LISTEN or ":" not in fields[1]:
                continue
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _entries(data):
    """The cm_id objects of the tool's JSON, however deeply its releases nest the list."""
    if isinstance(data, dict):
        yield data
    elif isinstance(data, list):
        for item in data:
            yield from _entries(item)


def _src_port(entry: dict) -> int | None:
    """The listening port: `src-addr` is "ADDR:PORT" (IPv6 too: "::" + ":18600")."""
    try:
        if "src-port" in entry:
            return int(entry["src-port"])
        return int(str(entry["src-addr"]).rsplit(":", 1)[1])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def rdma_cm_listening(text: str) -> set[int]:
    """Source ports of the RDMA-CM ids in LISTEN state (`rdma -j resource show cm_id`).

    A wildcard listener shows once per RDMA device it listens on; any one counts.
    Raises ValueError when the output is not the tool's JSON.
    """
    try:
        data = json.loads(text or "")
    except ValueError:
        raise ValueError(f"rdma resource show cm_id: not JSON: {(text or '')[:120]!r}") from None
    if not isinstance(data, list):
        raise ValueError("rdma resource show cm_id: expected a JSON list")
    ports = {_src_port(e) for e in _entries(data) if e.get("state") == "LISTEN"}
    return {port for port in ports if port is not None}


def process_alive(pid: int) -> bool:
    """True while /proc/<pid> is a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2 :].split()[0] != "Z"


def wait_listening(
    listeners: list[dict],
    readers: dict,
    timeout: float,
    alive=process_alive,
    clock=time.monotonic,
    sleep=time.sleep,
) -> dict:
    """Read until every listener listens, its process ended, or `timeout` seconds passed.

    listeners: [{'kind': 'tcp'|'rdma_cm', 'port', 'pid' (optional: the process that
    should listen)}]; readers: {kind: callable returning the set of listening ports,
    raising ValueError/OSError when it cannot read}. A listener whose process ended
    is not waited for. Returns {'missing': [{'kind', 'port', 'why'}], 'waited_s'}.
    """
    start = clock()
    while True:
        seen, why = {}, {}
        for kind in sorted({item["kind"] for item in listeners}):
            try:
                seen[kind] = readers[kind]()
            except (OSError, ValueError) as exc:
                seen[kind], why[kind] = set(), str(exc)
        missing, waiting = [], False
        for item in listeners:
            if item["port"] in seen[item["kind"]]:
                continue
            pid = item.get("pid")
            if pid and not alive(pid):
                reason = "its server exited without listening"
            else:
                reason, waiting = why.get(item["kind"], "not listening"), True
            missing.append({"kind": item["kind"], "port": item["port"], "why": reason})
        waited = clock() - start
        if not waiting or waited >= timeout:
            return {"missing": missing, "waited_s": round(waited, 2)}
        sleep(0.5)


def kernel_readers(run_command) -> dict:
    """The readers wait_listening takes, reading this host's kernel.

    run_command(argv) -> (rc, stdout, stderr), as AnsibleModule.run_command.
    """

    def read_tcp():
        tables = []
        for path in PROC_NET_TCP:
            try:
                with open(path, encoding="ascii") as handle:
                    tables.append(handle.read())
            except FileNotFoundError:  # no IPv6 in this kernel
                continue
        if not tables:
            raise OSError("neither /proc/net/tcp nor /proc/net/tcp6 could be read")
        return tcp_listening(tables)

    def read_rdma_cm():
        rc, out, err = run_command(RDMA_CM_COMMAND)
        if rc != 0:
            raise OSError(f"{' '.join(RDMA_CM_COMMAND)}: exit {rc}: {err.strip()[:200]}")
        return rdma_cm_listening(out)

    return {"tcp": read_tcp, "rdma_cm": read_rdma_cm}


def check_listen(listen, where: str) -> None:
    """Raise ValueError naming `where` unless listen is {'kind': tcp|rdma_cm, 'port'}."""
    if not isinstance(listen, dict) or listen.get("kind") not in ("tcp", "rdma_cm"):
        raise ValueError(f"{where}.kind: expected tcp or rdma_cm")
    port = listen.get("port")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"{where}.port: {port!r} is not a port")
