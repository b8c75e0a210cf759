"""Where each free-text value of the fabric goes, for docs/data-model.md and the tests.

A free-text value is a string whose format leaves the user a choice of
characters (names, descriptions, interface names, paths, secrets, port and
PCI names, CPU lists). Each has a strict format in the schema, and the
templates quote what they paste; this table says which destinations a value
reaches, so a new destination is checked against the format it gets. A unit
test fails when a schema field of a free-text format is missing here.
"""

from __future__ import annotations

# Formats whose values are free text (as opposed to addresses, MACs, digests).
FREE_TEXT_FORMATS = (
    "name",
    "text",
    "part_pattern",
    "netdev",
    "inventory_hostname",
    "host",
    "path",
    "secret",
    "psid",
    "onyx_port",
    "pci_address",
    "cpulist",
    "nv_value",
)

# Documented key path -> the destinations its value reaches.
DESTINATIONS: dict[str, str] = {
    "<inventory_hostname>": (
        "file names on the controller (`build/structured/<host>.yml`, reports); "
        "directories on the workload peer (QoS measurement servers); task messages"
    ),
    "cxfab_fabric_name": "report (title, report.json)",
    "cxfab_supported_cables[].vendor": "report (compared with the cable EEPROM's vendor)",
    "cxfab_supported_cables[].part_number": "report (matched against the cable's part number)",
    "cxfab_supported_cables[].description": "report",
    "cxfab_switch_pairs[].name": "report; reference from `cxfab_host.bond.switch_pair`",
    "cxfab_switch_pairs[].model": "report",
    "cxfab_switch_pairs[].peers[].name": "file names under `build/` and `backups/`; report",
    "cxfab_switch_pairs[].peers[].mgmt_address": "SSH connection to the switch (netmiko host)",
    "cxfab_switch_pairs[].credentials.username": "SSH login to the switch",
    "cxfab_switch_pairs[].credentials.password": (
        "SSH login to the switch only: never a command line, file or output"
    ),
    "cxfab_switch_pairs[].mlag.domain": "Onyx CLI (`mlag-vip <domain> ip ...`); switch prompt",
    "cxfab_switch_pairs[].mlag.ipl.members.<peer>": "reference to a peer (`peers[].name`)",
    "cxfab_switch_pairs[].mlag.ipl.members.<peer>[]": "Onyx CLI (`interface ethernet <port>`)",
    "cxfab_switch_pairs[].mlag.ipl.addresses.<peer>": "reference to a peer (`peers[].name`)",
    "cxfab_switch_pairs[].mpos[].description": "Onyx CLI (`description`), quoted",
    "cxfab_switch_pairs[].mpos[].members.<peer>": "reference to a peer (`peers[].name`)",
    "cxfab_switch_pairs[].mpos[].members.<peer>[]": "Onyx CLI (`interface ethernet <port>`)",
    "cxfab_vlans[].name": "Onyx CLI (`vlan <id> name`), quoted",
    "cxfab_vlans[].svi_addresses.<peer>": "reference to a peer (`peers[].name`)",
    "cxfab_vlans[].gateway.vrrp.priorities.<peer>": "reference to a peer (`peers[].name`)",
    "cxfab_host.mgmt_interface": "host network module (compared, never changed)",
    "cxfab_host.nics[].name": "task names; report",
    "cxfab_host.nics[].pci": "mstflint/mstconfig `-d` argument; sysfs paths",
    "cxfab_host.nics[].ports[].netdev": (
        "systemd-networkd `.network` files (`Name=`); link-up hook and QoS/IRQ shell "
        "scripts; command arguments (ip, ethtool, mlnx_qos); report"
    ),
    "cxfab_host.nics[].ports[].peer": "cabling checks; report",
    "cxfab_host.nics[].ports[].peer_port": "cabling checks; report",
    "cxfab_host.nics[].firmware.psid": "compared with the adapter's PSID; report",
    "cxfab_host.nics[].firmware.image": (
        "controller path; copied to the host; mstflint `-i` / mlxfwmanager argument"
    ),
    "cxfab_host.nics[].nv_config.<PARAM>": (
        "mstconfig/mlxconfig `set PARAM=VALUE` argument (argv, no shell); compared with "
        "the query's Current and Next Boot; report"
    ),
    "cxfab_host.gpus[].name": "check ids and messages of the GPUDirect checks; report",
    "cxfab_host.gpus[].pci": "sysfs paths (`/sys/bus/pci/devices/<bdf>`) read by verify",
    "cxfab_host.gpus[].nic": "reference to an adapter (`nics[].name`)",
    "cxfab_host.bond.name": (
        "systemd-networkd `.netdev`/`.network` files (`Name=`); link-up hook and QoS/IRQ "
        "shell scripts; systemd unit arguments"
    ),
    "cxfab_host.bond.members[]": "systemd-networkd `.network` files; hook scripts",
    "cxfab_host.bond.switch_pair": "reference to a switch pair",
    "cxfab_host.irq_affinity.cpus": "IRQ affinity script (`/proc/irq/<n>/smp_affinity_list`)",
    "cxfab_host.rdma.devices[].name": "soft-RoCE systemd unit (`rdma link add <name>`)",
    "cxfab_host.rdma.devices[].netdev": "soft-RoCE systemd unit (`netdev <if>`)",
    "cxfab_workloads.thresholds.<threshold>": "report (a further relative threshold)",
    "cxfab_workloads.pairs[].name": "report; result file names",
    "cxfab_workloads.pairs[].client": "reference to an inventory host",
    "cxfab_workloads.pairs[].server": "reference to an inventory host",
}
