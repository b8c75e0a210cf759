"""`make lab-up` writes the guests' host key where the lab inventory's ssh looks for it
(tests/lab/vm/control.py: write_known_hosts, ssh_argv)."""

import subprocess

import pytest
import yaml

from tests.lab.vm import control as lab
from tests.lab.vm.topology import FABRIC, GUESTS, INVENTORY_DIR


@pytest.fixture
def lab_host_key(tmp_path, monkeypatch):
    """(the lab's host key, its known-hosts file, not written yet) in tmp_path."""
    key = tmp_path / "host_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "t", "-f", str(key)],
                   check=True)  # fmt: skip
    known = tmp_path / "inv" / "files" / "known_hosts"
    monkeypatch.setattr(lab, "SSH_DIR", tmp_path)
    monkeypatch.setattr(lab, "KNOWN_HOSTS_FILE", known)
    return key, known


def test_known_hosts_holds_the_guest_host_key_per_forwarded_port(lab_host_key):
    key, known = lab_host_key
    lab.write_known_hosts()
    public = key.with_suffix(".pub").read_text().split()[1]
    for guest in (*GUESTS, FABRIC):
        # ssh-keygen -F finds a host the way ssh looks it up ([host]:port for port != 22).
        found = subprocess.run(
            ["ssh-keygen", "-F", f"[127.0.0.1]:{guest.ssh_port}", "-f", str(known)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert found.returncode == 0 and public in found.stdout, found


def test_lab_inventory_checks_host_keys_against_that_file():
    lab_vars = yaml.safe_load((INVENTORY_DIR / "group_vars/hosts/lab.yml").read_text())
    args = lab_vars["ansible_ssh_common_args"]
    assert "-o UserKnownHostsFile={{ lab_files_dir }}/known_hosts" in args
    # lab_files_dir is the inventory's own files/ unless a Molecule scenario (whose
    # inventory is a directory of its own) points lab_inventory_dir at inventories/lab.
    paths = yaml.safe_load((INVENTORY_DIR / "group_vars/all/lab.yml").read_text())
    assert paths["lab_inventory_dir"] == "{{ inventory_dir }}"
    assert paths["lab_files_dir"] == "{{ lab_inventory_dir }}/files"
    assert "-o StrictHostKeyChecking=yes" in args
    assert lab.KNOWN_HOSTS_FILE == INVENTORY_DIR / "files" / "known_hosts"


def test_the_harness_ssh_checks_the_guest_key_against_that_file(lab_host_key):
    key, known = lab_host_key
    argv = lab.ssh_argv(FABRIC, "true")
    options = [argv[i + 1] for i, word in enumerate(argv) if word == "-o"]
    assert "StrictHostKeyChecking=yes" in options
    assert f"UserKnownHostsFile={known}" in options
    assert not [o for o in options if o.endswith("=no") or o.endswith("/dev/null")]
    # the file did not exist yet: the call wrote it from the lab's host key
    assert key.with_suffix(".pub").read_text().split()[1] in known.read_text()
