"""playbooks/nic_firmware.yml and nic_link_type.yml on a copy of the example fabric.

Both seed hosts (cardamine, apricot) run with a local connection against
emulated ConnectX-4 cards in the seed-000 state: validation first, then a
serial rollout that stops at the first failed host.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest
import yaml
from test_nic_roles import ANSIBLE_PLAYBOOK, EMU_BIN, OEM_PSID, REPO, TARGET, Lab, Run

CARDS = {"cardamine": "0000:17:00.0", "apricot": "0000:18:00.0"}

# Every test builds its own world in tmp_path: xdist may give each its own worker.
SPREAD_TESTS = True

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (EMU_BIN / "cxemu-admin").exists(), reason="ConnectX tool emulators not built"
    ),
    pytest.mark.skipif(
        not (REPO / "playbooks" / "validate.yml").exists(), reason="validate.yml not written yet"
    ),
]


class FabricLab(Lab):
    """The example inventory, copied, with both hosts pointed at emulated cards."""

    def __init__(self, root, images: dict[str, tuple[str, str]]):
        super().__init__(root)
        self.bonding = root / "bonding"
        shutil.rmtree(self.inventory)
        shutil.copytree(REPO / "inventories" / "example", self.inventory)
        (self.inventory / "files" / "firmware").mkdir(parents=True)
        for host, bdf in CARDS.items():
            self.admin("seed", "--profile", "seed000", "--bdf", bdf)
            psid = images[host][0]
            image, digest = self.image(f"{host}.bin", psid, TARGET)
            path = self.inventory / "host_vars" / host / "cxfab.yml"
            data = yaml.safe_load(path.read_text())
            # The seed-000 card only: the example's other NICs (an InfiniBand card)
            # have no emulated device here.
            nic = data["cxfab_host"]["nics"][0]
            data["cxfab_host"]["nics"] = [nic]
            nic["pci"] = bdf
            nic["firmware"].update(image=image, sha256=digest, psid=OEM_PSID)
            path.write_text(yaml.safe_dump(data))
            (self.inventory / "host_vars" / host / "connection.yml").write_text(
                yaml.safe_dump(
                    {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "ansible_become": False,
                        "nic_firmware_fwreset_path": str(self.fwreset),
                        "nic_link_type_fwreset_path": str(self.fwreset),
                        "nic_activation_bond_proc_dir": str(self.bonding / host),
                        "nic_activation_bond_wait": 3,
                    }
                )
            )

    def playbook(self, name: str) -> Run:
        proc = subprocess.run(
            [
                str(ANSIBLE_PLAYBOOK),
                "-i",
                str(self.inventory / "hosts.yml"),
                str(REPO / "playbooks" / name),
            ],
            env=self.env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return HostsRun(proc.returncode, proc.stdout + proc.stderr)

    def bond_status(self, host: str, rejoined: bool) -> None:
        """The host's /proc/net/bonding/bond0: the second member outside the aggregator
        until `rejoined`."""
        data = yaml.safe_load((self.inventory / "host_vars" / host / "cxfab.yml").read_text())
        first, second = data["cxfab_host"]["bond"]["members"]
        text = (
            "Ethernet Channel Bonding Driver: v6.1.0\n\n"
            "Bonding Mode: IEEE 802.3ad Dynamic link aggregation\nMII Status: up\n\n"
            "802.3ad info\nActive Aggregator Info:\n\tAggregator ID: 1\n"
        )
        for name, aggregator in ((first, 1), (second, 1 if rejoined else 2)):
            text += f"\nSlave Interface: {name}\nMII Status: up\nAggregator ID: {aggregator}\n"
        (self.bonding / host).mkdir(parents=True, exist_ok=True)
        (self.bonding / host / "bond0").write_text(text)


class HostsRun(Run):
    def host(self, name: str) -> dict:
        match = re.search(rf"^{name}\s+:\s+(.*)$", self.output, re.M)
        if not match:
            return {}
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


def test_serial_rollout_then_link_type_then_idempotent(tmp_path):
    lab = FabricLab(tmp_path, {host: (OEM_PSID,) for host in CARDS})
    lab.bond_status("cardamine", rejoined=True)  # apricot's bond is not built yet
    firmware = lab.playbook("nic_firmware.yml")
    assert firmware.rc == 0, firmware.output
    assert re.search(r"bond bond0 members back after \d+(\.\d+)? s", firmware.output)
    flowing = " ".join(firmware.output.split())  # the YAML callback folds long messages
    assert "no bond wait: bond bond0 did not exist before the activation" in flowing
    # serial: 1 -> one batch per host, each ending with its own activation.
    assert firmware.output.count("PLAY [Roll NIC firmware out]") == 2
    assert sorted(lab.resets()) == sorted(f"-d {bdf} -y reset" for bdf in CARDS.values())
    for bdf in CARDS.values():
        assert lab.card(bdf)["firmware"]["running"] == TARGET

    link = lab.playbook("nic_link_type.yml")
    assert link.rc == 0, link.output
    for bdf in CARDS.values():
        assert lab.card(bdf)["config"]["LINK_TYPE_P2"]["current"] == 2
    assert len(lab.resets()) == 4

    for name in ("nic_firmware.yml", "nic_link_type.yml"):
        again = lab.playbook(name)
        assert again.rc == 0, again.output
        assert again.host("cardamine")["changed"] == 0, again.output
        assert again.host("apricot")["changed"] == 0, again.output
        # One read per host at the start; the serial play then skips every settled NIC
        # without contacting the host (no second query, no per-card task ran).
        assert again.output.count("every NIC runs its firmware and port protocols") == 2
        assert "TASK [nic_firmware : Roll the firmware out to 0000" not in again.output
        assert "port protocols as desired" not in again.output  # the module did not run
    assert len(lab.resets()) == 4


def test_first_host_refused_stops_the_rollout(tmp_path):
    # cardamine got the vendor image (PSID MT_...): it must fail and apricot stay untouched.
    lab = FabricLab(tmp_path, {"cardamine": ("MT_2190110032",), "apricot": (OEM_PSID,)})
    run = lab.playbook("nic_firmware.yml")
    assert run.rc != 0
    assert "PSID mismatch" in run.output and "MT_2190110032" in run.output
    assert run.host("cardamine")["failed"] == 1
    assert run.host("apricot").get("changed", 0) == 0
    for bdf in CARDS.values():
        assert lab.card(bdf)["firmware"]["flash"] == "12.23.1020"
    assert lab.resets() == []


def test_a_bond_that_does_not_come_back_stops_the_rollout(tmp_path):
    lab = FabricLab(tmp_path, {host: (OEM_PSID,) for host in CARDS})
    lab.bond_status("cardamine", rejoined=False)
    run = lab.playbook("nic_firmware.yml")
    assert run.rc != 0
    assert re.search(
        r"bond bond0: members not back in the aggregator after 3(\.\d+)? s \(timeout 3 s\): "
        r"\S+: MII up, aggregator 1 \(active 1\); \S+: MII up, aggregator 2 \(active 1\)",
        run.output,
    ), run.output[-3000:]
    assert run.host("cardamine")["failed"] == 1
    # cardamine was activated; apricot, next in the serial rollout, was not touched.
    assert lab.resets() == [f"-d {CARDS['cardamine']} -y reset"]
    assert lab.card(CARDS["apricot"])["firmware"]["flash"] == "12.23.1020"
