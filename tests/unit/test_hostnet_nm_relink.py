"""NetworkManager hosts: a live drift brings up again only the profiles it touches.

A VLAN (or IPoIB interface) that drifted alone gets its own profile again; a drift on the
bond or a port re-activates every profile (stages/network_nm.profiles_to_relink). nmcli
is faked here; tests/integration/test_networkmanager_apply.py runs the real one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from cxfab.host.net import linkplan, nmapply
from cxfab.host.stages.network_nm import intended_interfaces, profiles_to_relink
from cxfab.structured import nmkeyfile
from hostnet_helpers import live_link

REPO = Path(__file__).resolve().parents[2]
STRUCTURED = yaml.safe_load((REPO / "tests/golden/lab/structured/lab-host1.yml").read_text())
INTENT = {**STRUCTURED["network"], "ipoib": []}
EVERY = intended_interfaces(INTENT)


def live_links() -> dict:
    """The links exactly as the intent says (what a converged host reads)."""
    bare = {"ens1f0": live_link(), "ens1f1": live_link()}
    return linkplan.simulate(bare, linkplan.plan(INTENT, bare))


def drift(change) -> list[tuple]:
    links = live_links()
    change(links)
    return linkplan.plan(INTENT, links)


def test_the_intent_read_back_plans_nothing():
    assert linkplan.plan(INTENT, live_links()) == []


@pytest.mark.parametrize(
    ("what", "change", "relinked"),
    [
        ("an address removed from one VLAN",
         lambda links: links["bond0.30"].update(addresses=[]), ["bond0.30"]),
        ("a VLAN's MTU", lambda links: links["bond0.10"].update(mtu=1500), ["bond0.10"]),
        ("the bond's address", lambda links: links["bond0"].update(addresses=[]), EVERY),
        ("a port's MTU", lambda links: links["ens1f1"].update(mtu=1500), EVERY),
        ("a port out of the bond", lambda links: links["ens1f0"].update(master=None), EVERY),
    ],
)  # fmt: skip
def test_a_drift_relinks_what_it_touches(what, change, relinked):
    actions = drift(change)
    assert actions, what
    assert profiles_to_relink(INTENT, actions) == relinked, what


def test_an_ipoib_drift_alone_relinks_its_profile():
    intent = {**INTENT, "ipoib": [{"name": "ibp59s0", "mode": "connected", "mtu": 65520}]}
    actions = [("set_ipoib_mode", "ibp59s0", {"mode": "connected"})]
    assert profiles_to_relink(intent, actions) == ["ibp59s0"]
    assert profiles_to_relink(intent, []) == []


class NetworkManager:
    """nmcli stand-in: every cxfab profile loaded from `directory` and active."""

    def __init__(self, directory: Path, files: dict[str, str]):
        self.directory, self.files, self.up = directory, files, []

    def __call__(self, argv, **_kwargs):
        if argv[1:3] == ["-t", "-f"]:
            rows = [
                f"{name.removesuffix(nmkeyfile.SUFFIX)}:uuid-{n}:{self.directory / name}:"
                f"dev{n}:activated"
                for n, name in enumerate(self.files)
            ]
            return subprocess.CompletedProcess(argv, 0, "\n".join(rows) + "\n", "")
        if "up" in argv:
            self.up.append(argv[-1])
            return subprocess.CompletedProcess(argv, 0, "", "")
        raise AssertionError(f"unexpected nmcli call {argv}")


def test_apply_brings_up_only_the_relinked_profiles(tmp_path):
    files = nmapply.render(STRUCTURED)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(nmkeyfile.KEYFILE_MODE)
    nmcli = NetworkManager(tmp_path, files)
    steps = nmapply.apply(nmcli, str(tmp_path), files, relink=["bond0.30"])
    assert (nmcli.up, steps) == (["cxfab-bond0.30"], ["activated cxfab-bond0.30"])

    nmcli.up.clear()
    nmapply.apply(nmcli, str(tmp_path), files, relink=EVERY)
    # Every profile, in NetworkManager's order: the bond, its ports, then the VLANs.
    assert nmcli.up == [
        "cxfab-bond0", "cxfab-ens1f0", "cxfab-ens1f1",
        "cxfab-bond0.10", "cxfab-bond0.20", "cxfab-bond0.30",
    ]  # fmt: skip

    nmcli.up.clear()
    assert nmapply.apply(nmcli, str(tmp_path), files) == [] and nmcli.up == []
