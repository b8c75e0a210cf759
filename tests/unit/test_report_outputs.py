"""What CI systems and monitoring read: report.junit.xml, cxfab.prom, report.json's schema."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest
from cxfab.verify.report import SCHEMA_VERSION, build_report, write_report
from junitparser import Failure, JUnitXml, Skipped

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "docs" / "report.schema.json"


def _check(check_id, target, status, observed="x", message=""):
    return {
        "id": check_id,
        "target": target,
        "category": "",
        "status": status,
        "expected": "e",
        "observed": observed,
        "message": message,
    }


CHECKS = [
    _check("mlag.oper", "sw-a", "pass", "Up"),
    _check("link.ens1f0.up", "h1", "fail", "operstate down", "expected up"),
    _check("qos.vlan10.throughput", "h1", "warn", "9 Mb/s", "inconclusive: starved"),
    _check("lossless.host", "h1", "skip", "not measured", "cxfab_roce.lossless is off"),
    _check("perf.link_fraction", "p", "waived", "not measured", "waived: soft-RoCE rack"),
]
BANDWIDTH = [{"transport": "rdma", "size_bytes": 65536, "bits_per_second": 4.2e9}]
QOS = [{"target": "h1", "vlan": 10, "limit_mbps": 10.0, "measured_mbps": 9.0}]


@pytest.fixture
def written(tmp_path):
    report = build_report(CHECKS, BANDWIDTH, QOS, meta={"fabric": "lab"})
    return write_report(report, tmp_path, stamp="20261126T000000Z")


def test_junit_has_one_testcase_per_check_with_failures_and_skips(written):
    suites = JUnitXml.fromfile(str(written / "report.junit.xml"))
    cases = {(case.classname, case.name): case for suite in suites for case in suite}
    assert len(cases) == len(CHECKS)
    failed = cases[("h1", "link.ens1f0.up")].result
    assert len(failed) == 1 and isinstance(failed[0], Failure)
    assert "operstate down" in failed[0].message
    warned = cases[("h1", "qos.vlan10.throughput")].result
    assert isinstance(warned[0], Failure) and warned[0].type == "warn"
    assert isinstance(cases[("h1", "lossless.host")].result[0], Skipped)
    waived = cases[("p", "perf.link_fraction")].result
    assert isinstance(waived[0], Skipped) and waived[0].message.startswith("waived:")
    assert cases[("sw-a", "mlag.oper")].result == []
    suite = next(iter(suites))
    assert (suite.tests, suite.failures, suite.skipped) == (5, 2, 2)


def test_prometheus_textfile_has_a_status_per_check_and_measured_values(written):
    text = (written / "cxfab.prom").read_text()
    line = (
        'cxfab_check_status{id="link.ens1f0.up",target="h1",category="link/cable",status="fail"} 1'
    )
    assert line in text
    assert 'cxfab_checks{status="waived"} 1' in text
    assert 'cxfab_bandwidth_bytes_per_second{transport="rdma",size_bytes="65536"} 525000000' in text
    assert 'cxfab_qos_throughput_bytes_per_second{target="h1",vlan="10"} 1125000' in text
    assert 'cxfab_qos_limit_bytes_per_second{target="h1",vlan="10"} 1250000' in text


def test_prometheus_label_values_are_escaped(tmp_path):
    report = build_report([_check('x"y\\z', "h\n1", "pass")])
    text = (write_report(report, tmp_path, stamp="s") / "cxfab.prom").read_text()
    assert 'id="x\\"y\\\\z",target="h\\n1"' in text


def test_promtool_accepts_the_textfile(written):
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("promtool is not installed (Debian package prometheus) and CI is set")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    text = (written / "cxfab.prom").read_bytes()
    run = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, check=False
    )
    assert run.returncode == 0, run.stdout.decode() + run.stderr.decode()
    assert run.stdout.decode().strip() == "" and run.stderr.decode().strip() == ""


def test_report_json_carries_its_schema_version_and_validates(written):
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    document = json.loads((written / "report.json").read_text())
    assert document["schema_version"] == SCHEMA_VERSION
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d["checks"][0].update(status="maybe"),
        lambda d: d["summary"].pop("waived"),
        lambda d: d.update(schema_version="0"),
        lambda d: d["checks"][0].pop("target"),
    ],
)
def test_the_schema_rejects_a_report_of_another_shape(written, spoil):
    schema = json.loads(SCHEMA.read_text())
    document = json.loads((written / "report.json").read_text())
    spoil(document)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)


def test_recorded_example_report_validates_once_rebuilt():
    example = json.loads((ROOT / "tests/fixtures/report/report.json").read_text())
    rebuilt = build_report(example["checks"], **example.get("performance", {}))
    rebuilt["diff"] = {"previous": None, "changed": [], "new": [], "gone": [], "note": "none"}
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(rebuilt, schema, cls=jsonschema.Draft202012Validator)
