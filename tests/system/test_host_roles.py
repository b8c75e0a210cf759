"""Lab tier: what host_network, host_qos and irq_affinity left on the guests.

Runs on the lab as site.yml configured it from inventories/lab (the session's
`deployed` fixture) and reads the expectations from that same intent, so the
figures below are the seed's (bond over both ports, VLANs 10/20/30, 1G/5G/none).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from cxfab.host.net import lossless
from cxfab.host.net.cpulist import parse_cpulist
from cxfab.host.net.qos import tc_classes
from cxfab.verify import qos

from tests.lab.vm.topology import GUESTS, REPO_ROOT
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.timeout(3600)]

HOSTS = [guest.name for guest in GUESTS]
HOST_ROLE_TAGS = "host_network,host_qos,irq_affinity"
AGENT = "/usr/local/sbin/cxfab-host-apply"
AGENT_CONFIG = "/etc/cxfab/host-apply.json"
STRUCTURED = REPO_ROOT / "build" / "structured"


@pytest.fixture(scope="module")
def intents(deployed: Deployment) -> dict[str, dict]:
    return {host: deployed.intent(host)["cxfab_host"] for host in HOSTS}


@pytest.fixture(scope="module")
def guests(lab) -> dict:
    return {host.name: host for host in lab.hosts}


def structured(host: str) -> dict:
    """The host's structured config as validate.yml wrote it for site.yml."""
    return yaml.safe_load((STRUCTURED / f"{host}.yml").read_text())


def data_ports(intent: dict) -> list[str]:
    return [port["netdev"] for nic in intent["nics"] for port in nic["ports"]]


def data_pcis(host, intent: dict) -> list[str]:
    """Every PCI function behind the data ports (one per port on a dual-port card)."""
    return sorted({Path(host.pci_device(port)).name for port in data_ports(intent)})


def cpus(cpulist: str) -> set[int]:
    return set(parse_cpulist(cpulist))


def test_bond_vlans_mtu_and_egress_maps_are_live(guests, intents):
    for name, intent in intents.items():
        bond = intent["bond"]
        links = {
            link["ifname"]: link for link in json.loads(guests[name].run("ip -d -j link show"))
        }
        info = links[bond["name"]]["linkinfo"]["info_data"]
        assert (info["mode"], info["ad_lacp_rate"]) == (bond["mode"], bond["lacp_rate"])
        assert links[bond["name"]]["mtu"] == bond["mtu"]
        for port in bond["members"]:
            assert links[port]["master"] == bond["name"], (name, port)
            assert links[port]["mtu"] == bond["mtu"], (name, port)
        priority = {q["vlan"]: q["user_priority"] for q in intent["qos"]}
        # The inventory leaves a host VLAN's MTU out: it is the VLAN's own, filled in
        # the structured config (the contract site.yml deployed).
        mtus = {v["id"]: v["mtu"] for v in structured(name)["network"]["vlans"]}
        for vlan in intent["vlans"]:
            link = links[f"{bond['name']}.{vlan['id']}"]
            assert link["linkinfo"]["info_data"]["id"] == vlan["id"]
            assert link["mtu"] == mtus[vlan["id"]] == vlan.get("mtu", mtus[vlan["id"]])
            egress = {
                m["from"]: m["to"] for m in link["linkinfo"]["info_data"].get("egress_qos", [])
            }
            assert egress == dict.fromkeys(range(8), priority[vlan["id"]]), (name, vlan)
            addresses = guests[name].run(f"ip -br -4 addr show dev {link['ifname']}")
            assert vlan["address"] in addresses, (name, addresses)


def test_qos_went_through_mlnx_qos_and_reads_back(guests, intents):
    for name, intent in intents.items():
        for port in data_ports(intent):
            text = guests[name].run(f"mlnx_qos -i {port}")
            for entry in intent["qos"]:
                limit = entry.get("rate_limit_mbps")
                shown = f"{limit / 1000:.1f} Gbps" if limit else "unlimited"
                pattern = (
                    rf"tc: {entry['traffic_class']} ratelimit: {re.escape(shown)}, tsa: strict"
                )
                assert re.search(pattern, text), (name, port, pattern, text)
        # The agent re-applies at boot and link-up with the module's own commands.
        commands = json.loads(guests[name].run(f"cat {AGENT_CONFIG}"))["qos"]["commands"]
        first = commands[data_ports(intent)[0]][0]
        assert first[0].endswith("mlnx_qos") and first[1:3] == ["-i", data_ports(intent)[0]]
        assert any(arg.startswith("--prio_tc=") for arg in first), first


def test_irqs_of_data_nics_are_on_nic_local_cpus(guests, intents):
    """Every MSI-X IRQ of the data functions is pinned to one CPU of the NIC's node.

    The effective CPU of an MSI moves at its next interrupt (x86 without interrupt
    remapping): after traffic on the data ports, the IRQs that fired are there too.
    """
    peer_of = dict(zip(HOSTS, reversed(HOSTS), strict=True))
    for name, intent in intents.items():
        host = guests[name]
        pcis = data_pcis(host, intent)
        node = host.run(f"cat /sys/bus/pci/devices/{pcis[0]}/numa_node").strip()
        allowed = cpus(host.run(f"cat /sys/devices/system/node/node{node}/cpulist"))
        peer_address = intents[peer_of[name]]["vlans"][-1]["address"].split("/")[0]
        host.run(f"ping -c 20 -i 0.05 -q {peer_address}", check=False)
        moved = 0
        for pci in pcis:
            irqs = host.run(f"ls /sys/bus/pci/devices/{pci}/msi_irqs").split()
            assert irqs, f"{name} {pci} has no MSI-X IRQs"
            for irq in irqs:
                requested = cpus(host.run(f"cat /proc/irq/{irq}/smp_affinity_list"))
                assert len(requested) == 1 and requested <= allowed, (name, irq, requested)
                effective = cpus(host.run(f"cat /proc/irq/{irq}/effective_affinity_list"))
                moved += effective <= allowed
        assert moved > 0, f"{name}: no data IRQ has moved to node {node} yet"


def test_boot_and_link_up_agent_restores_what_was_lost(deployed, guests, intents):
    """The boot unit and the link-up hook run the modules' own code (the host agent):
    IRQs moved and the card's rate limits cleared come back, the roles then change
    nothing, and an interface name never runs as shell code."""
    name = HOSTS[0]
    host, intent = guests[name], intents[name]
    ports = data_ports(intent)
    irqs = " ".join(
        f"/sys/bus/pci/devices/{pci}/msi_irqs" for pci in data_pcis(host, intent)
    )  # fmt: skip
    host.run(
        f"for i in $(ls {irqs} | grep -E '^[0-9]+$'); do "
        "echo 0 > /proc/irq/$i/smp_affinity_list; done; "
        f"for p in {' '.join(ports)}; do mlnx_qos -i $p --ratelimit=0,0,0,0,0,0,0,0; done"
    )
    hook = "/etc/networkd-dispatcher/carrier.d/50-cxfab-host-apply"
    # A link-up of one port restores that port's QoS; the boot unit restores all.
    host.run(f"IFACE={ports[0]} {hook}")
    assert "ratelimit: 1.0 Gbps" in host.run(f"mlnx_qos -i {ports[0]}")
    host.run(f"IFACE='$(touch /tmp/cxfab-pwned)' {hook}; test ! -e /tmp/cxfab-pwned")
    unit = host.run("cat /etc/systemd/system/cxfab-host-apply.service")
    assert f"ExecStart={AGENT}" in unit
    host.run(AGENT)
    again = deployed.healthy("site.yml", "--tags", HOST_ROLE_TAGS, "--limit", f"localhost,{name}")
    assert again.recap[name]["changed"] == 0, again.tail(3000)
    vlan = f"{intent['bond']['name']}.{intent['qos'][0]['vlan']}"
    up = intent["qos"][0]["user_priority"]
    netdev = host.run(f"cat /etc/systemd/network/60-cxfab-{vlan}.netdev")
    assert "EgressQOSMaps=" + " ".join(f"{p}-{up}" for p in range(8)) in netdev


@pytest.mark.parametrize(
    ("declared_mgmt", "reason"),
    [
        (None, "is the management interface"),
        ("eth-none", "the address the Ansible connection uses"),
    ],
    ids=["declared-management", "undeclared-connection"],
)
def test_bond_over_the_management_interface_is_refused(
    deployed, guests, intents, tmp_path, declared_mgmt, reason
):
    """The module refuses a bond over the interface carrying SSH, declared or not,
    and leaves it untouched (the validator stops the declared case earlier too)."""
    name = HOSTS[0]
    host, sc = guests[name], structured(name)
    mgmt = sc["mgmt_interface"]
    if declared_mgmt:
        sc["mgmt_interface"] = declared_mgmt
    network = sc["network"]
    network["bond"]["members"] = [mgmt, network["bond"]["members"][1]]
    network["members"][0]["name"] = mgmt
    extra = tmp_path / "bad-intent.yml"
    extra.write_text(yaml.safe_dump({"host_network_structured": sc}))
    before = link_state(host, mgmt)
    run = deployed.play("host_network.yml", "-e", f"@{extra}", "--limit", f"localhost,{name}")
    assert run.returncode != 0, run.tail()
    assert "cxfab_host.bond.members[0]" in run.output, run.tail()
    assert reason in run.output, run.tail()
    assert link_state(host, mgmt) == before


def link_state(host, ifname: str) -> dict:
    """What a role could change on a link: flags, MTU, master, addresses (not the
    DHCP lease's remaining lifetime, which counts down by itself)."""
    (link,) = json.loads(host.run(f"ip -j addr show dev {ifname}"))
    addresses = sorted(f"{a['local']}/{a['prefixlen']}" for a in link.get("addr_info", []))
    keep = ("flags", "mtu", "master", "operstate", "address")
    return {**{key: link.get(key) for key in keep}, "addresses": addresses}


MEASURE = """
- name: Measure per-VLAN QoS
  hosts: {host}
  gather_facts: false
  tasks:
    - name: Measure
      ansible.builtin.include_role:
        name: host_qos
        tasks_from: measure
    - name: Write the results for the test
      ansible.builtin.copy:
        content: "{{{{ host_qos_measurement.results | to_json }}}}"
        dest: "{results}"
        mode: "0644"
      delegate_to: localhost
"""


@pytest.mark.shaper
def test_tc_fallback_gives_the_same_per_vlan_limits(deployed, guests, intents, tmp_path, capsys):
    """A NIC without DCB: force the tc shaper (real HTB, limits in Mb/s) and measure."""
    name = HOSTS[0]
    intent, sc = intents[name], structured(name)
    # Far under what a starved TCG guest pushes (~100 Mb/s at load 8): 60 Mb/s read
    # outside its +/-10% band there.
    limits = {10: 10, 20: 30}
    tc_of = {q["vlan"]: q["traffic_class"] for q in intent["qos"]}
    for tc in sc["qos"]["tcs"]:
        tc["rate_limit_mbps"] = next((m for v, m in limits.items() if tc_of[v] == tc["tc"]), None)
    for target in sc["qos_measure"]["targets"]:
        target["limit_mbps"] = limits.get(target["vlan"])
    extra = tmp_path / "tc-backend.yml"
    settings = {"host_qos_backend": "tc", "host_qos_structured": sc, "host_qos_persist": False}
    extra.write_text(yaml.safe_dump({**settings, "host_qos_measure_rate_scale": 1.0}))
    measure = tmp_path / "measure.yml"
    results_file = tmp_path / "qos-results.json"
    measure.write_text(MEASURE.format(host=name, results=results_file))
    ports = " ".join(data_ports(intent))
    limit = ("--limit", f"localhost,{name}")
    try:
        # The card's own shaper off, so only ours shapes.
        guests[name].run(f"for p in {ports}; do mlnx_qos -i $p --ratelimit=0,0,0,0,0,0,0,0; done")
        deployed.healthy("host_qos.yml", "-e", f"@{extra}", *limit)
        again = deployed.healthy("host_qos.yml", "-e", f"@{extra}", *limit)
        assert again.recap[name]["changed"] == 0, again.tail(2000)
        shown = guests[name].run(f"tc -j class show dev {data_ports(intent)[0]}")
        classes = {c["handle"]: c for c in tc_classes(shown)}  # JSON or 6.1's text
        for vlan, mbps in limits.items():
            tc = next(q["traffic_class"] for q in intent["qos"] if q["vlan"] == vlan)
            assert classes[f"1:{10 + tc}"]["rate"] == mbps * 1_000_000 // 8, shown
        deployed.healthy(measure, "-e", f"@{extra}")
        results = {r["vlan"]: r for r in json.loads(results_file.read_text())}
        with capsys.disabled():  # CI's log keeps each VLAN's figure, pass or fail
            print(
                "\nQoS measurement (tc shaper): "
                + ", ".join(
                    f"VLAN {vlan} {r['measured_mbps']:g} Mb/s, {r['expected']}, ratio "
                    f"{r['ratio']}, {r['verdict']}"
                    for vlan, r in sorted(results.items())
                )
            )
        print("QoS measurement (tc):", json.dumps(results, indent=1))
        assert all(r["passed"] for r in results.values()), results
    finally:
        guests[name].run(
            f"for p in {ports}; do tc qdisc del dev $p root 2>/dev/null; done; true"
        )  # fmt: skip
        deployed.healthy("host_qos.yml", *limit)


# Lossless RoCE on the lab's VLAN 20 (user priority 3): the fabric's rules accept it
# as it stands (egress map on priority 3, DSCP 26 = priority 3, PFC on the IPL).
ROCE = {"cxfab_roce": {"lossless": True, "priority": 3, "dscp": 26, "vlans": [20]}}

READBACK = """
- name: Validate the fabric intent
  ansible.builtin.import_playbook: {validate}

- name: Read the QoS back as verify.yml does (check mode)
  hosts: {host}
  gather_facts: false
  tasks:
    - name: Read
      cxfab_host_qos:
        structured: >-
          {{{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}}}
      check_mode: true
      register: readback
    - name: Write what was read for the test
      ansible.builtin.copy:
        content: "{{{{ readback | to_json }}}}"
        dest: "{result}"
        mode: "0644"
      delegate_to: localhost
"""


@pytest.mark.lossless
def test_lossless_roce_applied_idempotent_and_a_removed_pfc_caught(
    deployed, guests, intents, tmp_path
):
    name = HOSTS[0]
    host = guests[name]
    extra = tmp_path / "roce.yml"
    extra.write_text(yaml.safe_dump(ROCE))
    limit = ("--limit", f"localhost,{name}")
    ports = data_ports(intents[name])
    readback = tmp_path / "readback.yml"
    result_file = tmp_path / "readback.json"
    validate = REPO_ROOT / "playbooks" / "validate.yml"
    readback.write_text(READBACK.format(validate=validate, host=name, result=result_file))
    try:
        first = deployed.healthy("host_qos.yml", "-e", f"@{extra}", *limit)
        assert first.recap[name]["changed"] > 0, first.tail()
        for port in ports:
            shown = host.run(f"mlnx_qos -i {port}")
            wanted = {"trust": "dscp", "pfc": [0, 0, 0, 1, 0, 0, 0, 0]}
            assert lossless.mlnx_qos_state(shown) == wanted, shown
        again = deployed.healthy("host_qos.yml", "-e", f"@{extra}", *limit)
        assert again.recap[name]["changed"] == 0, again.tail(2000)

        # PFC removed behind cxfab's back on one port: verify's check names it.
        host.run(f"mlnx_qos -i {ports[0]} --pfc=0,0,0,0,0,0,0,0")
        deployed.healthy(readback, "-e", f"@{extra}")
        found = qos.lossless_checks(name, structured(name), json.loads(result_file.read_text()))
        by_id = {c["id"]: c for c in found}
        print("lossless checks:", json.dumps(found, indent=1))
        assert by_id[f"pfc.{ports[0]}"]["status"] == "fail", by_id
        assert by_id[f"pfc.{ports[0]}"]["observed"] == "PFC on priorities []", by_id
        assert by_id[f"pfc.{ports[1]}"]["status"] == "pass", by_id
        assert by_id[f"trust.{ports[0]}"]["status"] == "pass", by_id
    finally:
        host.run(
            f"for p in {' '.join(ports)}; do mlnx_qos -i $p --trust=pcp --pfc=0,0,0,0,0,0,0,0 "
            ">/dev/null; done; rm -f /etc/security/limits.d/90-cxfab-rdma.conf"
        )
        deployed.healthy("host_qos.yml", *limit)
