"""Every playbook at -vvvv, success and failure paths, keeps the switch password out.

One emulated Onyx pair, started with the canary as its login password, serves the
switch plays: they really log in, deploy, re-run, fail on a line the switch refuses
(and revert), and fail on a wrong password. drill.yml runs against the pair alone
(`--limit localhost,switches`): it logs in, shuts the MPOs and brings them back, and
fails on a wrong password. The hosts sit at TEST-NET addresses, so every host play
takes its unreachable path (drill.yml too, past its confirmation gate). Then
stdout/stderr of every run, the
build dirs, the reports, the repo's build/ backups/ reports/, the switch snapshots,
the facts a fact cache kept of the drill run and the emulator's logs are grepped for
both passwords.

The snapshots are the switches' running-configs, deliberately unredacted (0600,
outside git): on a real switch they carry hashed user passwords; the CLI login
password must not be in them, and this test proves it is not.
"""

from __future__ import annotations

import json
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
    "nic_runtime.yml",
]
# Run above with the pair.
SWITCH_PLAYBOOKS = ["switches.yml"]
# Only ever imported, after validate.yml: validate.yml by every playbook (it touches no
# device), host_state.yml (the one-call host reading) by site.yml and the NIC stages,
# nic_pending.yml as site.yml's last stage (alone it stops at once, naming validate.yml).
IMPORTED_FIRST = ["validate.yml", "host_state.yml", "nic_pending.yml"]
# A task list verify.yml imports twice (import_tasks), not a playbook.
TASK_FILES = ["verify_health.yml"]
# drill.yml past its confirmation gate, with short waits. With every host unreachable
# Ansible ends the run at the pings, before the switch play; the switch play is run
# on its own with DRILL_SWITCHES_ONLY.
PLAYBOOK_EXTRA = {
    "drill.yml": [
        "-e", "cxfab_drill_confirm=true",
        "-e", "cxfab_drill_settle_seconds=1",
        "-e", "cxfab_drill_down_seconds=1",
    ],
}  # fmt: skip
DRILL_SWITCHES_ONLY = [*PLAYBOOK_EXTRA["drill.yml"], "--limit", "localhost,switches"]
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


def _fact_cache(directory: Path) -> dict:
    """Environment of a run whose facts persist as JSON files in `directory`, as a site's
    fact cache (or AWX's) would keep them: the facts of the run are grepped there."""
    return {
        "ANSIBLE_CACHE_PLUGIN": "jsonfile",
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(directory),
        "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "3600",
    }


def _cached_facts(directory: Path, host: str) -> dict:
    """One host's facts in a jsonfile cache (ansible-core 2.19 names the file with a
    version prefix and nests the facts as a JSON string under `__payload__`)."""
    (path,) = directory.glob(f"*{host}")
    data = json.loads(path.read_text(encoding="utf-8"))
    return json.loads(data["__payload__"]) if "__payload__" in data else data


def _trust_switch_keys(inventory: Path, known_hosts: Path) -> None:
    """The operator's step: the emulated switches' keys in the file the inventory names."""
    path = inventory / "group_vars" / "switches" / "ssh.yml"
    path.write_text(f"cxfab_switch_known_hosts: {known_hosts}\n", encoding="utf-8")


def _run(
    playbook: str, inventory: Path, out: Path, *extra: str, env: dict | None = None
) -> canary.Run:
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
        env=env,
        timeout=400,
    )


def _executed(log: Path) -> list[str]:
    """The MPO lines the emulated switch's log says it executed."""
    if not log.exists():
        return []
    marker = "Executing command: "
    return [
        line.split(marker, 1)[1]
        for line in log.read_text(encoding="utf-8").splitlines()
        if marker in line and "mlag-port-channel" in line and "shutdown" in line
    ]


def test_every_playbook_is_run_here():
    """A playbook added to playbooks/ without a canary run here fails this test."""
    found = sorted(path.name for path in (canary.REPO_ROOT / "playbooks").glob("*.yml"))
    assert found == sorted(HOST_PLAYBOOKS + SWITCH_PLAYBOOKS + IMPORTED_FIRST + TASK_FILES)


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

        # The drill against the pair alone: the first peer's MPOs shut, then back.
        before = _executed(tmp_path / "emulator" / "lab-sw-a.log")
        other_before = _executed(tmp_path / "emulator" / "lab-sw-b.log")
        facts = tmp_path / "facts"
        drilled = _run(
            "drill.yml", inventory, tmp_path, *DRILL_SWITCHES_ONLY, env=_fact_cache(facts)
        )
        runs.append(drilled)
        assert drilled.returncode == 0, drilled.stdout[-3000:]
        assert pair.logins("lab-sw-a") == logins + 2, "one login to shut, one to bring back"
        executed = _executed(tmp_path / "emulator" / "lab-sw-a.log")[len(before) :]
        mpos = [1, 2]  # the example pair's MPOs
        assert executed == [
            *(f"interface mlag-port-channel {mpo} shutdown" for mpo in mpos),
            *(f"interface mlag-port-channel {mpo} no shutdown" for mpo in mpos),
        ], executed
        other = _executed(tmp_path / "emulator" / "lab-sw-b.log")
        assert other == other_before, "the other peer is left alone"
        drill_refused = _run("drill.yml", wrong_inventory, tmp_path, *DRILL_SWITCHES_ONLY)
        runs.append(drill_refused)
        assert drill_refused.returncode != 0
        assert "Authentication" in drill_refused.stdout, drill_refused.stdout[-3000:]
        assert pair.logins("lab-sw-a") == logins + 2

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

    # The facts the drill run kept (the validated fabric among them) hold no credentials:
    # read back, so the grep below is not passing on an empty cache.
    cached = _cached_facts(tmp_path / "facts", "localhost")
    assert [pair["credentials"] for pair in cached["cxfab_fabric"]["switch_pairs"]] == [{}]
    assert "sw-a" in cached["cxfab_structured"]

    snapshots = sorted((tmp_path / "snapshots").rglob("*.cfg"))
    assert len(snapshots) >= 2 and all(s.stat().st_mode & 0o777 == 0o600 for s in snapshots)
    # Running-configs as read from the switch (they start with the "##" banner).
    assert all(s.read_text(encoding="utf-8").startswith("##") for s in snapshots)
    assert len(logs) == 2 and all(log.stat().st_size > 0 for log in logs)
    places = [
        tmp_path / "build",
        tmp_path / "reports",
        tmp_path / "snapshots",
        tmp_path / "facts",
        *logs,
        *REPO_DIRECTORIES,
    ]
    for secret in (password, wrong):
        canary.assert_not_leaked(secret, runs, places)
