"""The host network stage on the NetworkManager backend (host_network_backend: networkmanager).

Same contract as the networkd path in network.py - the management interface and the
connection's interfaces are refused before anything changes, check mode and the diff
come from the netlink reading, a second run with nothing to do changes nothing - but
NetworkManager owns the links: the stage writes cxfab's keyfiles, has NetworkManager
load and activate them (net/nmapply.py) and reads the links back over netlink; VLAN
egress maps NetworkManager left short are completed over netlink (net/nmegress.py).
The revert timer is a NetworkManager checkpoint of the existing intended devices
(net/nmcheckpoint.py through rollback.arm_checkpoint): not confirmed in time,
NetworkManager restores the profiles and links itself.

IPoIB: the interface's profile (type infiniband) carries its transport mode and MTU,
and NetworkManager sets both on the device when it activates the profile (the
`transport-mode` property was added "and set up properly on the device in
NMDeviceInfiniband", NetworkManager commit 3e74234e, 2011; a device that cannot take
connected mode fails with NM_DEVICE_STATE_REASON_INFINIBAND_MODE). The stage writes no
sysfs file itself: it reads mode and MTU back (net/ipoib.verify) after the activation,
and a difference fails the change and rolls the checkpoint back. No kernel here has an
InfiniBand link layer: the activation is proven with NetworkManager's part faked
(tests/unit/test_hostnet_nm_ipoib.py); a real NetworkManager loads the profile with its
mode and MTU (tests/integration/test_networkmanager_apply.py).
"""

from __future__ import annotations

import subprocess
import time

from ..net import agent, ipoib, nmapply, nmegress, rollback
from ..net.linkplan import describe, plan, simulate, stale_links
from ..net.netlink import apply as apply_links
from ..net.pyroute2_lean import load as load_pyroute2

try:
    _, NetlinkError = load_pyroute2()
except ImportError:  # pragma: no cover - network.py reports the missing library
    NetlinkError = OSError


class NotConverged(RuntimeError):
    """The links still differ from the intent after NetworkManager activated the profiles."""


def intended_interfaces(intent: dict) -> list[str]:
    names = [m["name"] for m in intent["members"]]
    if intent["bond"]:
        names.append(intent["bond"]["name"])
    names += [i["name"] for i in intent.get("ipoib") or []]
    return names + [v["name"] for v in intent["vlans"]]


def profiles_to_relink(intent: dict, actions: list[tuple]) -> list[str]:
    """The interfaces whose profiles are brought up again although they are active and
    unchanged: those whose live link differs from the intent (`actions`, netlink's and
    IPoIB's plan).

    A VLAN or IPoIB interface that drifted alone gets its own profile again: the bond and
    the other VLANs keep forwarding (before, every profile was, the bond's too, which
    took 22 s on a lab guest and bounced every VLAN for an address removed on one).
    A drift on the bond or a port re-activates every profile: the VLANs ride on the bond,
    and re-activating a bond profile alone is not documented to keep the VLAN
    connections on it up.
    """
    touched = {name for _verb, name, _args in actions}
    lower = {member["name"] for member in intent["members"]}
    if intent["bond"]:
        lower.add(intent["bond"]["name"])
    if touched & lower:
        return intended_interfaces(intent)
    return sorted(touched)


def run(
    module, ipr, intent, structured, links, actions, protected, view, read_links, ipoib_found=None
) -> dict:
    """Check, or apply through NetworkManager; the result dict of cxfab_host_network.

    `ipoib_found`: net/ipoib.resolve's reading of the intended IPoIB interfaces."""
    params = module.params
    if not params["persist"]:
        module.fail_json(
            msg="persist: false cannot be honoured with backend networkmanager: NetworkManager "
            "applies the network from cxfab's profiles, so they are always written",
            changed=False,
        )
    interfaces = intent.get("ipoib") or []
    found = ipoib_found or {}
    ipoib_before = {name: entry["state"] for name, entry in found.items()}
    # What NetworkManager's activation is to set: the diff and the actions show it.
    ipoib_actions = ipoib.plan(interfaces, ipoib_before)
    ipoib_after = ipoib.simulate(ipoib_before, ipoib_actions)
    directory = params["nm_keyfile_dir"]
    files = nmapply.render(structured)
    changes = nmapply.plan(directory, files)
    before = ipoib.with_states(view(intent, links), ipoib_before)
    timer = {"armed": False}
    steps: list[str] = []
    if module.check_mode or not (actions or changes or ipoib_actions):
        after = ipoib.with_states(view(intent, simulate(links, actions)), ipoib_after)
    else:
        runner = _runner(module)
        if params["revert_seconds"]:
            # The stale links too: NetworkManager's rollback brings back what it saved.
            stale = [name for name, _ in stale_links(intent, links)]
            wanted = [n for n in intended_interfaces(intent) + stale if n not in protected]
            try:
                timer = rollback.arm_checkpoint(
                    params["rollback_dir"], wanted, params["revert_seconds"], runner=runner
                )
            except (rollback.RollbackError, OSError) as exc:
                module.fail_json(msg=f"could not arm the revert timer, nothing changed: {exc}")
        try:
            relink = profiles_to_relink(intent, ipoib_actions + actions)
            nmapply.apply(runner, directory, files, relink=relink, done=steps)
            links = read_links(ipr)
            # NetworkManager 1.42/1.44 (and 1.46-1.50 before their backports) programs one
            # entry of each VLAN egress map (net/nmegress.py): the map is completed over
            # netlink, then the links are judged as always.
            links, completed = nmegress.complete(
                ipr, intent, links, params["purge_addresses"], read_links
            )
            steps += completed
            left = plan(intent, links, params["purge_addresses"])
            leftover = {(name, action) for name, action in stale_links(intent, links)}
            if left and all((name, verb) in leftover for verb, name, _ in left):
                # A VLAN or port no profile of cxfab's holds any more (e.g. made by
                # networkd before the host moved to NetworkManager): out over netlink.
                apply_links(ipr, left, intent)
                steps += [describe(a) for a in left]
                links = read_links(ipr)
                left = plan(intent, links, params["purge_addresses"])
            if left:
                raise NotConverged(
                    "links did not converge: " + "; ".join(describe(a) for a in left)
                )
            # NetworkManager set mode and MTU on activation; read back, never assumed.
            ipoib_after = ipoib.verify(params["root"], interfaces)
            after = ipoib.with_states(view(intent, links), ipoib_after)
        except (nmapply.NMApplyError, NetlinkError, OSError, RuntimeError) as exc:
            _fail_and_restore(module, exc, timer, ipoib_actions + actions, changes, steps)
    persisted = nmapply.read_back(directory)
    differs = before != after or bool(changes)
    agent_files = _install_agent(module, intent)
    return {
        "changed": differs or bool(agent_files),
        "differs": differs,
        "backend": "networkmanager",
        "actions": [describe(a) for a in ipoib_actions + actions],
        "steps": steps,
        "ipoib": ipoib.report(found, ipoib_after),
        "protected": protected,
        "links": after,
        "intent": intent,
        "files": changes,
        "agent": agent_files,
        "keyfiles": persisted,
        "rollback": timer,
        "diff": {"before": before, "after": after},
    }


def _install_agent(module, intent) -> list[str]:
    """The host agent with the VLANs' whole egress maps (net/nmegress.agent_section), so
    that NetworkManager's dispatcher completes each map whenever the VLAN comes up again
    (a reboot). The agent files written, or that would be in check mode."""
    try:
        return agent.install(
            "vlan_egress",
            nmegress.agent_section(intent, module.params["root"]),
            agent.sources(),
            module.params["root"],
            apply=not module.check_mode,
        )
    except (OSError, ValueError) as exc:
        module.fail_json(
            msg=f"could not install the host agent that keeps the VLAN egress maps: {exc} "
            "(the network change stays under its revert timer, unconfirmed)",
            changed=True,
        )


def _runner(module):
    def run(argv, **_kwargs):
        rc, out, err = module.run_command(argv)
        return subprocess.CompletedProcess(argv, rc, out, err)

    return run


def _fail_and_restore(module, exc, timer, actions, changes, steps):
    """A change that failed half way: NetworkManager rolls the checkpoint back now."""
    details = {
        "actions": [describe(a) for a in actions],
        "files": changes,
        "steps": steps,
        "changed": True,
    }
    if not timer.get("armed"):
        module.fail_json(msg=str(exc), **details)
    directory = module.params["rollback_dir"]
    reason = str(exc)
    if time.time() >= timer["deadline"]:
        # NetworkManager's timeout is the revert timer: a change slower than the timer
        # is rolled back under it (e.g. "The base network connection was interrupted").
        reason = (
            f"not confirmed within {timer['seconds']} s: the change took longer than "
            f"host_network_revert_seconds ({exc})"
        )
    result = rollback.fire(directory, timer["token"], reason)
    if result is None:  # confirmed or replaced meanwhile: report what the record says
        result = rollback.disarm(directory, timer["token"])
    module.fail_json(
        msg=rollback.describe_result(result), reverted=True, rollback=result, **details
    )
