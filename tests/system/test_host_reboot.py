"""Lab tier: a real reboot of the NetworkManager host brings its network back.

lab-host2 (NetworkManager owns its network, test_host_networkmanager.py) is powered
off and booted again: its QEMU stopped, a fresh boot of the same guest
(tests/lab/vm/guests.py restart_guest), NetworkManager started as `lab up` starts it,
on what the guest's disk kept (guest-init.sh): cxfab's keyfiles and NetworkManager
dispatcher hook, the host agent's package, launcher and settings. Nothing of cxfab runs
between the boot and the comparison: NetworkManager activates cxfab's profiles by
itself (they autoconnect), its dispatcher runs the host agent at each link-up, which
completes the VLAN egress maps NetworkManager 1.42 programs one entry of. The links are
then compared, one by one, with the structured config: the bond and its options, the
members, the VLANs with their ids, MTUs, addresses and whole egress maps; the keyfiles
are byte for byte the ones site.yml wrote; the boot id proves a new boot. Then cxfab
itself is asked: the host network, QoS and IRQ affinity stages of site.yml on both
hosts change nothing (what the host agent re-applied at link-up is what they would set).

Runs last (conftest.py, marker `reboot`): the guests boot without systemd, so what a
real host's boot-time units restore (the soft-RoCE device of rdma_stack, its sysctls) is
not back, and the suites after it would miss it. The networkd host (lab-host1) is not
rebooted: the guests run no networkd daemon, which is what would read its files at boot.
"""

from __future__ import annotations

import shlex
import time

import pytest
import yaml

from tests.lab.vm import lab as labctl
from tests.lab.vm.topology import GUESTS
from tests.system.nmlinks import REPO, guest_module, show, whole_as_configured

pytestmark = [pytest.mark.lab, pytest.mark.reboot, pytest.mark.timeout(900)]

NM_GUEST = GUESTS[1]
STRUCTURED = REPO / "tests/golden/lab/structured" / f"{NM_GUEST.name}.yml"
KEYFILES = "/etc/NetworkManager/system-connections"
FINGERPRINT = f"cd {KEYFILES} && sha256sum cxfab-*.nmconnection && stat -c '%n %U %a' cxfab-*"
BOOT_ID = "cat /proc/sys/kernel/random/boot_id"


def test_a_power_cycle_brings_the_network_back_as_the_structured_config_says(
    deployed, lab, request
):
    network = yaml.safe_load(STRUCTURED.read_text())["network"]
    host = next(host for host in lab.hosts if host.name == NM_GUEST.name)
    keyfiles, boot_before = host.run(FINGERPRINT), host.run(BOOT_ID).strip()
    assert keyfiles.count(".nmconnection") >= 1 + len(network["vlans"]), keyfiles
    host.close()  # its SSH master talks to the boot that ends here
    began = time.monotonic()
    ssh_s = labctl.restart_guest(NM_GUEST)
    back = guest_module(host, f"tests.tools.nm_guest back {shlex.quote(str(STRUCTURED))}")
    total_s = time.monotonic() - began
    show(request, f"\n{NM_GUEST.name} power-cycled: SSH and NetworkManager after {ssh_s:.0f} s,"
         f" the VLANs' addresses {back['rebuilt_s']} s later, every egress map whole"
         f" {back['settled_s']} s after that ({total_s:.0f} s in all)")  # fmt: skip
    assert back["boot_id"] != boot_before, "the guest did not boot again"
    assert back["rebuilt_s"] >= 0 and back["settled_s"] >= 0, back
    whole_as_configured(back["links"], network)
    assert host.run(FINGERPRINT) == keyfiles
    again = deployed.play("site.yml", "--tags", "host_network,host_qos,irq_affinity")
    assert again.returncode == 0, again.tail()
    assert set(again.recap) >= {guest.name for guest in GUESTS}, again.tail()  # recap read
    assert again.changed_hosts() == {}, again.tail()
