"""A short smoke run of playbooks/experiments.yml on the deployed lab (part of CI).

Two experiments with tiny settings (one message size, one pair, a 16 MiB rcat file,
1 s tool runs): rcat (RDMA and TCP, double and single buffered) and smc (between the
hosts and on one host). The report's three files are written; every table it has
carries figures (only a link rate may be missing, named), and the smc rows the
connection's mode or the kernel's fallback reason. The run starts and collects its own
servers and leaves none behind; its scratch directory on the client (rcat's input
file) is removed afterwards and checked gone.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.system.deployment import Deployment

pytestmark = [pytest.mark.lab, pytest.mark.timeout(3600)]

SETTINGS = {
    "sizes": [65536],
    "pairs": [1],
    "compute": [False],
    "mib_per_pair": 1,
    "duration": 1,
    "rcat_mib": [16],
    "latency_iterations": 20,
}
SMC_MODES = {"SMC-R", "SMC-D", "TCP (fallback)"}
WORK_DIR = "/opt/cxfab/workloads/experiments"  # the role's default rdma_experiments_work_dir
TOOLS = "pingpong|rcat|ib_write_bw|ib_read_bw|ib_write_lat|ib_read_lat|qperf|iperf3"


def _has_work_dir(host) -> bool:
    return host.run(f"test -e {WORK_DIR} && echo yes || true").strip() == "yes"


@pytest.fixture(scope="module")
def smoke(deployed, lab, tmp_path_factory):
    reports = tmp_path_factory.mktemp("experiments")
    created = [host for host in lab.hosts if not _has_work_dir(host)]
    started = time.monotonic()
    try:
        run = Deployment().play(
            "experiments.yml",
            "--tags",
            "rcat,smc",
            "-e",
            json.dumps(
                {
                    "rdma_experiments_settings": SETTINGS,
                    "rdma_experiments_reports_dir": str(reports),
                }
            ),
        )
        print(f"experiments.yml --tags rcat,smc: {time.monotonic() - started:.0f} s")
        assert run.returncode == 0, run.tail()
        (stamp,) = reports.iterdir()
        yield stamp, run, lab
    finally:
        for host in created:
            host.run(f"rm -rf {WORK_DIR}")
    assert [h.name for h in created if _has_work_dir(h)] == []


def test_the_report_files_are_written(smoke):
    stamp, _, _ = smoke
    for name in ("report.json", "report.md", "report.html"):
        assert (stamp / name).stat().st_size > 0, name
    assert "<svg" in (stamp / "report.html").read_text()
    # The runs were pinned: both hosts' NIC-local cores were read (the lab's NIC sits on
    # node 1 of two).
    cores = json.loads((stamp / "report.json").read_text())["meta"]["cores"]
    for side in ("server", "client"):
        assert cores[side]["local"] and cores[side]["local"] != cores[side]["online"], cores


def test_every_table_has_figures_and_names_what_has_none(smoke):
    stamp, _, _ = smoke
    report = json.loads((stamp / "report.json").read_text())
    assert [t["id"] for t in report["tables"]] == ["rcat", "smc"]
    rcat, smc = report["tables"]
    by = {(r["transport"], r["size_bytes"]): r for r in rcat["rows"]}
    for transport in ("rdma", "tcp"):
        row = by[(transport, 16 << 20)]
        assert row["double_buffered"] > 0 and row["single_buffered"] > 0, (row, rcat["errors"])
        assert row["vs_memcpy"] > 0
    # Only the link rate may be missing (a virtual NIC without one: the run says so).
    assert all("-link_speed: link speed unknown" in e for e in rcat["errors"]), rcat["errors"]
    assert all(r["ours"] > 0 for r in smc["rows"]), (smc["rows"], smc["errors"])
    assert smc["errors"] == []


def test_the_smc_rows_say_how_the_connection_ran(smoke):
    stamp, _, _ = smoke
    smc = next(
        t for t in json.loads((stamp / "report.json").read_text())["tables"] if t["id"] == "smc"
    )
    for row in smc["rows"][:2]:  # between the hosts, and on one host
        assert row["mode"] in SMC_MODES, row
        if row["mode"] == "TCP (fallback)":
            assert row["fallback_reason"] not in (None, "0x00000000") and row["fallback_text"], row
    assert "CONFIG_SMC_LO" in smc["note"]
    print("smc rows:", json.dumps(smc["rows"]))


def test_no_server_is_left_running(smoke):
    _, _, lab = smoke
    for host in lab.hosts:
        # Process names (ps comm), so the shell running the check never matches itself.
        left = host.run(f"ps -eo pid=,comm= | grep -Ew '{TOOLS}' || true")
        assert left.strip() == "", f"{host.name}: {left}"
