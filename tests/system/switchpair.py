"""The emulated switch pair as the lab tests read it: control requests, `show` over SSH
as cxfab reads it (netmiko, the product's parsers), the namespaces that forward in
lab-fabric, and the hosts' probes through the pair."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime

import yaml
from cxfab.switch.nvue.driver import NvueDriver
from cxfab.switch.nvue.transport import Trust
from cxfab.switch.onyx import shows as onyx_shows
from cxfab.switch.onyx.session import OnyxSession
from cxfab.verify import dataplane

from tests.lab.nvue import pair as nvue_pair
from tests.lab.vm import lab as labctl
from tests.lab.vm import switch_os
from tests.lab.vm.topology import (
    CABLES,
    DATA_NETDEVS,
    FABRIC,
    GUESTS,
    ONYX_RUN_DIR,
    REPO_ROOT,
    SIDES,
    SWITCHES,
)

STRUCTURED_DIR = REPO_ROOT / "build" / "structured"


def ctl(switch: str, *request: str) -> str:
    argv = [sys.executable, "-m", "tests.lab.onyx.pair", "ctl", "--run-dir", str(ONYX_RUN_DIR)]
    done = subprocess.run(
        [*argv, switch, *request], cwd=REPO_ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def status(switch: str) -> dict:
    """The emulator's own view: oper, ipl_up, vrrp, MPO states (control `status`)."""
    return json.loads(ctl(switch, "status"))


def shows(switch: str, *commands: str) -> dict[str, str]:
    """`show` outputs of one switch, over SSH through cxfab's own session (its netmiko
    settings: a plain ConnectHandler's default waits took 12.7 s per login here, the
    session's 2.7 s, and the LLDP waits log in once per port and poll)."""
    with OnyxSession(
        "127.0.0.1", SWITCHES[switch]["port"], "admin", "admin", check_host_key=False
    ) as cli:
        return {command: cli.show(command) for command in commands}


def mlag_and_mpos(switch: str) -> tuple[dict, dict[int, dict]]:
    """`show mlag` and `show interfaces mlag-port-channel summary`, parsed by cxfab."""
    out = shows(switch, onyx_shows.SHOW_COMMANDS["mlag"], onyx_shows.SHOW_COMMANDS["mpo"])
    return (
        onyx_shows.parse("mlag", out[onyx_shows.SHOW_COMMANDS["mlag"]], None),
        onyx_shows.parse("mpo", out[onyx_shows.SHOW_COMMANDS["mpo"]], None),
    )


def namespace_links(switch: str) -> dict[str, dict]:
    """`ip -j -d link show` of the switch's namespace in lab-fabric, by interface."""
    done = subprocess.run(
        labctl.ssh_argv(FABRIC, f"ip -n {switch} -j -d link show"),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"lab-fabric: ip -n {switch} link: {done.stderr}"
    return {link["ifname"]: link for link in json.loads(done.stdout)}


def is_up(link: dict) -> bool:
    return "UP" in link["flags"]


# Host port 1 (ens1f0) is cabled to lab-sw-a, port 2 to lab-sw-b (topology.py).
ONLY_SIDE_A = {"ens1f0": True, "ens1f1": False}
BOTH_SIDES = {"ens1f0": True, "ens1f1": True}


def bond_members_in_use(host) -> dict[str, bool]:
    """Each bond member: is it in the bond's active aggregator (/proc/net/bonding)?"""
    text = host.run("cat /proc/net/bonding/bond0")
    active = re.search(r"Active Aggregator Info:\s*\n\s*Aggregator ID: (\d+)", text)
    assert active, text
    members = dict(re.findall(r"Slave Interface: (\S+)\n(?:.*\n)*?Aggregator ID: (\d+)", text))
    assert set(members) == set(DATA_NETDEVS), text
    return {port: aggregator == active.group(1) for port, aggregator in members.items()}


def wait_bonds(hosts, in_use: dict[str, bool], timeout: float, since: float, label: str,
               figures: dict[str, float]) -> None:  # fmt: skip
    """Every host's bond0 using exactly the ports `in_use`, polled together; the time
    each host got there (seconds after `since`) into figures[<host>_<label>_s]."""
    pending, deadline = {host.name: host for host in hosts}, time.monotonic() + timeout
    while pending:
        for name, host in list(pending.items()):
            if bond_members_in_use(host) == in_use:
                figures[f"{name}_{label}_s"] = time.monotonic() - since
                del pending[name]
        if pending:
            seen = {name: bond_members_in_use(host) for name, host in pending.items()}
            assert time.monotonic() < deadline, f"bond0 not {in_use} within {timeout} s: {seen}"
            time.sleep(0.5)


# ---------------------------------------------------------------- the NVUE pair (cumulus)


def nvue_driver(switch: str) -> NvueDriver:
    """cxfab's own NVUE driver on the running lab switch (the build's structured config,
    which must say cumulus), logged in with the pair's account, the certificate checked
    against the pin the pair wrote at start: its reads go through the product's
    transport and parsers, as verify's do."""
    structured = yaml.safe_load((STRUCTURED_DIR / f"{switch}.yml").read_text())
    assert structured["platform"] == "cumulus", (switch, structured["platform"])
    run_dir = switch_os.PAIR_RUN_DIRS["cumulus"]
    ready = nvue_pair.ready_info(run_dir, switch)
    driver = NvueDriver(switch, structured, Trust(ca_file=ready["cert"],
                                                  fingerprint=ready["fingerprint"]))  # fmt: skip
    driver.open(*nvue_pair.credentials(run_dir))
    assert driver.client is not None, (switch, driver.unreachable, driver.release_error)
    return driver


def nvue_health(switch: str) -> dict[str, dict]:
    """The switch's health checks as verify judges them ({check id: check})."""
    return {check["id"]: check for check in nvue_driver(switch).health().checks}


def nvue_show(switch: str, path: str) -> dict:
    """`nv show <path> -o json` of the switch, through cxfab's client."""
    return nvue_driver(switch).client.get_object(path)


def nvue_unhealthy() -> str:
    """Every failing health check of both switches, or "" when the pair is whole."""
    return "; ".join(
        f"{switch} {check_id}: {check['message']}"
        for switch in SWITCHES
        for check_id, check in nvue_health(switch).items()
        if check["status"] != "pass"
    )


def nvue_revisions(switch: str) -> dict[str, str]:
    """{revision id: state} of every revision the switch holds (`nv config history`)."""
    return {rev: str(info.get("state")) for rev, info in nvue_show(switch, "revision").items()}


def nvue_status(switch: str) -> dict:
    """The NVUE emulator's own record (control `status`): revisions created, refusals."""
    run_dir = switch_os.PAIR_RUN_DIRS["cumulus"]
    return json.loads(nvue_pair.ctl(run_dir, switch, ["status"]))


def drill_killing_switch_a(down_s: float, settle_s: float) -> dict:
    """drill.yml's variables for the lab's switch-kill drill: lab-sw-a killed with the
    lab's own fault command (`make lab-fail SWITCH=a`) for `down_s`, then revived."""
    make = ["make", "-s", "-C", str(REPO_ROOT)]
    return {
        "cxfab_drill_confirm": True,
        "cxfab_drill_fail_command": [*make, "lab-fail", "SWITCH=a"],
        "cxfab_drill_restore_command": [*make, "lab-heal", "SWITCH=a"],
        "cxfab_drill_down_seconds": down_s,
        "cxfab_drill_settle_seconds": settle_s,
    }


def every_hosts_targets(hosts) -> dict[str, list[tuple[str, str, str]]]:
    """probe_targets of every host; each has at least its 3 gateways and 3 peers."""
    targets = {host.name: probe_targets(host.name) for host in hosts}
    assert all(len(found) >= 6 for found in targets.values()), targets
    return targets


def wait_for(check: Callable[[], object], timeout: float, what: str, every: float = 1.0):
    """check()'s first true value; fails naming `what` and the last value seen."""
    deadline, value = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout:.0f} s (last: {value!r})")


def broken_pair() -> str:
    """What keeps the pair from being whole (MLAG Up on both peers, every MPO
    Active-full), from the emulators' own view; empty when it is whole."""
    states = {switch: status(switch) for switch in SWITCHES}
    return "; ".join(
        f"{switch}: oper {s['oper']}, MPOs {s['mpos']}"
        for switch, s in states.items()
        if not s["oper"] or any(state != "Active-full" for state in s["mpos"].values())
    )


def wait_whole(timeout: float) -> None:
    deadline, problem = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        problem = broken_pair()
        if not problem:
            return
        time.sleep(1.0)
    raise AssertionError(f"the pair is not whole within {timeout:.0f} s: {problem}")


def probe_targets(host: str) -> list[tuple[str, str, str]]:
    """(VLAN interface, address, label) of every gateway and peer `host` must reach,
    from the structured configs the last validate wrote."""
    structured = {
        path.stem: yaml.safe_load(path.read_text()) for path in STRUCTURED_DIR.glob("*.yml")
    }
    out = []
    for vlan in dataplane.targets(structured, host)["vlans"]:
        if vlan["gateway"]:
            out.append((vlan["interface"], vlan["gateway"]["address"], f"gw{vlan['vlan']}"))
        for peer in vlan["peers"]:
            out.append((vlan["interface"], peer["address"], f"{peer['host']}@{vlan['vlan']}"))
    return out


# A ping of `count` probes at 0.2 s with a 1 s wait ends within count * 0.2 + 1 s; the
# rest is TCG slack.
PING_BOUND_S = 15


def unanswered(host, targets: list[tuple[str, str, str]], count: int = 3) -> list[str]:
    """Targets that did not answer every one of `count` pings (one SSH per host).

    Each ping is bounded by `timeout`: one that blocks (a send that never returns, as
    one SSH of six pings outlived its 120 s once in CI) is a failed target with its
    label and whatever it printed, not a stalled session that names no target."""
    bound = PING_BOUND_S + count
    script = "; ".join(
        f"echo '@@ {label}'; timeout -k 2 {bound} ping -n -c {count} -i 0.2 -W 1 "
        f'-I {interface} {address} || echo "(ping exit $?)"'
        for interface, address, label in targets
    )
    text = host.run(script, check=False, timeout=120)
    failed = []
    for block in text.split("@@ ")[1:]:
        label, _, output = block.partition("\n")
        try:
            result = dataplane.parse_ping(output)
        except dataplane.DataplaneReadError as exc:
            failed.append(f"{label}: {exc}")
            continue
        if result["received"] != count:
            failed.append(f"{label}: {result['received']}/{count}")
    missing = len(targets) - len(text.split("@@ ")[1:])
    return failed + [f"{missing} target(s) without output"] * bool(missing)


def namespace_addresses(switch: str) -> dict[str, set[str]]:
    """IPv4 addresses (a.b.c.d/len) of every interface of the switch's namespace."""
    done = subprocess.run(
        labctl.ssh_argv(FABRIC, f"ip -n {switch} -j addr show"),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"lab-fabric: ip -n {switch} addr: {done.stderr}"
    return {
        link["ifname"]: {
            f"{a['local']}/{a['prefixlen']}" for a in link["addr_info"] if a["family"] == "inet"
        }
        for link in json.loads(done.stdout)
    }


def log_events(switch: str, message: str) -> list[float]:
    """When the switch logged `message` (epoch seconds, the controller's clock)."""
    stamps = []
    for line in (ONYX_RUN_DIR / f"{switch}.log").read_text(errors="replace").splitlines():
        if line.endswith(message):
            stamp = datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
            stamps.append(stamp.timestamp())
    return stamps


# ---------------------------------------------------------------- LLDP as the switches see it


def remote_command(port: str) -> str:
    return f"show lldp interfaces ethernet {port} remote"


def switch_remote(switch: str, port: str) -> dict[str, str]:
    """`show lldp interfaces ethernet <port> remote` of an emulated switch, as fields."""
    text = shows(switch, remote_command(port))[remote_command(port)]
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields.setdefault(key.strip(), value.strip())
    fields["_text"] = text
    return fields


def expected_switch_view(swapped: set[str]) -> dict[tuple[str, str], tuple[str, str]]:
    """(switch, 1/N) -> (host name, MAC of the host port cabled there), with the cables
    of the hosts in `swapped` crossed (lab fault `swap HOST`)."""
    want = {}
    for cable in CABLES:
        side = cable.side
        if cable.host.name in swapped:
            side = SIDES[1 - SIDES.index(side)]
        want[(cable.switch, cable.port)] = (cable.host.name, cable.host.data_mac(side))
    return want


def remotes(text: str) -> list[tuple[str, str]]:
    """(system name, port id) of every remote a `show lldp ... remote` text lists."""
    found = []
    for entry in text.split("Remote Index:")[1:]:
        fields = {}
        for line in entry.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields.setdefault(key.strip(), value.strip())
        port_id = fields.get("Remote port-id", "").split(";")[0].strip()
        found.append((fields.get("Remote system name", ""), port_id))
    return found


def switches_see(want: dict, only: bool = True) -> dict:
    """What each cabled switch port reports now, when every one matches `want` ({} if
    not). `only`: the wanted remote is the port's one remote; otherwise one of them (a
    neighbour the port lost stays listed until its TTL, 120 s for a host's lldpd).
    One login per switch reads all of its ports."""
    ports: dict[str, list[str]] = {}
    for switch, port in want:
        ports.setdefault(switch, []).append(port)
    seen = {}
    for switch, its_ports in ports.items():
        texts = shows(switch, *(remote_command(port) for port in its_ports))
        for port in its_ports:
            wanted, listed = want[(switch, port)], remotes(texts[remote_command(port)])
            seen[(switch, port)] = listed
            if (listed != [wanted]) if only else (wanted not in listed):
                return {}
    return seen


def host_neighbours(host, socket: str = "") -> dict[str, list[tuple[str, str]]]:
    """{port: [(system name, port id), ...]} as the host's lldpd received them (the
    lldpd of `socket`; by default the host's own, which site.yml runs)."""
    where = f"-u {socket} " if socket else ""
    out = host.run(f"lldpcli {where}-f json0 show neighbors")
    found: dict[str, list[tuple[str, str]]] = {port: [] for port in DATA_NETDEVS}
    for lldp in json.loads(out).get("lldp", []):
        for iface in lldp.get("interface", []):
            chassis, port = iface["chassis"][0], iface["port"][0]
            name = chassis.get("name", [{}])[0].get("value", "")
            found.setdefault(iface["name"], []).append((name, port["id"][0]["value"]))
    return found


def expected_hosts_view(swapped: set[str]) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Per host and port, the one (switch, Eth1/N) the cabling puts at the far end."""
    want = {g.name: {} for g in GUESTS}
    for cable in CABLES:
        side = cable.side
        if cable.host.name in swapped:
            side = SIDES[1 - SIDES.index(side)]
        port = DATA_NETDEVS[SIDES.index(side)]
        want[cable.host.name][port] = [(cable.switch, f"Eth{cable.port}")]
    return want
