"""The pair transaction on emulated NVUE switches, in-process or as its own process.

The structured configs are the lab's golden ones made cumulus (tests/unit/nvue_helpers),
pointed at the emulators' ports; a named edit changes the intent between runs.

    python -m tests.integration.nvue_lab '<json: switches, edit, wait, confirm, snapshot_dir>'

runs one deploy as a controller would (the test that kills the controller before
the confirm runs it so). The password comes in NVUE_LAB_PASSWORD.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "module_utils"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from cxfab.switch import transaction  # noqa: E402
from cxfab.switch.nvue.driver import NvueDriver  # noqa: E402
from cxfab.switch.nvue.transport import Trust  # noqa: E402

from tests.lab.nvue.fixtures import PASSWORD, USERNAME, nvue_pair  # noqa: E402
from tests.unit.nvue_helpers import cumulus  # noqa: E402


def _mtu(structured: dict, mtu: int) -> None:
    for svi in structured["vlan_interfaces"]:
        if svi["id"] == 10:
            svi["mtu"] = mtu


def _without_vlan30(structured: dict) -> None:
    structured["vlan_interfaces"] = [v for v in structured["vlan_interfaces"] if v["id"] != 30]
    structured["vlans"] = [v for v in structured["vlans"] if v["id"] != 30]


def _vrrp_gateways(structured: dict) -> None:
    """Every VRR gateway of the pair made VRRP (VRID = VLAN, VLAN 1 keeps VRID 1); the
    masters spread over the peers by VLAN order, as the Onyx intent does (110 / 100)."""
    first = structured["switch"] == "lab-sw-a"
    structured["vrrp"] = [
        {"vlan": g["vlan"], "vrid": g["vlan"], "virtual_ip": g["virtual_ip"],
         "priority": 110 if (n % 2 == 0) == first else 100, "preempt": True,
         "advertisement_interval": 1}
        for n, g in enumerate(structured["anycast_gateways"])
    ]  # fmt: skip
    structured["anycast_gateways"] = []


EDITS = {
    None: lambda s: None,
    "vrrp-gateways": _vrrp_gateways,
    "vlan10-mtu-1500": lambda s: _mtu(s, 1500),
    "vlan30-removed": _without_vlan30,  # still in scope: its bridge VLAN and SVI unset
}


def structured_for(name: str, port: int, edit: str | None) -> dict:
    structured = cumulus("lab", name)
    structured["management"] = {"address": "127.0.0.1", "port": port}
    EDITS[edit](structured)
    return structured


@contextmanager
def running_pair(base: Path, peered: bool = False):
    """Two emulated NVUE switches under `base`, as the deploy tests drive them:
    {"pair": the emulators, "switches": {name: {port, cert}}, "snapshots": a directory};
    `peered`: they exchange the MLAG keepalive (fixtures.nvue_pair)."""
    with nvue_pair(base / "run", peered=peered) as pair:
        switches = {n: {"port": s.port, "cert": s.cert} for n, s in pair.items()}
        yield {"pair": pair, "switches": switches, "snapshots": str(base / "snapshots")}


def deploy(switches: dict, *, edit: str | None = None, check_mode: bool = False, diff=False,
           wait: float = 5, confirm: int = 30, snapshot_dir: str, order=None,
           trust=None, check_host_key: bool = True) -> tuple[dict, dict, list[str]]:  # fmt: skip
    """(result, drivers, warnings) of one deploy_pair over `switches` {name: {port, cert}};
    `trust` {name: Trust} replaces the default (each switch's own certificate as its CA)."""
    drivers = {
        name: NvueDriver(
            name,
            structured_for(name, switch["port"], edit),
            (trust or {}).get(name) or Trust(ca_file=switch["cert"]),
            confirm_seconds=confirm,
            poll=0.05,
        )
        for name, switch in switches.items()
    }
    options = transaction.Options(
        sections=NvueDriver.SECTIONS, check_mode=check_mode, diff=diff, wait=wait, interval=0.2,
        snapshot_dir=snapshot_dir, secrets=[PASSWORD],
    )  # fmt: skip
    login = {"username": USERNAME, "password": os.environ.get("NVUE_LAB_PASSWORD", PASSWORD),
             "known_hosts": None, "check_host_key": check_host_key}  # fmt: skip
    warnings: list[str] = []
    result = transaction.deploy_pair(
        drivers, order or list(switches), lambda name: "", login, options, warnings.append
    )
    return result, drivers, warnings


def main(argv: list[str]) -> int:
    args = json.loads(argv[1])
    result, _, _ = deploy(args["switches"], edit=args.get("edit"), wait=args["wait"],
                          confirm=args["confirm"], snapshot_dir=args["snapshot_dir"])  # fmt: skip
    print(json.dumps({"changed": result["changed"], "msg": result.get("msg")}))
    return 1 if "msg" in result else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
