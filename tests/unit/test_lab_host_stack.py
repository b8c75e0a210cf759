"""The lab builds each host guest's network stack from the lab inventory's word."""

from __future__ import annotations

import shlex

import yaml

from tests.lab.vm import host_stack
from tests.lab.vm.topology import GUESTS, INVENTORY_DIR


def test_the_guests_networkmanager_runs_in_are_those_the_inventory_names():
    names = [guest.name for guest in host_stack.networkmanager_guests()]
    assert names == ["lab-host2"]
    backend = yaml.safe_load(
        (INVENTORY_DIR / "host_vars/lab-host2/network_backend.yml").read_text()
    )
    assert backend == {"host_network_backend": "networkmanager"}
    # The other host stays on the group's backend: one of each in every deployed suite.
    group = yaml.safe_load((INVENTORY_DIR / "group_vars/hosts/lab.yml").read_text())
    assert group["host_network_backend"] == "networkd"
    assert {g.name for g in GUESTS} - set(names) == {"lab-host1"}


def test_the_guest_command_runs_the_module_from_this_checkout():
    command = host_stack.guest_python_command("tests.tools.nm_guest start")
    words = shlex.split(command)
    assert words[:2] == ["cd", str(host_stack.REPO_ROOT)]
    assert words[-3:] == ["-m", "tests.tools.nm_guest", "start"]
    path = next(w for w in words if w.startswith("PYTHONPATH="))
    assert str(host_stack.REPO_ROOT / "module_utils") in path.split("=", 1)[1].split(":")
