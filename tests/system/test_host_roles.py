"""Lab tier: host_network, host_qos and irq_affinity on both lab guests.

Needs `make lab-up` (inventories/lab/hosts.yml and SSH to the guests). The test
owns its intent (a bond over the two data ports, VLANs 10/20/30, the seed's QoS)
and writes it into a throwaway inventory next to the lab's hosts.yml.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
LAB_HOSTS = REPO / "inventories" / "lab" / "hosts.yml"
ANSIBLE = REPO / ".venv" / "bin"
HOSTS = ("lab-host1", "lab-host2")
DATA_PORTS = ("ens1f0", "ens1f1")
DATA_PCI = ("0000:65:00.0", "0000:65:00.1")
MGMT = "eno1"
MGMT_ADDRESS = "10.0.2.15"
# The emulated card shapes at configured rate x this scale (a TCG guest cannot push
# Gb/s); the measurement expects the same fraction of each configured limit.
SHAPER_SCALE = 0.01

pytestmark = [pytest.mark.lab, pytest.mark.slow, pytest.mark.timeout(3600)]


def _qos(vlan, user_priority, traffic_class, limit):
    entry = {"vlan": vlan, "user_priority": user_priority, "traffic_class": traffic_class}
    entry.update(tsa="strict", bandwidth_percent=0)
    if limit:
        entry["rate_limit_mbps"] = limit
    return entry


def host_intent(index: int, mgmt: str = MGMT) -> dict:
    return {
        "mgmt_interface": mgmt,
        "nics": [
            {
                "name": "cx4",
                "pci": DATA_PCI[0],
                "model": "ConnectX-4",
                "ports": [
                    {"port": 1, "netdev": DATA_PORTS[0], "link_type": "eth", "speed_gbps": 100},
                    {"port": 2, "netdev": DATA_PORTS[1], "link_type": "eth", "speed_gbps": 100},
                ],
            }
        ],
        "bond": {
            "name": "bond0",
            "members": list(DATA_PORTS),
            "mode": "802.3ad",
            "lacp_rate": "fast",
            "mtu": 9000,
            "switch_pair": "lab",
            "mpo": index,
            "address": f"12.0.0.{index}/24",
        },
        "vlans": [{"id": v, "address": f"12.0.{v}.{index}/24", "mtu": 9000} for v in (10, 20, 30)],
        "qos": [
            _qos(10, 1, 0, 1000),
            _qos(20, 3, 1, 5000),
            _qos(30, 5, 2, None),
        ],
        "irq_affinity": {"policy": "numa-local"},
    }


PLAY = """
- name: Host roles
  hosts: hosts
  gather_facts: false
  roles:
    - host_network
    - host_qos
    - irq_affinity
"""

MEASURE = """
- name: Measure per-VLAN QoS
  hosts: lab-host1
  gather_facts: false
  tasks:
    - name: Measure
      ansible.builtin.include_role:
        name: host_qos
        tasks_from: measure
    - name: Print the results for the test
      ansible.builtin.debug:
        msg: "QOS-RESULTS {{ host_qos_measurement.results | to_json }}"
"""


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if not LAB_HOSTS.exists():
        pytest.skip("lab is not up (no inventories/lab/hosts.yml; run `make lab-up`)")
    inventory = tmp_path_factory.mktemp("inventory")
    plays = tmp_path_factory.mktemp("plays")
    shutil.copy(LAB_HOSTS, inventory / "hosts.yml")
    (inventory / "group_vars" / "all").mkdir(parents=True)
    (inventory / "group_vars" / "all" / "qos.yml").write_text(
        yaml.safe_dump(
            {"host_qos_measure_peer": "lab-host2", "host_qos_measure_rate_scale": SHAPER_SCALE}
        )
    )
    env = {"ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "PATH": f"{ANSIBLE}:/usr/bin:/bin"}

    def ansible(*args, playbook_text=None, extra=()):
        if playbook_text is not None:
            playbook = plays / "play.yml"
            playbook.write_text(playbook_text)
            argv = [str(ANSIBLE / "ansible-playbook"), "-i", str(inventory), str(playbook)]
        else:
            argv = [str(ANSIBLE / "ansible"), "-i", str(inventory), *args]
        return run([*argv, *extra], cwd=REPO, env=env, timeout=2400)

    for _ in range(12):  # a guest that was just booted takes a while to answer SSH
        ping = ansible("hosts", "-m", "ansible.builtin.ping")
        if ping.returncode == 0:
            break
        time.sleep(15)
    else:
        pytest.skip(f"lab guests do not answer over SSH: {ping.stdout[-400:]}")

    def shell(host, command):
        result = ansible(host, "-m", "ansible.builtin.shell", "-a", command)
        assert result.returncode == 0, result.stdout
        return result.stdout.split(">>", 1)[1].strip() if ">>" in result.stdout else ""

    # The management NIC is the one holding the forwarded SSH address.
    mgmt = {}
    for index, host in enumerate(HOSTS, start=1):
        ports = shell(host, f"ls /sys/class/net; ip -o -4 addr show to {MGMT_ADDRESS}/32")
        assert all(port in ports for port in DATA_PORTS), ports
        mgmt[host] = re.search(r"^\d+:\s+(\S+)\s+inet", ports, re.M).group(1)
        (inventory / "host_vars" / host).mkdir(parents=True)
        (inventory / "host_vars" / host / "cxfab.yml").write_text(
            yaml.safe_dump({"cxfab_host": host_intent(index, mgmt[host])})
        )
    # Start from the card's defaults so the first run programs the shaper at the scale.
    for host in HOSTS:
        shell(
            host,
            f"cxemu-admin set -d {DATA_PCI[0]} netdev1.shaper_scale={SHAPER_SCALE} "
            f"netdev2.shaper_scale={SHAPER_SCALE} && for p in {' '.join(DATA_PORTS)}; do "
            "mlnx_qos -i $p --ratelimit=0,0,0,0,0,0,0,0 >/dev/null; done",
        )
    return {"ansible": ansible, "shell": shell, "inventory": inventory, "mgmt": mgmt}


def recap(output: str) -> dict[str, dict[str, int]]:
    stats = {}
    for line in output.splitlines():
        match = re.match(r"^(\S+)\s+:\s+(.*)$", line)
        if match and "changed=" in line:
            stats[match.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}
    return stats


@pytest.fixture(scope="module")
def applied(lab):
    first = lab["ansible"](playbook_text=PLAY)
    assert first.returncode == 0, first.stdout[-3000:]
    second = lab["ansible"](playbook_text=PLAY)
    assert second.returncode == 0, second.stdout[-3000:]
    return {"first": recap(first.stdout), "second": recap(second.stdout), "out": first.stdout}


def test_first_run_changes_and_rerun_changes_nothing(applied):
    for host in HOSTS:
        assert applied["first"][host]["changed"] > 0
        assert applied["second"][host]["changed"] == 0, applied["second"]
        assert applied["second"][host]["failed"] == 0


def test_bond_vlans_mtu_and_egress_maps_are_live(lab, applied):
    for index, host in enumerate(HOSTS, start=1):
        links = json.loads(lab["shell"](host, "ip -d -j link show"))
        by_name = {link["ifname"]: link for link in links}
        bond = by_name["bond0"]
        assert bond["linkinfo"]["info_data"]["mode"] == "802.3ad"
        assert bond["linkinfo"]["info_data"]["ad_lacp_rate"] == "fast"
        assert bond["mtu"] == 9000
        for port in DATA_PORTS:
            assert by_name[port]["master"] == "bond0"
            assert by_name[port]["mtu"] == 9000
        for vlan, up in ((10, 1), (20, 3), (30, 5)):
            info = by_name[f"bond0.{vlan}"]["linkinfo"]["info_data"]
            assert info["id"] == vlan
            egress = {m["from"]: m["to"] for m in info.get("egress_qos", [])}
            assert egress == dict.fromkeys(range(8), up)
        addresses = lab["shell"](host, "ip -br -4 addr show dev bond0.20")
        assert f"12.0.20.{index}/24" in addresses


def test_qos_went_through_mlnx_qos_and_reads_back(lab, applied):
    for host in HOSTS:
        for port in DATA_PORTS:
            text = lab["shell"](host, f"mlnx_qos -i {port}")
            assert re.search(r"tc: 0 ratelimit: 1\.0 Gbps, tsa: strict", text), text
            assert re.search(r"tc: 1 ratelimit: 5\.0 Gbps, tsa: strict", text), text
            assert re.search(r"tc: 2 ratelimit: unlimited, tsa: strict", text), text
        script = lab["shell"](host, "cat /etc/cxfab/qos-apply")
        assert f"mlnx_qos -i {DATA_PORTS[0]} --prio_tc=0,0,1,1,2,2,3,3" in script, script


def test_irqs_of_data_nics_are_on_node1_cpus(lab, applied):
    """Every MSI-X IRQ of both data functions reads back one node-1 CPU.

    The effective CPU of an MSI moves at its next interrupt (x86 without interrupt
    remapping): after traffic on the data ports, the IRQs that fired are on node 1.
    """
    for host in HOSTS:
        node_cpus = lab["shell"](host, "cat /sys/devices/system/node/node1/cpulist")
        allowed = set(_expand(node_cpus))
        lab["shell"](host, "ping -c 20 -i 0.05 -q 12.0.30.$((3 - ${HOSTNAME#lab-host})) || true")
        moved = 0
        for pci in DATA_PCI:
            irqs = lab["shell"](host, f"ls /sys/bus/pci/devices/{pci}/msi_irqs").split()
            assert irqs, f"{host} {pci} has no MSI-X IRQs"
            for irq in irqs:
                requested = lab["shell"](host, f"cat /proc/irq/{irq}/smp_affinity_list")
                effective = lab["shell"](host, f"cat /proc/irq/{irq}/effective_affinity_list")
                assert len(_expand(requested)) == 1 and set(_expand(requested)) <= allowed, (
                    host, irq, requested
                )  # fmt: skip
                moved += set(_expand(effective)) <= allowed
        assert moved > 0, f"{host}: no data IRQ has moved to node 1 yet"


def test_boot_scripts_restore_what_was_lost(lab, applied):
    """What the boot unit/link hooks run re-creates the state the modules set."""
    host = HOSTS[0]
    lab["shell"](
        host,
        f"for i in $(ls /sys/bus/pci/devices/{DATA_PCI[0]}/msi_irqs); do "
        "echo 0 > /proc/irq/$i/smp_affinity_list; done; "
        "ip link set dev bond0.10 type vlan egress-qos-map 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0",
    )
    lab["shell"](host, "/etc/cxfab/irq-affinity && /etc/cxfab/qos-apply")
    again = lab["ansible"](playbook_text=PLAY)
    assert again.returncode == 0, again.stdout[-3000:]
    assert recap(again.stdout)[host]["changed"] == 0, again.stdout[-3000:]
    units = lab["shell"](host, "cat /etc/systemd/system/cxfab-qos.service")
    assert "ExecStart=/etc/cxfab/qos-apply" in units
    netdev = lab["shell"](host, "cat /etc/systemd/network/60-cxfab-bond0.10.netdev")
    assert "EgressQOSMaps=0-1 1-1 2-1 3-1 4-1 5-1 6-1 7-1" in netdev


def test_play_touching_the_management_interface_is_refused(lab, applied):
    host = HOSTS[0]
    mgmt = lab["mgmt"][host]
    before = lab["shell"](host, f"ip -j link show dev {mgmt}; ip -j addr show dev {mgmt}")
    bad = host_intent(1, mgmt)
    bad["bond"]["members"] = [mgmt, DATA_PORTS[1]]
    extra = lab["inventory"].parent / "bad-intent.yml"
    extra.write_text(yaml.safe_dump({"cxfab_host": bad}))
    result = lab["ansible"](playbook_text=PLAY, extra=("-e", f"@{extra}", "--limit", host))
    assert result.returncode != 0
    assert "cxfab_host.bond.members[0]" in result.stdout
    assert f"interface {mgmt} is the management interface" in result.stdout
    after = lab["shell"](host, f"ip -j link show dev {mgmt}; ip -j addr show dev {mgmt}")
    assert _strip_counters(before) == _strip_counters(after)


def test_qos_measurement_each_vlan_near_its_limit(lab, applied):
    result = lab["ansible"](playbook_text=MEASURE)
    assert result.returncode == 0, result.stdout[-3000:]
    payload = re.search(r"QOS-RESULTS (\[.*\])", result.stdout)
    assert payload, result.stdout[-3000:]
    results = {r["vlan"]: r for r in json.loads(payload.group(1).replace('\\"', '"'))}
    print("QoS measurement:", json.dumps(results, indent=1))
    assert results[10]["passed"] and results[20]["passed"], results
    assert results[30]["passed"], results
    assert (
        results[30]["measured_mbps"] > results[20]["measured_mbps"] > results[10]["measured_mbps"]
    )


def _expand(text):
    cpus = []
    for part in text.strip().split(","):
        if part:
            low, _, high = part.partition("-")
            cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


def _strip_counters(text):
    return re.sub(r'"(stats64|stats|txqlen)":\s*\{[^}]*\}', "", text)


def test_tc_fallback_gives_the_same_per_vlan_limits(lab, applied):
    """A NIC without DCB: force the tc shaper, with limits in Mb/s, and measure again."""
    intent = host_intent(1, lab["mgmt"][HOSTS[0]])
    intent["qos"] = [_qos(10, 1, 0, 20), _qos(20, 3, 1, 60), _qos(30, 5, 2, None)]
    extra = lab["inventory"].parent / "tc-backend.yml"
    extra.write_text(
        yaml.safe_dump(
            {
                "host_qos_backend": "tc",
                "host_qos_host": intent,
                "host_qos_persist": False,
                "host_qos_measure_rate_scale": 1.0,
            }
        )
    )
    tc_play = PLAY.replace("    - host_network\n", "").replace("    - irq_affinity\n", "")
    try:
        for host in HOSTS:  # the card's own shaper off, so only ours shapes
            lab["shell"](
                host,
                f"for p in {' '.join(DATA_PORTS)}; do mlnx_qos -i $p "
                "--ratelimit=0,0,0,0,0,0,0,0 >/dev/null; done",
            )
        first = lab["ansible"](playbook_text=tc_play, extra=("-e", f"@{extra}"))
        assert first.returncode == 0, first.stdout[-3000:]
        again = lab["ansible"](playbook_text=tc_play, extra=("-e", f"@{extra}"))
        assert all(v["changed"] == 0 for v in recap(again.stdout).values()), again.stdout[-2000:]
        classes = lab["shell"](HOSTS[0], f"tc -j class show dev {DATA_PORTS[0]}")
        assert '"1:10"' in classes and '"1:11"' in classes
        result = lab["ansible"](playbook_text=MEASURE, extra=("-e", f"@{extra}"))
        assert result.returncode == 0, result.stdout[-3000:]
        payload = re.search(r"QOS-RESULTS (\[.*\])", result.stdout)
        results = {r["vlan"]: r for r in json.loads(payload.group(1).replace('\\"', '"'))}
        print("QoS measurement (tc):", json.dumps(results, indent=1))
        assert all(r["passed"] for r in results.values()), results
    finally:
        for host in HOSTS:
            lab["shell"](
                host,
                f"for p in {' '.join(DATA_PORTS)}; do tc qdisc del dev $p root 2>/dev/null; "
                "mlnx_qos -i $p --ratelimit=0,0,0,0,0,0,0,0 >/dev/null; done; true",
            )
        restore = lab["ansible"](playbook_text=PLAY)
        assert restore.returncode == 0, restore.stdout[-3000:]
