#!/usr/bin/python
"""Ansible module: bond, VLAN interfaces, MTUs, addresses and egress maps over netlink."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cxfab_host_network
short_description: Build the data bond and its VLAN interfaces over netlink (pyroute2)
description:
  - Reads the links over netlink, compares them with the C(network) section of
    the host's structured config and changes only what differs - bond (mode, miimon, LACP rate, hash
    policy), members, MTUs, VLAN interfaces with their egress-qos-map, IPv4
    addresses - then reads the links again; C(changed) comes from that before/after.
  - Refuses, before changing anything, an intent touching the management
    interface, the interface holding the address the Ansible connection came in
    on, or the interface routing back to the controller (and the devices under them).
  - IPoIB interfaces (the structured config's C(ipoib)) - finds each one from its
    adapter port through the RDMA device in sysfs (C(/sys/class/infiniband/<dev>/device/net/)),
    refuses a name that differs from the intent, writes the sysfs C(mode) then C(mtu)
    when they differ, reads them back (a difference fails the task) and manages their
    addresses over netlink like the other interfaces.
  - Writes the systemd-networkd files of the structured config (C(networkd)) so
    the same state comes back at boot, removes cxfab's files that are no longer
    wanted and reloads networkd when a file changed (where systemd runs).
  - With I(revert_seconds), before changing anything it records the links it can
    alter and cxfab's networkd files under I(rollback_dir) and arms a watchdog
    (a transient systemd timer, else a detached process) that restores them unless
    M(cxfab_host_network_confirm) confirms in time. A run with nothing to change
    arms nothing; a change that fails is restored at once and the task fails with
    C(reverted).
version_added: "0.1.0"
options:
  structured:
    description: The host's structured config (C(build/structured/<host>.yml)).
    type: dict
    required: true
  ssh_connection:
    description:
      - Value of C(SSH_CONNECTION) on the host (client ip, client port, server ip,
        server port). Empty - the module's environment, else that of the process
        that started it (sudo drops it).
    type: str
    default: ""
  protected_interfaces:
    description: More interfaces the module must never touch.
    type: list
    elements: str
    default: []
  purge_addresses:
    description: Remove IPv4 addresses of managed interfaces that the intent does not list.
    type: bool
    default: true
  persist:
    description: >-
      Write the systemd-networkd files (backend C(networkd)). With C(networkmanager)
      the profiles are how the network is applied: false is refused.
    type: bool
    default: true
  networkd_dir:
    description: Directory of the systemd-networkd files.
    type: path
    default: /etc/systemd/network
  revert_seconds:
    description: Arm a revert timer of this many seconds before a change (0 - none).
    type: int
    default: 0
  rollback_dir:
    description: Where the snapshot, the watchdog and its result live (root only).
    type: path
    default: /run/cxfab/network-rollback
  root:
    description: >-
      Prefix of the host's file system for the IPoIB files under C(/sys) and the host
      agent's files (tests point it at a copied tree).
    type: path
    default: /
  backend:
    description:
      - What persists the network and, for C(networkmanager), applies it. C(networkd)
        changes the links over netlink and writes the networkd files; cxfab's netplan
        file and drop-ins left by an earlier C(netplan) run are removed (netplan would
        render them ahead of the networkd files at boot).
      - C(networkmanager) writes cxfab's keyfiles (C(cxfab-<interface>.nmconnection),
        0600) to I(nm_keyfile_dir), deletes stale C(cxfab-*) profiles, has
        NetworkManager load and activate them (C(nmcli)) and reads the links back over
        netlink. Its revert timer is a NetworkManager checkpoint of the intended
        devices that exist (D-Bus C(CheckpointCreate) through C(busctl)), destroyed by
        M(cxfab_host_network_confirm); not confirmed in time, NetworkManager rolls back.
        An IPoIB interface gets a profile of type infiniband with its transport mode
        and MTU, which NetworkManager sets on activation; the module reads both back
        from sysfs and fails (and rolls back) where they differ.
      - C(netplan) changes the links over netlink like C(networkd), then writes cxfab's
        own netplan file (I(netplan_dir)/C(60-cxfab.yaml), 0600) and each VLAN's egress
        map as a drop-in of the netdev netplan generates
        (C(10-netplan-<vlan>.netdev.d/60-cxfab-egress-qos.conf) in I(networkd_dir)),
        removes cxfab's networkd files, and runs C(netplan generate) (then
        C(networkctl reload) where systemd runs). netplan's verdict on the file
        (C(netplan generate --root-dir) on a scratch root) is taken first; a refused
        file fails the task and changes nothing. Its revert timer is the networkd one
        (C(netplan try) refuses bonds with parameters); a revert restores the files and
        runs C(netplan generate) again.
      - C(auto) reads which daemon owns the host's network before anything changes
        (netplan files defining interfaces, C(systemctl is-active) of NetworkManager
        and systemd-networkd, the links each manages) and goes on as that backend; a
        host where the owner cannot be told apart, or whose owner's command (C(nmcli),
        C(netplan)) is not installed, fails with what was seen and changes nothing.
    type: str
    choices: [auto, networkd, networkmanager, netplan]
    default: networkd
  nm_keyfile_dir:
    description: NetworkManager's keyfile directory (backend C(networkmanager)).
    type: path
    default: /etc/NetworkManager/system-connections
  netplan_dir:
    description: Where cxfab's netplan file goes (backend C(netplan)).
    type: path
    default: /etc/netplan
author: cxfab
"""

EXAMPLES = r"""
- name: Build the data bond and VLANs
  cxfab_host_network:
    structured: "{{ hostvars['localhost'].cxfab_structured | cxfab_device(inventory_hostname) }}"
"""

RETURN = r"""
differs:
  description: >-
    The host's live state or networkd files differ from the intent (the same value as
    changed; it stays readable where a comparison run sets changed_when false).
  type: bool
  returned: always
actions:
  description: Changes applied (or, in check mode, that would be applied).
  type: list
  elements: str
  returned: always
protected:
  description: Interfaces never touched, with the reason.
  type: dict
  returned: always
links:
  description: Managed links after the run (kind, mtu, master, vlan, egress map, addresses).
  type: dict
  returned: always
intent:
  description: Desired bond, members and VLANs (the structured config's network section).
  type: dict
  returned: always
ipoib:
  description: >-
    Per IPoIB interface after the run - C(device) and C(ib_port) it was found on,
    C(mode) and C(mtu) as read back.
  type: dict
  returned: always
files:
  description: >-
    Boot files written or removed (or that would be) - systemd-networkd files, or with
    C(netplan) cxfab's netplan file and drop-ins (absolute paths).
  type: list
  elements: str
  returned: always
rollback:
  description: >-
    The revert timer - C(armed), and when armed its C(token), C(seconds),
    C(deadline) (epoch) and C(method) (systemd-run, detached process or
    networkmanager checkpoint, then with its C(checkpoint) object path).
  type: dict
  returned: always
backend:
  description: The backend that applied (C(networkmanager) or C(netplan); absent for networkd).
  type: str
  returned: when backend is networkmanager or netplan
steps:
  description: What was done through NetworkManager (profiles removed, written, activated).
  type: list
  elements: str
  returned: when backend is networkmanager
keyfiles:
  description: cxfab's keyfiles as read back from I(nm_keyfile_dir), in the comparable form.
  type: dict
  returned: when backend is networkmanager
agent:
  description: >-
    Host agent files written (or that would be): its C(vlan_egress) section holds each
    VLAN's whole egress map, set again by NetworkManager's dispatcher script whenever the
    VLAN comes up (NetworkManager 1.42/1.44 programs one entry of it).
  type: list
  elements: str
  returned: when backend is networkmanager
"""

from ansible.module_utils.cxfab.host.stages import serve  # noqa: E402
from ansible.module_utils.cxfab.host.stages.network import ARGUMENT_SPEC, run  # noqa: E402

if __name__ == "__main__":
    serve(ARGUMENT_SPEC, run)
