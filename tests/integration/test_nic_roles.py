"""nic_firmware, nic_link_type and the shared activation handler, end to end.

Each test runs ansible-playbook on the controller against the lab's ConnectX
tool emulators: only this test's subprocess has them first in PATH (the
product code only knows tool names). The host is `nichost` with a local
connection; the card state lives in a per-test CXEMU_STATE_DIR.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
EMU_BIN = REPO / "tests" / "lab" / "cxemu" / "bin"
ANSIBLE_PLAYBOOK = Path(sys.executable).parent / "ansible-playbook"
BDF = "0000:65:00.0"
OEM_PSID = "LNV2190110032"
TARGET = "12.28.1002"

# Every test builds its own world in tmp_path: xdist may give each its own worker.
SPREAD_TESTS = True

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not (EMU_BIN / "cxemu-admin").exists(), reason="ConnectX tool emulators not built"
    ),
    pytest.mark.skipif(not ANSIBLE_PLAYBOOK.exists(), reason="ansible-playbook not in the venv"),
]

BOTH_ROLES = """\
- name: NIC firmware and port protocols in one play
  hosts: hosts
  gather_facts: false
  serial: 1
  max_fail_percentage: 0
  roles:
    - role: nic_firmware
    - role: nic_link_type
"""

FIRMWARE_ONLY = BOTH_ROLES.replace("    - role: nic_link_type\n", "")
LINK_TYPE_ONLY = BOTH_ROLES.replace("    - role: nic_firmware\n", "")


class Lab:
    """One emulated host: card state, images, inventory, playbook runs."""

    def __init__(self, root: Path):
        self.root = root
        self.state = root / "cxemu"
        self.inventory = root / "inventory"
        # The "host"'s Ansible temporary directory: the image is shipped there for a burn.
        self.remote = root / "remote"
        self.reset_log = root / "fwreset.log"
        self.env = dict(os.environ)
        self.env.update(
            PATH=f"{EMU_BIN}:{Path(sys.executable).parent}:{os.environ['PATH']}",
            CXEMU_STATE_DIR=str(self.state),
            ANSIBLE_CONFIG=str(REPO / "ansible.cfg"),
            ANSIBLE_REMOTE_TMP=str(self.remote),
            ANSIBLE_NOCOLOR="1",
            ANSIBLE_FORCE_COLOR="0",
        )
        # A logging wrapper around the emulated mstfwreset, given to the roles as the
        # configured tool path: it lets the tests count activations.
        self.fwreset = root / "fwreset-logged"
        self.fwreset.write_text(f'#!/bin/sh\necho "$*" >> {self.reset_log}\nexec mstfwreset "$@"\n')
        self.fwreset.chmod(0o755)
        (self.inventory / "files" / "firmware").mkdir(parents=True)

    def admin(self, *args: str) -> str:
        proc = subprocess.run(
            [str(EMU_BIN / "cxemu-admin"), *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout

    def card(self, bdf: str = BDF) -> dict:
        return json.loads(self.admin("show", "-d", bdf))["cards"][0]

    def image(self, name: str, psid: str, version: str, **extra: str) -> tuple[str, str]:
        """A fake image under the inventory; returns (path relative to it, sha256)."""
        out = self.inventory / "files" / "firmware" / name
        args = ["make-image", "--psid", psid, "--version", version, "--out", str(out)]
        for key, value in extra.items():
            args += [f"--{key.replace('_', '-')}", value]
        digest = self.admin(*args).split()[0]
        return f"files/firmware/{name}", digest

    def write_inventory(self, nics: list[dict], **host_vars) -> None:
        hosts = {"all": {"children": {"hosts": {"hosts": {"nichost": None}}}}}
        (self.inventory / "hosts.yml").write_text(yaml.safe_dump(hosts))
        variables = {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "ansible_become": False,
            "nic_firmware_fwreset_path": str(self.fwreset),
            "nic_link_type_fwreset_path": str(self.fwreset),
            # What the structured config hands the roles in a run (the roles read no intent).
            "nic_firmware_nics": nics,
            "nic_link_type_nics": nics,
            **host_vars,
        }
        host_dir = self.inventory / "host_vars" / "nichost"
        host_dir.mkdir(parents=True, exist_ok=True)
        (host_dir / "cxfab.yml").write_text(yaml.safe_dump(variables))

    def play(self, playbook: str, *args: str) -> Run:
        path = self.root / "play.yml"
        path.write_text(playbook)
        proc = subprocess.run(
            [str(ANSIBLE_PLAYBOOK), "-i", str(self.inventory / "hosts.yml"), str(path), *args],
            env=self.env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=240,
        )
        return Run(proc.returncode, proc.stdout + proc.stderr)

    def images_left_on_host(self) -> list[Path]:
        return sorted(self.remote.rglob("*.bin")) if self.remote.exists() else []

    def resets(self) -> list[str]:
        if not self.reset_log.exists():
            return []
        return [line for line in self.reset_log.read_text().splitlines() if "reset" in line]


class Run:
    def __init__(self, rc: int, output: str):
        self.rc, self.output = rc, output
        match = re.search(r"^nichost\s+:\s+(.*)$", output, re.M)
        self.recap = (
            {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))} if match else {}
        )

    @property
    def changed(self) -> int:
        return self.recap["changed"]

    @property
    def failed(self) -> int:
        return self.recap["failed"]


def nic(image: str, sha256: str, ports=None, version=TARGET, psid=OEM_PSID, pci=BDF) -> dict:
    entry = {
        "name": "cx4",
        "pci": pci,
        "model": "ConnectX-4",
        "firmware": {"version": version, "psid": psid, "image": image, "sha256": sha256},
    }
    if ports is not None:
        entry["ports"] = ports
    return entry


PORTS_ETH = [
    {"port": 1, "netdev": "ens4", "link_type": "eth"},
    {"port": 2, "netdev": "ens5", "link_type": "eth"},
]


@pytest.fixture
def lab(tmp_path):
    lab = Lab(tmp_path)
    lab.admin("seed", "--profile", "seed000", "--bdf", f"{BDF},0000:65:00.1")
    return lab


def test_seed_state_burn_activate_then_idempotent(lab):
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    lab.write_inventory([nic(image, digest)])

    first = lab.play(FIRMWARE_ONLY)
    assert first.rc == 0, first.output
    card = lab.card()
    assert card["firmware"]["flash"] == TARGET and card["firmware"]["running"] == TARGET
    assert card["psid"] == OEM_PSID
    assert first.changed >= 2  # burn + queued activation
    assert lab.resets() == [f"-d {BDF} -y reset"]
    assert not lab.images_left_on_host()  # shipped for the burn, removed after it
    assert f"burn {OEM_PSID} {TARGET} over {OEM_PSID} 12.23.1020" in first.output

    second = lab.play(FIRMWARE_ONLY)
    assert second.rc == 0, second.output
    assert second.changed == 0, second.output
    assert lab.resets() == [f"-d {BDF} -y reset"]


def test_wrong_psid_image_refused_nothing_burned(lab):
    # The vendor (MT_) image for the same card: a real download mistake for OEM cards.
    image, digest = lab.image("fw-mt.bin", "MT_2190110032", TARGET)
    lab.write_inventory([nic(image, digest, psid=None)])
    run = lab.play(FIRMWARE_ONLY)
    assert run.rc != 0 and run.failed == 1
    assert "PSID mismatch" in run.output
    assert OEM_PSID in run.output and "MT_2190110032" in run.output
    card = lab.card()
    assert card["firmware"]["flash"] == "12.23.1020" and card["psid"] == OEM_PSID
    assert lab.resets() == []


def test_sha256_mismatch_refused_nothing_copied(lab):
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    wrong = digest[:-4] + ("0000" if not digest.endswith("0000") else "1111")
    lab.write_inventory([nic(image, wrong)])
    run = lab.play(FIRMWARE_ONLY)
    assert run.rc != 0 and run.failed == 1
    assert "cxfab_host.nics[0].firmware: sha256 mismatch" in run.output
    assert digest in run.output and wrong in run.output
    assert not lab.images_left_on_host()
    assert lab.card()["firmware"]["flash"] == "12.23.1020"


def test_without_a_structured_config_the_roles_stop_and_say_so(lab):
    """The intent alone (cxfab_host, not validated) is no input: no NIC is read from it."""
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    lab.write_inventory([])
    host_vars = lab.inventory / "host_vars" / "nichost" / "cxfab.yml"
    variables = yaml.safe_load(host_vars.read_text())
    del variables["nic_firmware_nics"], variables["nic_link_type_nics"]
    variables["cxfab_host"] = {"mgmt_interface": "eno1", "nics": [nic(image, digest)]}
    host_vars.write_text(yaml.safe_dump(variables))
    for role, playbook in (("nic_firmware", FIRMWARE_ONLY), ("nic_link_type", LINK_TYPE_ONLY)):
        run = lab.play(playbook)
        assert run.rc != 0, role
        assert f"{role}: no structured config for nichost" in run.output, run.output[-2000:]
    # The host reading before the rollout takes the NICs from the same place only.
    host_state = (
        f"- name: Read\n  ansible.builtin.import_playbook: {REPO}/playbooks/host_state.yml\n"
    )
    reading = lab.play(host_state, "--tags", "nic_firmware")
    assert reading.rc != 0
    assert "host_state: no structured config for nichost" in reading.output, reading.output[-2000:]
    assert lab.card()["firmware"]["flash"] == "12.23.1020"


def test_sha256_checked_again_on_the_host(lab):
    # The copy on the host was altered after the controller check: the module refuses it.
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    lab.write_inventory([nic(image, digest)])
    lab.remote.mkdir()
    remote = lab.remote / "fw-12.28.1002.bin"
    remote.write_text("tampered")
    # The role ships a fresh copy for each burn: call the module on the tampered copy.
    direct = (
        "- name: Burn from a tampered host copy\n"
        "  hosts: hosts\n"
        "  gather_facts: false\n"
        "  tasks:\n"
        "    - name: Burn\n"
        "      cxfab_nic_firmware:\n"
        f"        device: '{BDF}'\n"
        f"        version: '{TARGET}'\n"
        f"        image: {remote}\n"
        f"        sha256: {digest}\n"
        f"        psid: {OEM_PSID}\n"
    )
    run = lab.play(direct)
    assert run.rc != 0 and "sha256 mismatch" in run.output
    assert lab.card()["firmware"]["flash"] == "12.23.1020"


def test_check_mode_reports_and_changes_nothing(lab):
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    lab.write_inventory([nic(image, digest, ports=PORTS_ETH)])
    before = lab.card()
    run = lab.play(BOTH_ROLES, "--check")
    assert run.rc == 0, run.output
    # The image is shipped in check mode too (and removed): its PSID is checked.
    assert f"would burn {OEM_PSID} {TARGET} over {OEM_PSID} 12.23.1020" in run.output
    assert "would set LINK_TYPE_P2=2" in run.output
    assert lab.card() == before
    assert not lab.images_left_on_host()
    assert lab.resets() == []


def test_link_type_and_firmware_share_one_activation(lab):
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    lab.write_inventory([nic(image, digest, ports=PORTS_ETH)])
    assert lab.card()["config"]["LINK_TYPE_P2"]["current"] == 1  # IB, as in seed 000

    first = lab.play(BOTH_ROLES)
    assert first.rc == 0, first.output
    card = lab.card()
    assert card["config"]["LINK_TYPE_P2"] == {"current": 2, "default": 1, "next": 2}
    assert card["config"]["LINK_TYPE_P1"]["current"] == 2
    assert card["firmware"]["running"] == TARGET
    assert lab.resets() == [f"-d {BDF} -y reset"]  # one reset for both roles

    second = lab.play(BOTH_ROLES)
    assert second.rc == 0 and second.changed == 0, second.output
    assert len(lab.resets()) == 1


def test_next_boot_already_set_only_activates(lab):
    lab.admin("set", "-d", BDF, "config.LINK_TYPE_P2.next=2")
    lab.write_inventory([{"name": "cx4", "pci": BDF, "ports": PORTS_ETH}])
    run = lab.play(BOTH_ROLES)
    assert run.rc == 0, run.output
    assert "Next Boot already as desired, activation pending" in run.output
    assert lab.card()["config"]["LINK_TYPE_P2"]["current"] == 2
    assert lab.resets() == [f"-d {BDF} -y reset"]


def test_unsupported_port_fails_clearly(lab):
    ports = [{"port": 3, "link_type": "eth"}]
    lab.write_inventory([{"name": "cx4", "pci": BDF, "ports": ports}])
    run = lab.play(BOTH_ROLES)
    assert run.rc != 0
    assert "does not report LINK_TYPE_P3" in run.output
    assert lab.resets() == []


def test_nv_config_pins_set_with_the_ports_in_one_call_and_one_activation(lab):
    pins = {"SRIOV_EN": "True", "NUM_OF_VFS": "8", "KEEP_IB_LINK_UP_P1": "False"}
    lab.write_inventory([{"name": "cx4", "pci": BDF, "ports": PORTS_ETH, "nv_config": pins}])
    before = lab.card()
    checked = lab.play(BOTH_ROLES, "--check", "--diff")
    assert checked.rc == 0, checked.output
    # Only what Next Boot lacks, in one set (KEEP_IB_LINK_UP_P1 is False already).
    assert "would set LINK_TYPE_P2=2 NUM_OF_VFS=8 SRIOV_EN=True (Next Boot)" in checked.output
    assert "+SRIOV_EN: True" in checked.output and "-SRIOV_EN: False(0)" in checked.output
    assert lab.card() == before and lab.resets() == []

    first = lab.play(BOTH_ROLES)
    assert first.rc == 0, first.output
    config = lab.card()["config"]
    assert config["SRIOV_EN"] == {"current": 1, "default": 0, "next": 1}
    assert config["NUM_OF_VFS"]["current"] == 8 and config["LINK_TYPE_P2"]["current"] == 2
    assert lab.resets() == [f"-d {BDF} -y reset"]  # one activation for ports and pins

    second = lab.play(BOTH_ROLES)
    assert second.rc == 0 and second.changed == 0, second.output
    assert len(lab.resets()) == 1


def test_nv_config_in_next_boot_only_activates_and_unsupported_sets_nothing(lab):
    lab.admin("set", "-d", BDF, "config.NUM_OF_VFS.next=4")
    pinned = {"name": "cx4", "pci": BDF, "ports": [], "nv_config": {"NUM_OF_VFS": "4"}}
    lab.write_inventory([pinned])
    run = lab.play(BOTH_ROLES)
    assert run.rc == 0, run.output
    assert "Next Boot already as desired, activation pending" in run.output
    assert lab.card()["config"]["NUM_OF_VFS"]["current"] == 4
    assert lab.resets() == [f"-d {BDF} -y reset"]

    pins = {"NUM_OF_VFS": "2", "PF_NUM_OF_VF": "4"}  # a ConnectX-4 has no PF_NUM_OF_VF
    lab.write_inventory([{"name": "cx4", "pci": BDF, "ports": [], "nv_config": pins}])
    refused = lab.play(BOTH_ROLES)
    assert refused.rc != 0
    assert "nv_config.PF_NUM_OF_VF" in refused.output and "does not support it" in refused.output
    assert lab.card()["config"]["NUM_OF_VFS"]["next"] == 4  # nothing was set
    assert len(lab.resets()) == 1


def test_no_reboot_allowed_reports_pending_activation(tmp_path):
    # ConnectX-3: mstfwreset refuses the card, so only a reboot could activate.
    lab = Lab(tmp_path)
    lab.admin("seed", "--profile", "cx3", "--bdf", "0000:03:00.0")
    image, digest = lab.image("fw-cx3.bin", "MT_1090120019", "2.42.5100", device_type="ConnectX3")
    cx3 = nic(image, digest, version="2.42.5100", psid="MT_1090120019", pci="0000:03:00.0")
    lab.write_inventory([cx3], nic_firmware_allow_reboot=False)

    first = lab.play(FIRMWARE_ONLY)
    assert first.rc == 0, first.output
    assert "PENDING ACTIVATION" in first.output and "cannot be reset live" in first.output
    firmware = lab.card("0000:03:00.0")["firmware"]
    assert (firmware["flash"], firmware["running"]) == ("2.42.5100", "2.42.5000")
    # The handler was never notified: no reset attempted, no reboot task run.
    assert "RUNNING HANDLER" not in first.output
    assert [line for line in lab.resets() if "-y reset" in line] == []

    second = lab.play(FIRMWARE_ONLY)
    assert second.rc == 0 and second.changed == 0, second.output
    assert "PENDING ACTIVATION" in second.output
    assert "in flash, activation pending" in second.output
    assert lab.card("0000:03:00.0")["firmware"]["flash"] == "2.42.5100"


def test_mft_manager_only_host(lab, tmp_path):
    # A host with NVIDIA's mlxfwmanager and mlxconfig but no mstflint/mstconfig.
    mft = tmp_path / "mft-bin"
    mft.mkdir()
    for tool in ("mlxfwmanager", "mlxconfig", "mstfwreset"):
        (mft / tool).symlink_to(EMU_BIN / tool)
    lab.env["PATH"] = f"{mft}:{Path(sys.executable).parent}:/usr/bin:/bin"
    image, digest = lab.image("fw-12.28.1002.bin", OEM_PSID, TARGET)
    lab.write_inventory([nic(image, digest, ports=PORTS_ETH)])

    run = lab.play(BOTH_ROLES)
    assert run.rc == 0, run.output
    card = lab.card()
    assert card["firmware"]["running"] == TARGET
    assert card["config"]["LINK_TYPE_P2"]["current"] == 2
    assert lab.resets() == [f"-d {BDF} -y reset"]
    again = lab.play(BOTH_ROLES)
    assert again.rc == 0 and again.changed == 0, again.output


def test_mft_manager_only_host_downgrades_only_with_the_opt_in(lab, tmp_path):
    # The emulated mlxfwmanager, like MFT's, burns an older image only when forced.
    mft = tmp_path / "mft-bin"
    mft.mkdir()
    for tool in ("mlxfwmanager", "mstfwreset"):
        (mft / tool).symlink_to(EMU_BIN / tool)
    lab.env["PATH"] = f"{mft}:{Path(sys.executable).parent}:/usr/bin:/bin"
    older = "12.20.1010"
    image, digest = lab.image("fw-12.20.1010.bin", OEM_PSID, older)
    lab.write_inventory([nic(image, digest, version=older)])

    refused = lab.play(FIRMWARE_ONLY)
    assert refused.rc != 0 and "downgrade refused" in refused.output, refused.output
    assert lab.card()["firmware"]["flash"] == "12.23.1020"

    lab.write_inventory([nic(image, digest, version=older)], nic_firmware_allow_downgrade=True)
    allowed = lab.play(FIRMWARE_ONLY)
    assert allowed.rc == 0, allowed.output
    firmware = lab.card()["firmware"]
    assert (firmware["flash"], firmware["running"]) == (older, older)
    assert lab.resets() == [f"-d {BDF} -y reset"]


PENDING = f"""\
- name: Pending activations
  ansible.builtin.import_playbook: {REPO}/playbooks/nic_pending.yml
"""


def test_a_next_boot_value_other_than_current_is_reported_pending_by_name(lab):
    nics = [{"name": "cx4", "pci": BDF, "ports": PORTS_ETH[:1]}]
    lab.write_inventory(nics, nic_pending_nics=nics)
    clean = lab.play(PENDING)
    assert clean.rc == 0 and clean.changed == 0, clean.output
    assert "PENDING ACTIVATION" not in clean.output
    # Set by hand (or by an earlier run) and never activated: the card says so.
    lab.admin("set", "-d", BDF, "config.SRIOV_EN.next=1", "config.NUM_OF_VFS.next=8")
    waiting = lab.play(PENDING)
    assert waiting.rc == 0 and waiting.changed == 0, waiting.output
    assert (
        f"PENDING ACTIVATION on nichost {BDF}: NUM_OF_VFS (current 0, next boot 8), "
        "SRIOV_EN (current False(0), next boot True(1))"
    ) in " ".join(waiting.output.split())
    subprocess.run(
        [str(EMU_BIN / "mstfwreset"), "-d", BDF, "-y", "reset"],
        env=lab.env,
        check=True,
        capture_output=True,
    )
    assert "PENDING ACTIVATION" not in lab.play(PENDING).output


def test_profile_parameters_are_set_in_one_call_and_one_activation(lab):
    from cxfab.intent.profiles import merged_nv_config

    card = {"name": "cx4", "pci": BDF, "ports": PORTS_ETH}
    card["profiles"] = {
        "sriov": {"num_vfs": 8},
        "roce": {"cc_priorities": [3]},
        "pci_performance": {"max_acc_out_read": 44},
        "gpudirect": {"ats": False},
    }
    pins = merged_nv_config(card)
    lab.write_inventory([{**card, "nv_config": pins}])
    first = lab.play(LINK_TYPE_ONLY)
    assert first.rc == 0, first.output
    config = lab.card()["config"]
    got = {name: config[name]["current"] for name in pins}
    assert got == {
        "SRIOV_EN": 1, "NUM_OF_VFS": 8, "ADVANCED_PCI_SETTINGS": 1, "MAX_ACC_OUT_READ": 44,
        "ATS_ENABLED": 0,
        "ROCE_CC_PRIO_MASK_P1": 8, "CNP_DSCP_P1": 4, "CNP_802P_PRIO_P1": 6,
        "ROCE_CC_PRIO_MASK_P2": 8, "CNP_DSCP_P2": 4, "CNP_802P_PRIO_P2": 6,
    }  # fmt: skip
    assert lab.resets() == [f"-d {BDF} -y reset"]
    again = lab.play(LINK_TYPE_ONLY)
    assert again.rc == 0 and again.changed == 0, again.output
