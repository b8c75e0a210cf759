"""The report writer: derived summary, validation, secret scrubbing, files on disk."""

import json
from pathlib import Path

import pytest
from cxfab.verify.report import (
    ALWAYS_LISTED,
    CATEGORIES,
    CATEGORY_OF_PREFIX,
    ReportError,
    build_report,
    category_of,
    diff_reports,
    md_cell,
    problems,
    write_report,
)

CHECKS = [
    {
        "id": "mlag.oper",
        "target": "sw-a",
        "category": "switch",
        "status": "pass",
        "expected": "Up",
        "observed": "Up",
        "message": "",
    },
    {
        "id": "fw.version",
        "target": "h1",
        "category": "host",
        "status": "fail",
        "expected": "12.28.1002",
        "observed": "12.23.1020",
        "message": "pending activation",
    },
    {
        "id": "qos.vlan30",
        "target": "h1",
        "category": "qos",
        "status": "skip",
        "expected": "",
        "observed": "",
        "message": "no iperf3",
    },
]


def test_summary_is_counted_from_the_checks():
    report = build_report(CHECKS)
    assert report["summary"] == {
        "passed": 1,
        "warned": 0,
        "failed": 1,
        "skipped": 1,
        "waived": 0,
        "total": 3,
    }


def test_unknown_status_is_rejected_with_its_index():
    bad = [*CHECKS[:1], {**CHECKS[1], "status": "ok"}]
    with pytest.raises(ReportError, match=r"checks\[1\]\.status"):
        build_report(bad)


def test_duplicate_check_on_one_target_is_rejected():
    with pytest.raises(ReportError, match="duplicate"):
        build_report([CHECKS[0], dict(CHECKS[0])])


def test_secrets_never_reach_the_report(tmp_path):
    leaky = [{**CHECKS[0], "message": "login admin/s3cr3t-pw failed"}]
    report = build_report(leaky, secrets=["s3cr3t-pw"])
    out = write_report(report, tmp_path, stamp="t1")
    for name in ("report.json", "report.md", "report.html"):
        text = (out / name).read_text()
        assert "s3cr3t-pw" not in text
        assert "********" in text


def test_files_and_latest_are_written_with_plots(tmp_path):
    bandwidth = [
        {"transport": t, "size_bytes": s, "bits_per_second": s * k}
        for t, k in (("tcp", 10), ("rdma", 30))
        for s in (4096, 65536, 1048576)
    ]
    qos = [{"target": "h1", "vlan": 10, "limit_mbps": 100, "measured_mbps": 97.0}]
    out = write_report(build_report(CHECKS, bandwidth=bandwidth, qos=qos), tmp_path, stamp="t2")
    data = json.loads((tmp_path / "latest" / "report.json").read_text())
    assert data["summary"]["failed"] == 1
    assert (out / "bandwidth.png").read_bytes()[:4] == b"\x89PNG"
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 2
    md = (out / "report.md").read_text()
    # Failures come first so an operator sees them without scrolling.
    assert md.index("fw.version") < md.index("mlag.oper")


def test_latest_is_replaced_not_merged(tmp_path):
    write_report(build_report(CHECKS), tmp_path, stamp="a")
    (tmp_path / "latest" / "stale.txt").write_text("old")
    write_report(build_report(CHECKS[:1]), tmp_path, stamp="b")
    assert not (tmp_path / "latest" / "stale.txt").exists()
    assert json.loads((tmp_path / "latest" / "report.json").read_text())["summary"]["total"] == 1


def test_verify_sections_follow_the_tags():
    from cxfab.verify.report import sections_run

    everything = ["switches", "hosts", "health", "dataplane", "qos", "perf"]
    assert sections_run(["all"], []) == everything
    assert sections_run(["verify_hosts", "always"], []) == ["hosts", "health", "dataplane"]
    assert sections_run(["verify_hosts"], ["verify_dataplane"]) == ["hosts", "health"]
    assert sections_run(["verify_hosts"], ["verify_health", "verify_dataplane"]) == ["hosts"]
    assert sections_run(["verify_dataplane"], []) == ["dataplane"]
    assert sections_run(["verify_health"], []) == ["health"]
    assert sections_run(["all"], ["verify_perf"]) == everything[:-1]
    assert sections_run([], ["verify_qos", "verify_perf"]) == everything[:-2]
    # The cabling alone; within a host run it is the host section's.
    assert sections_run(["verify_cabling"], []) == ["cabling"]
    assert sections_run(["verify_hosts", "verify_cabling"], []) == ["hosts", "health", "dataplane"]
    assert sections_run(["verify_cabling", "verify_qos"], []) == ["cabling", "qos"]


# ---------------------------------------------------------------- the report a person reads first

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "report"


def recorded(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


@pytest.mark.parametrize(
    ("check_id", "category"),
    [
        ("mlag.oper", "switch"),
        ("mlag_vip.nodes", "switch"),
        ("config.saved", "switch"),
        ("firmware.cx4.version", "firmware"),
        ("nvconfig.cx4.SRIOV_EN", "firmware"),
        ("link_type.cx4.p1", "firmware"),
        ("link.ens4.diag", "link/cable"),
        ("cable.ens4.supported", "link/cable"),
        ("flap.ens4", "link/cable"),
        ("counters.ens4", "link/cable"),
        ("pcie.cx4.link", "PCIe"),
        ("temp.cx4", "PCIe"),
        ("qos.vlan10.throughput", "QoS"),
        ("irq.ens4", "IRQ"),
        ("rdma.rxe0.state", "RDMA"),
        ("perf.link_fraction", "performance"),
        ("pfc.ens4.priority3", "lossless"),
        ("mtu.bond0", "network"),
        ("something.new", "other"),
    ],
)
def test_category_comes_from_the_id_prefix(check_id, category):
    assert category_of(check_id) == category


def test_every_prefix_maps_to_a_listed_category():
    assert set(CATEGORY_OF_PREFIX.values()) <= set(CATEGORIES)
    assert ALWAYS_LISTED == (
        "switch",
        "firmware",
        "link/cable",
        "PCIe",
        "QoS",
        "IRQ",
        "RDMA",
        "performance",
        "lossless",
    )


def test_summary_per_category_counts_and_lists_what_was_not_verified():
    report = build_report(recorded("report.json")["checks"])
    rows = {row["category"]: row for row in report["categories"]}
    assert list(rows)[:9] == list(ALWAYS_LISTED)
    assert rows["link/cable"] == {
        "category": "link/cable",
        "pass": 6,
        "warn": 1,
        "fail": 2,
        "skip": 0,
        "waived": 0,
        "total": 9,
    }
    assert (rows["PCIe"]["fail"], rows["PCIe"]["skip"]) == (1, 1)
    assert rows["lossless"]["total"] == 0  # listed, with nothing verified
    assert "other" not in rows  # every recorded id has a category
    assert report["summary"]["warned"] == 1


def test_problems_are_failures_then_warnings_in_category_order():
    found = problems(build_report(recorded("report.json")["checks"])["checks"])
    assert [(c["status"], c["id"]) for c in found] == [
        ("fail", "flap.cxa0"),
        ("fail", "link.cxb0.diag"),
        ("fail", "pcie.cx4.link"),
        ("warn", "cable.cxb0.supported"),
    ]


def test_diff_names_what_changed_state_since_the_previous_report():
    current = build_report(recorded("report.json")["checks"], meta={"fabric": "lab"})
    diff = diff_reports(recorded("previous.json"), current)
    assert diff["previous"] == "2026-11-22T18:02:11+00:00"
    assert [(e["id"], e["before"], e["after"]) for e in diff["changed"]] == [
        ("flap.cxa0", "pass", "fail"),
        ("link.cxb0.diag", "pass", "fail"),
        ("pcie.cx4.link", "pass", "fail"),
    ]
    assert [e["id"] for e in diff["new"]] == ["cable.cxb0.supported"]
    assert [(e["id"], e["before"]) for e in diff["gone"]] == [("perf.tcp_vs_iperf3", "pass")]
    other_fabric = diff_reports(recorded("previous.json"), build_report([], meta={"fabric": "x"}))
    assert "not compared" in other_fabric["note"] and not other_fabric["changed"]
    assert diff_reports(None, current)["note"] == "no previous report"


def _sections_in_order(text: str, headings: list[str]) -> list[int]:
    return [text.index(heading) for heading in headings]


def test_example_report_reads_summary_failures_diff_plots_table(tmp_path):
    example = recorded("report.json")
    previous = recorded("previous.json")
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "report.json").write_text(json.dumps(previous))
    report = build_report(
        example["checks"],
        bandwidth=example["performance"]["bandwidth"],
        qos=example["performance"]["qos"],
        meta=example["meta"],
    )
    out = write_report(report, tmp_path, stamp="example")
    md = (out / "report.md").read_text()
    headings = [
        "## Summary by category",
        "## Failures and warnings",
        "## Changes since the previous report",
        "## Bandwidth vs message size",
        "## All checks",
    ]
    positions = _sections_in_order(md, headings)
    assert positions == sorted(positions)
    assert "| link/cable | 6 | 1 | **2** | 0 |" in md
    assert "| lossless (not verified in this run) | - | - | - | - |" in md
    assert (
        "| **FAIL** | link/cable | lab-host1 | link.cxb0.diag | "
        "module's PMD type is not enabled (opcode 1036), cable OPTCORE Q-100G-DAC-P2M |"
    ) in md
    assert "| pcie.cx4.link | lab-host1 | pass | fail |" in md
    html = (out / "report.html").read_text()
    ids = ['id="categories"', 'id="problems"', 'id="diff"', "data:image/png", 'id="checks"']
    positions = _sections_in_order(html, ids)
    assert positions == sorted(positions)
    written = json.loads((out / "report.json").read_text())
    assert len(written["diff"]["changed"]) == 3


def test_markdown_cells_cannot_break_the_table():
    assert md_cell("a | b\nc") == "a \\| b c"
