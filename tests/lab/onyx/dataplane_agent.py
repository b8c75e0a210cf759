"""An emulated switch's hand on its dataplane: one namespace of the lab's fabric guest.

Runs in the switch's emulator process (server.py --dataplane FILE, written by
`make lab-up`). Every PERIOD it plans the namespace from the switch's config and pair
state (dataplane.plan + pair_state); when the plan changed it reads the namespace back
over SSH (one command printing the five JSON outputs), converges it
(dataplane_converge) and keeps the bonds' real states for `show`
(Switch.lag_states). Bonds also change on their own (LACP): an `ip monitor link` in
the namespace says when, and their links are read again then (and every REFRESH, in
case an event was missed). A namespace that cannot be read leaves lag_states empty:
every MPO then shows down, never up on a state nobody read.
"""

from __future__ import annotations

import logging
import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass

from .dataplane import BRIDGE, NFT_TABLE, DataplaneError, Plan, pair_state, plan, port_ifname
from .dataplane_converge import Current, converge, parse_links, read_current
from .dataplane_show import lag_states

LOG = logging.getLogger("onyx.dataplane")
PERIOD = 0.5
# Bonds negotiate LACP on their own: a link event of the namespace has their states read
# again at the next PERIOD, and this often without one (a read costs the 1-vCPU fabric
# guest an exec; a watch that broke and restarted may have missed an event).
REFRESH = 30.0
WATCH_RETRY = 2.0
SSH_TIMEOUT = 60
# Every process costs the 1-vCPU TCG fabric guest: a blank NVUE switch converges with
# 78 commands, which as `ip netns exec <ns> <tool>` each (2 processes) once ran past
# SSH_TIMEOUT. So consecutive `ip`/`bridge` commands go to one `ip|bridge -n <ns>
# -force -batch -` each (converge_script: 14 processes for those 78), and the timeout
# grows with the processes a script starts: EXEC_SECONDS each beyond SSH_TIMEOUT,
# from that run (156 processes > 60 s: more than 0.4 s each).
EXEC_SECONDS = 1.0
BATCHED = ("ip", "bridge")  # tools with `-batch -` (iproute2); nft commands run one by one
_PLAIN = re.compile(r"^[A-Za-z0-9_.:/@+-]+$")  # an argument a batch line carries as it is
MARK = "@@cxfab"
READS = (
    ("link", "ip -j -d link show"),
    ("vlan", "bridge -j vlan show"),
    ("addr", "ip -j addr show"),
    ("fdb", f"bridge -j fdb show dev {BRIDGE}"),
    ("nft", f"nft -j list table bridge {NFT_TABLE}"),
)


@dataclass
class Target:
    ssh: list[str]  # argv that runs a shell command in the fabric guest (command appended)
    namespace: str
    cabled: list[str]


def read_script(namespace: str, keys: tuple[str, ...] | None = None) -> str:
    """Shell that prints each read's output after a marker line with its exit status.

    One `ip netns exec` for all of them: every process costs the TCG guest."""
    body = "; ".join(
        f'out=$({command} 2>&1); echo "{MARK} {key} $?"; printf "%s\\n" "$out"'
        for key, command in READS
        if keys is None or key in keys
    )
    return f"ip netns exec {shlex.quote(namespace)} sh -c {shlex.quote(body)}\n"


def split_reads(text: str, keys: tuple[str, ...] | None = None) -> dict[str, tuple[int, str]]:
    """{key: (exit status, output)} from read_script's output; a missing read is an error."""
    found: dict[str, tuple[int, list[str]]] = {}
    key = None
    for line in text.splitlines():
        if line.startswith(MARK + " "):
            _, key, status = line.split(" ", 2)
            found[key] = (int(status), [])
        elif key is not None:
            found[key][1].append(line)
    missing = [k for k, _ in READS if k not in found and (keys is None or k in keys)]
    if missing:
        raise DataplaneError(f"dataplane read: no output for {', '.join(missing)}: {text[-300:]!r}")
    return {k: (status, "\n".join(out)) for k, (status, out) in found.items()}


def current_from_reads(reads: dict[str, tuple[int, str]]) -> Current:
    """The namespace's Current from split_reads; fails closed on any failed read.

    Two failures are states, not errors: no br0 yet (its fdb cannot be listed) and no
    nft table yet (a blank switch)."""
    for key, command in READS:
        status, out = reads[key]
        if status != 0 and key not in ("fdb", "nft"):
            raise DataplaneError(f"{command}: exit {status}: {out.strip()[:300]!r}")
    link_out = reads["link"][1]
    has_bridge = BRIDGE in parse_links(link_out)
    fdb_status, fdb_out = reads["fdb"]
    if fdb_status != 0:
        if has_bridge:
            raise DataplaneError(f"{READS[3][1]}: exit {fdb_status}: {fdb_out.strip()[:300]!r}")
        fdb_out = "[]"
    nft_status, nft_out = reads["nft"]
    nft = nft_out if nft_status == 0 else None
    return read_current(link_out, reads["vlan"][1], reads["addr"][1], fdb_out, nft)


def _batchable(argv: list[str]) -> bool:
    return argv[0] in BATCHED and all(_PLAIN.match(arg) for arg in argv[1:])


def converge_script(namespace: str, commands: list[list[str]]) -> tuple[str, int]:
    """Shell that runs `commands` in order in the namespace, and the processes it starts.

    A run of consecutive batchable commands of one tool is one `<tool> -n <ns> -force
    -batch -` (a failed line is reported, the rest still run, as one by one); its
    output follows a `MARK-batch <first index>` line and names a failed line as
    `Command failed -:<n>` (1-based). Some argument errors end iproute2 at once
    (`Error: argument ... is wrong`, exit 255), -force or not: a batch that exits
    non-zero reports `MARK-stopped <first> <end> <status>`; 1 with a reported line is
    -force's "ran them all, some failed" (iproute2 6.1). Any other command runs alone and
    reports `MARK-failed <index> <status>`."""
    ns = shlex.quote(namespace)
    lines, execs, i = [], 0, 0
    while i < len(commands):
        tool = commands[i][0]
        end = i
        while end < len(commands) and commands[end][0] == tool and _batchable(commands[end]):
            end += 1
        if end > i:
            body = "".join(" ".join(argv[1:]) + "\n" for argv in commands[i:end])
            lines.append(f"echo {MARK}-batch {i}\n{tool} -n {ns} -force -batch - 2>&1 "
                         f"<<'{MARK}-end' || echo {MARK}-stopped {i} {end} $?\n"
                         f"{body}{MARK}-end\n")  # fmt: skip
            execs, i = execs + 1, end
            continue
        lines.append(f"ip netns exec {ns} {shlex.join(commands[i])} || echo {MARK}-failed {i} $?\n")
        execs, i = execs + 2, i + 1
    return "".join(lines), execs


def failed_commands(answer: str) -> list[int]:
    """The indices of the commands converge_script's output reports failed, and those
    of a stopped batch after its last reported failure (perhaps never run)."""
    failed, batch = [], None
    for line in answer.splitlines():
        if line.startswith(f"{MARK}-batch "):
            batch = int(line.split()[1])
        elif line.startswith(f"{MARK}-failed "):
            failed.append(int(line.split()[1]))
        elif line.startswith(f"{MARK}-stopped "):
            first, end, status = (int(n) for n in line.split()[1:4])
            if status == 1 and any(first <= i < end for i in failed):
                continue  # -force ran every line and says 1 for the failed ones
            reported = [i for i in failed if first <= i < end]
            failed += range(max(reported, default=first - 1) + 1, end)
            batch = None
        elif batch is not None and line.startswith("Command failed -:"):
            failed.append(batch + int(line.rsplit(":", 1)[1]) - 1)
    return sorted(set(failed))


def dark_script(namespace: str, cabled: list[str]) -> str:
    """Shell that takes every cabled port of a switch's namespace down (the IPL's too)."""
    ns = shlex.quote(namespace)
    return "".join(f"ip -n {ns} link set {port_ifname(port)} down\n" for port in cabled)


def go_dark(spec: dict, name: str) -> None:
    """A killed switch forwards nothing: its agent died with it, so nothing else would
    take its namespace's ports down. spec: the lab's dataplane file (server.py
    --dataplane); its revived agent brings them up again from the saved config."""
    mine = spec["switches"][name]
    done = subprocess.run(
        [*spec["ssh"], "bash", "-s"], input=dark_script(mine["namespace"], mine["cabled"]),
        text=True, capture_output=True, timeout=SSH_TIMEOUT, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise DataplaneError(
            f"{name}: its namespace's ports could not be taken down (exit {done.returncode}): "
            f"{done.stderr.strip()[-300:]!r}"
        )


class DataplaneAgent:
    def __init__(self, switch, target: Target):
        self.switch = switch
        self.target = target
        self.applied: Plan | None = None
        self.read_at = 0.0
        self.last_error = ""
        self.links_changed = threading.Event()  # set by the watch on every link message
        self.stopping = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._loop, daemon=True, name="dataplane").start()
        threading.Thread(target=self.watch, daemon=True, name="dataplane-watch").start()

    def watch(self) -> None:
        """Follow the namespace's link messages (`ip monitor link`, idle between events)."""
        command = f"ip -n {shlex.quote(self.target.namespace)} monitor link"
        while not self.stopping.is_set():
            try:
                with subprocess.Popen(
                    [*self.target.ssh, command], stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                ) as proc:  # fmt: skip
                    for _line in proc.stdout:
                        self.links_changed.set()
                        if self.stopping.is_set():
                            proc.terminate()
            except OSError as exc:
                LOG.warning("dataplane %s: link watch: %s", self.target.namespace, exc)
            self.links_changed.set()  # events may have been lost while it was down
            self.stopping.wait(WATCH_RETRY)

    def _ssh(self, script: str, execs: int = 0) -> str:
        done = subprocess.run(
            [*self.target.ssh, "bash", "-s"], input=script, text=True,
            capture_output=True, timeout=SSH_TIMEOUT + EXEC_SECONDS * execs, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise DataplaneError(f"ssh into the fabric guest: exit {done.returncode}: "
                                 f"{done.stderr.strip()[-300:]!r}")  # fmt: skip
        return done.stdout

    def wanted(self) -> Plan:
        switch = self.switch
        with switch.lock:
            status = switch.status()
            peer = status["peer"] if status["ipl_up"] else None
            want = plan(switch.cfg, self.target.cabled, peer, dict(switch.vrrp_state))
            return pair_state(want, ipl_cut=switch.ipl_cut, mpos_suspended=switch.mpos_suspended())

    def step(self) -> list[list[str]]:
        """One round: converge when the plan changed or REFRESH passed; the commands run."""
        want = self.wanted()
        if want == self.applied:
            # Only bonds change on their own (LACP): their links are read again on a link
            # event or after REFRESH, for `show`; a namespace without one is not read
            # until the plan changes (a blank switch costs the fabric guest nothing).
            has_bonds = any(link.kind == "bond" for link in want.links.values())
            due = time.monotonic() - self.read_at >= REFRESH
            if has_bonds and (self.links_changed.is_set() or due):
                self.links_changed.clear()
                links = ("link",)
                status, out = split_reads(self._ssh(read_script(self.target.namespace, links)),
                                          links)["link"]  # fmt: skip
                if status != 0:
                    raise DataplaneError(f"{READS[0][1]}: exit {status}: {out.strip()[:300]!r}")
                self.switch.lag_states = lag_states(out)
                self.read_at = time.monotonic()
            return []
        self.links_changed.clear()  # this read covers what happened so far
        reads = split_reads(self._ssh(read_script(self.target.namespace)))
        current = current_from_reads(reads)
        self.read_at = time.monotonic()
        commands = converge(want, current)
        if commands:
            script, execs = converge_script(self.target.namespace, commands)
            failed = failed_commands(self._ssh(script, execs))
            for index in failed:
                LOG.warning("dataplane: %s failed (or its batch stopped before it)",
                            shlex.join(commands[index]))  # fmt: skip
            reads = split_reads(self._ssh(read_script(self.target.namespace)))
            if failed:
                want = None  # try again next round
        self.switch.lag_states = lag_states(reads["link"][1])
        self.applied = want
        self.switch.dataplane_links = frozenset(want.links) if want is not None else frozenset()
        return commands

    def _loop(self) -> None:
        while True:
            try:
                commands = self.step()
                if commands:
                    LOG.info(
                        "dataplane %s: %d commands: %s", self.target.namespace, len(commands),
                        "; ".join(shlex.join(c) for c in commands)[:1500],
                    )  # fmt: skip
                self.last_error = ""
            except (DataplaneError, ValueError, OSError, subprocess.SubprocessError) as exc:
                if str(exc) != self.last_error:
                    LOG.warning("dataplane %s: %s", self.target.namespace, exc)
                self.last_error = str(exc)
                self.switch.lag_states = {}
                self.switch.dataplane_links = frozenset()
                self.applied = None
                time.sleep(2.0)
            time.sleep(PERIOD)
