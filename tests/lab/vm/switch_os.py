"""Which emulated switch pair the lab runs: Onyx (default) or Cumulus Linux (NVUE).

`SWITCH_OS=cumulus python -m tests.lab.vm.lab up` (or `make lab-up SWITCH_OS=cumulus`)
starts tests/lab/nvue/pair.py instead of tests/lab/onyx/pair.py. Both take the same
verbs (start, stop, status, ctl kill|revive|cut-ipl|heal-ipl), so the rest of lab.py
does not know which runs. The choice made at `up` is kept in RUN_DIR/switch_os, so
later commands (`lab fail`, `lab down`) drive the pair that runs whatever their
environment says.

The lab's fabric intent is one (inventories/lab/group_vars/all/fabric.yml): its pair's
`platform` and IPL VLAN are templated from `lab_switch_os`, which `up` writes into
hosts.yml with what the NVUE pair's TLS needs (the certificates as a CA bundle and
their SHA-256 pins, by switch name).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.lab.onyx import lldp
from tests.lab.vm.topology import INVENTORY_DIR, ONYX_RUN_DIR, REPO_ROOT, RUN_DIR

CHOICES = ("onyx", "cumulus")
CHOICE_FILE = RUN_DIR / "switch_os"
PAIR_MODULES = {"onyx": "tests.lab.onyx.pair", "cumulus": "tests.lab.nvue.pair"}
PAIR_RUN_DIRS = {"onyx": ONYX_RUN_DIR, "cumulus": RUN_DIR / "nvue"}
TLS_CA_FILE = INVENTORY_DIR / "files" / "switches_tls_ca.pem"


def wanted() -> str:
    """The OS `up` starts: $SWITCH_OS, else onyx."""
    chosen = os.environ.get("SWITCH_OS", "").strip().lower() or "onyx"
    if chosen not in CHOICES:
        raise SystemExit(f"lab: SWITCH_OS must be one of {', '.join(CHOICES)}, not {chosen!r}")
    return chosen


def running() -> str:
    """The OS of the pair `up` started (kept in CHOICE_FILE), else the wanted one."""
    if CHOICE_FILE.exists():
        kept = CHOICE_FILE.read_text(encoding="utf-8").strip()
        if kept in CHOICES:
            return kept
    return wanted()


def remember(chosen: str) -> None:
    CHOICE_FILE.parent.mkdir(parents=True, exist_ok=True)
    CHOICE_FILE.write_text(chosen + "\n", encoding="utf-8")


def lldp_port_id():
    """How the running pair's namespaces advertise their ports over LLDP."""
    return lldp.cumulus_port_id if running() == "cumulus" else lldp.onyx_port_id


def pair_argv(python: str, action: str, chosen: str) -> list[str]:
    return [python, "-m", PAIR_MODULES[chosen], action, "--run-dir", str(PAIR_RUN_DIRS[chosen])]


def pair_exists(chosen: str) -> bool:
    return (REPO_ROOT / (PAIR_MODULES[chosen].replace(".", "/") + ".py")).exists()


def inventory_lines(chosen: str, switches: list[str]) -> tuple[list[str], list[str]]:
    """hosts.yml lines for `all: vars:` and for `switches: vars:` of the chosen OS.

    cumulus: the switches' certificates (each its own trust anchor, CA:TRUE) in one CA
    bundle and their SHA-256 pins, both as the NVUE pair wrote them at start."""
    all_vars = [f"        lab_switch_os: {chosen}"]
    if chosen != "cumulus":
        return all_vars, []
    run_dir = PAIR_RUN_DIRS[chosen]
    ready = {
        name: json.loads((run_dir / f"{name}.json").read_text(encoding="utf-8"))
        for name in switches
    }
    TLS_CA_FILE.parent.mkdir(parents=True, exist_ok=True)
    bundle = "".join(Path(info["cert"]).read_text(encoding="ascii") for info in ready.values())
    TLS_CA_FILE.write_text(bundle, encoding="ascii")
    switch_vars = [
        "        # The NVUE pair's certificates, written by `make lab-up` (switch_os.py).",
        f"        cxfab_switch_tls_ca: {TLS_CA_FILE}",
        "        cxfab_switch_tls_fingerprints:",
        *(f"          {name}: {info['fingerprint']}" for name, info in ready.items()),
    ]
    return all_vars, switch_vars
