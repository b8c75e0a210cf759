"""The report writer: derived summary, validation, secret scrubbing, files on disk."""

import json

import pytest
from cxfab.report import ReportError, build_report, write_report

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
    assert report["summary"] == {"passed": 1, "failed": 1, "skipped": 1, "total": 3}


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
    from cxfab.report import sections_run

    assert sections_run(["all"], []) == ["switches", "hosts", "qos", "perf"]
    assert sections_run(["verify_hosts", "always"], []) == ["hosts"]
    assert sections_run(["all"], ["verify_perf"]) == ["switches", "hosts", "qos"]
    assert sections_run([], ["verify_qos", "verify_perf"]) == ["switches", "hosts"]
