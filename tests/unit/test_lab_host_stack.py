"""The lab builds each host guest's network stack from the lab inventory's word."""

from __future__ import annotations

import shlex

import yaml

from tests.lab.vm import host_stack
from tests.lab.vm.topology import GUESTS, INVENTORY_DIR


def test_the_inventory_leaves_the_networkmanager_guest_to_auto_and_the_other_on_networkd():
    assert [guest.name for guest in host_stack.networkmanager_guests()] == ["lab-host2"]
    backend = yaml.safe_load(
        (INVENTORY_DIR / "host_vars/lab-host2/network_backend.yml").read_text()
    )
    # auto, as an operator of a RHEL fleet leaves it: the stage finds NetworkManager.
    assert backend == {"host_network_backend": "auto"}
    group = yaml.safe_load((INVENTORY_DIR / "group_vars/hosts/lab.yml").read_text())
    assert group["host_network_backend"] == "networkd"
    others = {g.name for g in GUESTS} - set(host_stack.NETWORKMANAGER_GUESTS)
    assert others == {"lab-host1"}
    assert not (INVENTORY_DIR / "host_vars/lab-host1/network_backend.yml").exists()


def test_the_guest_command_runs_the_module_from_this_checkout():
    command = host_stack.guest_python_command("tests.tools.nm_guest start")
    words = shlex.split(command)
    assert words[:2] == ["cd", str(host_stack.REPO_ROOT)]
    assert words[-3:] == ["-m", "tests.tools.nm_guest", "start"]
    path = next(w for w in words if w.startswith("PYTHONPATH="))
    assert str(host_stack.REPO_ROOT / "module_utils") in path.split("=", 1)[1].split(":")
