"""The NetworkManager backend completes the VLAN egress maps NetworkManager < 1.46.6 leaves short.

NetworkManager 1.42 (Debian 12) types each IFLA_VLAN_EGRESS_QOS entry with its index, and
the kernel keeps only the entry typed IFLA_VLAN_QOS_MAPPING (= 1): the lab guest's VLANs
came up with {1: to} only (host/net/nmegress.py has the sources). A fake IPRoute stands in
for the kernel here; tests/integration/test_nm_egress_netlink.py sends the same call to a
real one and tests/system/test_lab_networkmanager.py runs it after a real NetworkManager.
"""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cxfab.host.net import agent, linkplan, nmapply, nmegress
from cxfab.host.stages import network_nm

REPO = Path(__file__).resolve().parents[2]
STRUCTURED = yaml.safe_load((REPO / "tests/golden/lab/structured/lab-host1.yml").read_text())
INTENT = {**STRUCTURED["network"], "ipoib": []}
VLANS = [v["name"] for v in INTENT["vlans"]]


def _wanted(name):
    return next(v for v in INTENT["vlans"] if v["name"] == name)["egress_qos_map"]


def bare() -> dict:
    return {p: {"kind": None, "mtu": 1500, "master": None, "up": True, "addresses": []}
            for p in ("ens1f0", "ens1f1")}  # fmt: skip


def converged() -> dict:
    """The links as the intent says, built from bare ports by linkplan's own simulation."""
    links = linkplan.simulate(bare(), linkplan.plan(INTENT, bare(), False))
    assert linkplan.plan(INTENT, links, False) == []
    return links


def as_nm_142_leaves_them() -> dict:
    """Everything right but each VLAN's egress map: only the entry at index 1 (from 1)."""
    links = converged()
    for name in VLANS:
        links[name]["egress_qos_map"] = {1: _wanted(name)[1]}
    return links


class Kernel:
    """IPRoute stand-in over a link view; `set` with vlan_egress_qos applies the entries
    typed IFLA_VLAN_QOS_MAPPING, as net/8021q/vlan_netlink.c does since Linux 6c21660fe221."""

    def __init__(self, links, takes_maps=True):
        self.links, self.takes_maps, self.calls = copy.deepcopy(links), takes_maps, []
        self.names = dict(enumerate(self.links, start=1))

    def link_lookup(self, ifname):
        return [i for i, n in self.names.items() if n == ifname]

    def link(self, command, index, **kwargs):
        self.calls.append((command, self.names[index], kwargs))
        if command == "del":
            self.links.pop(self.names.pop(index))
            return
        qos = kwargs.get("vlan_egress_qos")
        if command == "set" and qos and self.takes_maps:
            mapping = self.links[self.names[index]]["egress_qos_map"]
            for kind, entry in qos["attrs"]:
                if kind == "IFLA_VLAN_QOS_MAPPING":
                    mapping[entry["from"]] = entry["to"]
            self.links[self.names[index]]["egress_qos_map"] = linkplan.normalise_map(mapping)

    def read(self, _ipr=None):
        return copy.deepcopy(self.links)


def test_short_maps_are_completed_over_netlink_with_every_priority_typed_as_a_mapping():
    kernel = Kernel(as_nm_142_leaves_them())
    links, steps = nmegress.complete(kernel, INTENT, kernel.read(), False, kernel.read)
    assert linkplan.plan(INTENT, links, False) == []
    assert [(c, name) for c, name, _ in kernel.calls] == [("set", n) for n in VLANS]
    for _command, name, kwargs in kernel.calls:
        assert kwargs["kind"] == "vlan"
        assert kwargs["vlan_egress_qos"]["attrs"] == [
            ("IFLA_VLAN_QOS_MAPPING", {"from": p, "to": _wanted(name)[p]}) for p in range(8)
        ]
    to = _wanted(VLANS[0])[1]
    assert steps[0] == (
        f"set the egress map of {VLANS[0]} over netlink: NetworkManager left {{1: {to}}}, "
        f"wanted {linkplan.normalise_map(_wanted(VLANS[0]))}"
    )
    assert len(steps) == len(VLANS)


def test_nothing_is_set_when_networkmanager_built_the_links_right():
    kernel = Kernel(converged())
    assert nmegress.complete(kernel, INTENT, kernel.read(), False, kernel.read) == (
        kernel.read(), []
    )  # fmt: skip
    assert kernel.calls == []


@pytest.mark.parametrize(
    "spoil",
    [
        lambda links: links[VLANS[0]].update(mtu=1500),
        lambda links: links.pop(VLANS[-1]),
        lambda links: links["bond0"].update(addresses=[]),
    ],
    ids=["a VLAN's MTU", "a missing VLAN", "the bond's address"],
)
def test_no_map_is_set_while_anything_else_differs(spoil):
    """Not this defect: the caller's convergence check fails and rolls back."""
    links = as_nm_142_leaves_them()
    spoil(links)
    kernel = Kernel(links)
    assert nmegress.complete(kernel, INTENT, kernel.read(), False, kernel.read) == (links, [])
    assert kernel.calls == []


class Module:
    check_mode = False

    def __init__(self, tmp_path):
        self.params = {"persist": True, "nm_keyfile_dir": str(tmp_path / "keyfiles"),
                       "revert_seconds": 0, "purge_addresses": False,
                       "rollback_dir": str(tmp_path / "rollback"),
                       "root": str(tmp_path / "host")}  # fmt: skip

    def run_command(self, argv):
        raise AssertionError(f"nmcli is faked here: {argv}")

    def fail_json(self, **kwargs):
        raise Failed(kwargs)


class Failed(Exception):
    pass


def _stage(tmp_path, monkeypatch, kernel):
    """network_nm.run with NetworkManager's part faked: it 'activates' and leaves `kernel`."""
    monkeypatch.setattr(nmapply, "apply", lambda runner, directory, files, relink, done: done)
    view = lambda intent, links: {n: links.get(n, {}).get("egress_qos_map") for n in VLANS}  # noqa: E731
    actions = linkplan.plan(INTENT, bare(), False)
    return network_nm.run(
        Module(tmp_path), kernel, INTENT, STRUCTURED, {}, actions, {}, view, kernel.read
    )


def test_the_stage_converges_and_reports_the_maps_it_completed(tmp_path, monkeypatch):
    """Before nmegress the stage failed here with 'links did not converge: set_egress_map'."""
    result = _stage(tmp_path, monkeypatch, Kernel(as_nm_142_leaves_them()))
    assert result["links"] == {n: linkplan.normalise_map(_wanted(n)) for n in VLANS}
    assert [s.split(":")[0] for s in result["steps"]] == [
        f"set the egress map of {n} over netlink" for n in VLANS
    ]


def test_the_stage_fails_when_the_kernel_does_not_take_the_map_either(tmp_path, monkeypatch):
    with pytest.raises(Failed) as failed:
        _stage(tmp_path, monkeypatch, Kernel(as_nm_142_leaves_them(), takes_maps=False))
    assert failed.value.args[0]["msg"].startswith("links did not converge: set_egress_map")
    assert failed.value.args[0]["steps"][0].startswith(f"set the egress map of {VLANS[0]}")


def test_a_stale_vlan_no_profile_holds_is_deleted_over_netlink(tmp_path, monkeypatch):
    """A VLAN networkd made before the host moved to NetworkManager, gone from the intent:
    no profile of cxfab's holds it, so NetworkManager leaves it; the stage deletes it."""
    links = converged()
    links["bond0.40"] = {"kind": "vlan", "link": "bond0", "vlan_id": 40, "mtu": 9000,
                         "master": None, "up": True, "addresses": ["12.0.40.1/24"]}  # fmt: skip
    kernel = Kernel(links)
    result = _stage(tmp_path, monkeypatch, kernel)
    assert [(c, name) for c, name, _ in kernel.calls] == [("del", "bond0.40")]
    assert result["steps"] == ["delete bond0.40"]
    assert "bond0.40" not in kernel.links


# ------------------------------------------------ the maps across a reboot: the agent
def _host_with_networkmanager(tmp_path) -> Path:
    root = tmp_path / "host"
    (root / agent.NM_DIR.lstrip("/")).mkdir(parents=True)
    return root


def test_the_stage_gives_the_agent_every_whole_map_and_networkmanager_a_dispatcher_hook(
    tmp_path, monkeypatch
):
    root = _host_with_networkmanager(tmp_path)
    result = _stage(tmp_path, monkeypatch, Kernel(as_nm_142_leaves_them()))
    assert agent.NM_HOOK in result["agent"] and agent.CONFIG in result["agent"]
    hook = root / agent.NM_HOOK.lstrip("/")
    assert hook.stat().st_mode & 0o777 == 0o755
    section = json.loads((root / agent.CONFIG.lstrip("/")).read_text())["vlan_egress"]
    assert section["root"] == str(root)
    for name in VLANS:
        pairs = [f"{k}:{v}" for k, v in sorted(_wanted(name).items())]
        assert section["commands"][name] == [
            ["ip", "link", "set", "dev", name, "type", "vlan", "egress-qos-map", *pairs]
        ]
    # The next run finds the agent as it wants it: nothing to write, nothing changed by it.
    assert _stage(tmp_path, monkeypatch, Kernel(converged()))["agent"] == []


def test_without_networkmanager_installed_no_dispatcher_hook_is_written(tmp_path, monkeypatch):
    result = _stage(tmp_path, monkeypatch, Kernel(as_nm_142_leaves_them()))
    assert agent.CONFIG in result["agent"] and agent.NM_HOOK not in result["agent"]


def test_an_intent_without_maps_removes_the_section():
    intent = {**INTENT, "vlans": [{**v, "egress_qos_map": None} for v in INTENT["vlans"]]}
    assert nmegress.agent_section(intent) is None


@pytest.fixture
def fake_ip(tmp_path, monkeypatch):
    """An `ip` first on PATH that records each call's arguments, one line per call."""
    calls = tmp_path / "ip-calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ip").write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    (bin_dir / "ip").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return calls


def test_the_dispatcher_hook_runs_the_agent_on_up_only_and_it_sets_that_vlans_whole_map(
    tmp_path, monkeypatch, fake_ip
):
    """What a reboot leaves: NetworkManager creates the VLAN again with {1: to} and its
    dispatcher runs the hook with (interface, "up"); the agent sets the whole map of that
    VLAN, nothing for a VLAN not there yet (its own "up" comes later) or not cxfab's."""
    root = _host_with_networkmanager(tmp_path)
    _stage(tmp_path, monkeypatch, Kernel(as_nm_142_leaves_them()))
    config = root / agent.CONFIG.lstrip("/")
    launcher = tmp_path / "launcher"
    launcher.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO / 'module_utils')!r})\n"
        "from cxfab.host.net.agent import main\n"
        f"sys.exit(main(['--config', {str(config)!r}] + sys.argv[1:]))\n"
    )
    launcher.chmod(0o755)
    hook = (root / agent.NM_HOOK.lstrip("/")).read_text().replace(agent.LAUNCHER, str(launcher))
    (tmp_path / "hook").write_text(hook)
    first, second = VLANS[0], VLANS[1]
    (root / "sys/class/net" / first).mkdir(parents=True)

    def dispatch(interface, action):
        done = subprocess.run(["sh", str(tmp_path / "hook"), interface, action], check=False)
        assert done.returncode == 0

    for action in ("pre-up", "down", "dhcp4-change"):
        dispatch(first, action)
    assert not fake_ip.exists()
    dispatch(first, "up")
    dispatch(second, "up")  # not in /sys yet
    dispatch("ens9", "up")  # not cxfab's
    pairs = " ".join(f"{k}:{v}" for k, v in sorted(_wanted(first).items()))
    assert fake_ip.read_text().splitlines() == [
        f"link set dev {first} type vlan egress-qos-map {pairs}"
    ]
