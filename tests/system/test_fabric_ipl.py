"""Lab tier: the IPL is cut with both switches alive, then healed (`make lab-fail IPL=cut`).

Onyx's split-brain rule: the MLAG-VIP standby that loses the IPL while its peer still
answers over management shuts its MPOs, so every host is served by the primary alone.
lab-sw-a has the lower host MAC, so it is the MLAG-VIP master and lab-sw-b the standby.
Runs on the lab as site.yml left it and leaves it whole again (MLAG Up, every MPO
Active-full on both peers), which the test checks at its end.
"""

from __future__ import annotations

import time

import pytest

from tests.lab.vm import lab as labctl
from tests.system import switchpair
from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.dataplane, pytest.mark.timeout(600)]

PRIMARY, STANDBY = "lab-sw-a", "lab-sw-b"
MPOS = ("mpo1", "mpo2")
ONLY_PRIMARY, BOTH = switchpair.ONLY_SIDE_A, switchpair.BOTH_SIDES
# The hosts drop the standby's side after 3 missed LACP PDUs (fast rate), ~3 s; TCG's
# timers and the agents' reads stretch that.
CONVERGE_S = 30
# After the heal: the standby's MPOs come back, LACP bundles them again (a few s), and
# `show` reports the members from the agent's next read of the bonds.
HEAL_S = 60


def standby_shut() -> bool:
    """lab-sw-b's emulator has every MPO Inactive and its namespace has their bonds down.
    Polled through the control channel and one SSH (a `show` login costs ~13 s on the
    lab); what `show` prints is checked once this holds."""
    mpos = switchpair.status(STANDBY)["mpos"]
    links = switchpair.namespace_links(STANDBY)
    inactive = len(mpos) == len(MPOS) and set(mpos.values()) == {"Inactive"}
    return inactive and not any(switchpair.is_up(links[name]) for name in MPOS)


def test_a_cut_ipl_leaves_the_primary_forwarding_and_heals(deployed: Deployment, lab):
    targets = switchpair.every_hosts_targets(lab.hosts)
    figures = {}
    cut_at = time.monotonic()
    try:
        labctl.apply_fault(["ipl"], active=True)
        switchpair.wait_for(standby_shut, CONVERGE_S, f"{STANDBY} shutting its MPOs")
        figures["standby_shut_s"] = time.monotonic() - cut_at
        # The port cabled to the standby is left out of every host's bond (polled before
        # the `show` checks below: a login there costs ~13 s, which the figure would take).
        switchpair.wait_bonds(lab.hosts, ONLY_PRIMARY, CONVERGE_S, cut_at, "primary_only", figures)
        mlag, mpos = switchpair.mlag_and_mpos(STANDBY)
        assert mlag["oper"] == "Down" and [i["state"] for i in mlag["ipls"]] == ["Down"], mlag
        assert len(mpos) == len(MPOS) and {m["flag"] for m in mpos.values()} == {"D"}, mpos
        assert all(port_flag == "D" for m in mpos.values() for _, port_flag in m["ports"]), mpos
        primary_links = switchpair.namespace_links(PRIMARY)
        assert all(switchpair.is_up(primary_links[name]) for name in MPOS), primary_links
        for host in lab.hosts:
            switchpair.wait_for(
                lambda host=host: not switchpair.unanswered(host, targets[host.name], count=1),
                CONVERGE_S, f"{host.name} reaching every gateway and peer",
            )  # fmt: skip
            figures[f"{host.name}_reaches_all_s"] = time.monotonic() - cut_at  # one by one
            # Converged: no loss at all through the primary.
            assert switchpair.unanswered(host, targets[host.name], count=5) == [], host.name
    finally:
        healed_at = time.monotonic()
        labctl.apply_fault(["ipl"], active=False)
    switchpair.wait_whole(HEAL_S)
    figures["whole_after_heal_s"] = time.monotonic() - healed_at
    switchpair.wait_bonds(lab.hosts, BOTH, HEAL_S, healed_at, "both_after_heal", figures)
    for switch in (PRIMARY, STANDBY):
        mlag, mpos = switchpair.mlag_and_mpos(switch)
        assert mlag["oper"] == "Up" and mlag["active_full"] == len(MPOS), (switch, mlag)
        assert {m["flag"] for m in mpos.values()} == {"U"}, (switch, mpos)
        assert all(flag == "P" for m in mpos.values() for _, flag in m["ports"]), (switch, mpos)
        links = switchpair.namespace_links(switch)
        assert all(switchpair.is_up(links[name]) for name in MPOS), (switch, links)
    print("IPL cut and heal: " + ", ".join(f"{k} {v:.1f}" for k, v in figures.items()))
