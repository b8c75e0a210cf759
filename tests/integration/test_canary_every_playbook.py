"""Every playbook at -vvvv, success and failure paths, keeps the switch password out.

One emulated Onyx pair, started with the canary as its login password, serves the
switch plays: they really log in, deploy, re-run, fail on a line the switch refuses
(and revert), and fail on a wrong password. The hosts sit at TEST-NET addresses, so
every host play takes its unreachable path (drill.yml too, past its confirmation
gate). Then stdout/stderr of every run, the
build dirs, the reports, the repo's build/ backups/ reports/, the switch snapshots
and the emulator's logs are grepped for both passwords.

The snapshots are the switches' running-configs, deliberately unredacted (0600,
outside git): on a real switch they carry hashed user passwords; the CLI login
password must not be in them, and this test proves it is not.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.tools import canary

pytestmark = [pytest.mark.integration, pytest.mark.slow]
fixtures = pytest.importorskip("tests.lab.onyx.fixtures")

REPO_DIRECTORIES = [canary.REPO_ROOT / name for name in ("build", "backups", "reports")]
HOST_PLAYBOOKS = [
    "verify.yml",
    "host_network.yml",
    "host_qos.yml",
    "irq_affinity.yml",
    "nic_firmware.yml",
    "nic_link_type.yml",
    "rdma_stack.yml",
    "rdma_workloads.yml",
    "experiments.yml",
    "site.yml",
    "drill.yml",
]
# drill.yml past its confirmation gate, with short waits. With every host unreachable
# Ansible ends the run at the pings, before the switch play: its credentials are read
# and validated (that output is grepped) but the switch is not logged in to here.
PLAYBOOK_EXTRA = {
    "drill.yml": [
        "-e", "cxfab_drill_confirm=true",
        "-e", "cxfab_drill_settle_seconds=1",
        "-e", "cxfab_drill_down_seconds=1",
    ],
}  # fmt: skip
# Bounded waits: the unreachable hosts must not hold the test for minutes.
FAST = [
    "-e",
    "cxfab_switch_health_wait=15",
    "-e",
    "host_network_revert_seconds=5",
    "-e",
    "host_network_revert_margin=1",
]


def _point_at(pair) -> list[dict]:
    """Inventory patches: the example pair's peers become the emulated switches."""
    return [
        {"path": f"cxfab_switch_pairs[0].peers[{index}].{key}", "value": value}
        for index, name in enumerate(pair.names)
        for key, value in (("mgmt_address", "127.0.0.1"), ("mgmt_port", pair[name].port))
    ]


def _trust_switch_keys(inventory: Path, known_hosts: Path) -> None:
    """The operator's step: the emulated switches' keys in the file the inventory names."""
    path = inventory / "group_vars" / "switches" / "ssh.yml"
    path.write_text(f"cxfab_switch_known_hosts: {known_hosts}\n", encoding="utf-8")


def _run(playbook: str, inventory: Path, out: Path, *extra: str) -> canary.Run:
    """One run with its own build and reports directories under `out`."""
    name = playbook.removesuffix(".yml")
    return canary.run_playbook(
        playbook,
        inventory,
        "-vvvv",
        "-e",
        f"cxfab_build_dir={out / 'build' / name}",
        "-e",
        f"cxfab_reports_dir={out / 'reports' / name}",
        "-e",
        f"cxfab_switch_snapshot_dir={out / 'snapshots'}",
        *FAST,
        *extra,
        timeout=400,
    )


def test_every_playbook_and_its_failure_paths_keep_the_password_out(tmp_path):
    password = canary.new_password()
    wrong = canary.new_password()
    runs: list[canary.Run] = []
    with fixtures.onyx_pair(tmp_path / "emulator", password=password) as pair:
        inventory = canary.inventory(tmp_path / "good", password, _point_at(pair))
        wrong_inventory = canary.inventory(tmp_path / "wrong", wrong, _point_at(pair))
        known_hosts = pair.write_known_hosts(tmp_path / "switches_known_hosts")
        for directory in (inventory, wrong_inventory):
            _trust_switch_keys(directory, known_hosts)

        # A line the switch refuses: the peer is reverted, the run fails.
        pair.ctl("lab-sw-a", "reject-line", "vlan 4000")
        refused = _run("switches.yml", inventory, tmp_path)
        runs.append(refused)
        assert refused.returncode != 0, refused.stdout[-3000:]
        pair.ctl("lab-sw-a", "accept-lines")

        deployed = _run("switches.yml", inventory, tmp_path)
        runs.append(deployed)
        assert deployed.returncode == 0, deployed.stdout[-3000:]
        checked = _run("switches.yml", inventory, tmp_path, "--check", "--diff")
        runs.append(checked)
        assert checked.returncode == 0, checked.stdout[-3000:]
        logins = pair.logins("lab-sw-a")
        assert logins >= 3, "the switch plays did not log in"

        # The wrong password: refused by the switch, the run fails, no login counted.
        refused_login = _run("switches.yml", wrong_inventory, tmp_path)
        runs.append(refused_login)
        assert refused_login.returncode != 0
        assert pair.logins("lab-sw-a") == logins

        # Every host playbook (and site.yml) against unreachable hosts, a few at a time.
        with ThreadPoolExecutor(max_workers=3) as pool:
            host_runs = list(
                pool.map(
                    lambda playbook: _run(
                        playbook, inventory, tmp_path, *PLAYBOOK_EXTRA.get(playbook, [])
                    ),
                    HOST_PLAYBOOKS,
                )
            )
        runs.extend(host_runs)
        for playbook, run in zip(HOST_PLAYBOOKS, host_runs, strict=True):
            assert run.returncode != 0, f"{playbook} passed against unreachable hosts"
            assert "UNREACHABLE!" in run.stdout, f"{playbook}: {run.stdout[-2000:]}"
        logs = sorted((tmp_path / "emulator").glob("*.log"))

    snapshots = sorted((tmp_path / "snapshots").rglob("*.cfg"))
    assert len(snapshots) >= 2 and all(s.stat().st_mode & 0o777 == 0o600 for s in snapshots)
    # Running-configs as read from the switch (they start with the "##" banner).
    assert all(s.read_text(encoding="utf-8").startswith("##") for s in snapshots)
    assert len(logs) == 2 and all(log.stat().st_size > 0 for log in logs)
    places = [
        tmp_path / "build",
        tmp_path / "reports",
        tmp_path / "snapshots",
        *logs,
        *REPO_DIRECTORIES,
    ]
    for secret in (password, wrong):
        canary.assert_not_leaked(secret, runs, places)
