"""The demo's promise on the lab: site.yml deploys, verify.yml passes every check,
and a second site.yml changes nothing on any host or switch.

The real playbooks over SSH against the guests and the emulated switch pair, in
the order `make demo` runs them (site.yml is the session's `deployed` fixture).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from junitparser import Failure, JUnitXml, Skipped

from tests.lab.vm.topology import GUESTS

pytestmark = [pytest.mark.lab, pytest.mark.timeout(3600)]

HOSTS = [guest.name for guest in GUESTS]
SWITCHES = ("lab-sw-a", "lab-sw-b")
# The demo's only skips, each not applicable by the lab's intent: (target, check id) and
# a word of the reason verify gives. Any other check that does not pass fails the demo,
# so a change that turned checks into skips, waivers or warnings cannot pass it.
NOT_APPLICABLE = {
    ("lab-host1", "lossless.host"): "cxfab_roce.lossless is off",
    ("lab-host2", "lossless.host"): "cxfab_roce.lossless is off",
    ("host1-to-host2", "perf.link_fraction"): "its port rate is nominal",
}


def test_first_site_run_configured_every_host_and_switch(deployed):
    first = deployed.first_site
    if first is None:
        pytest.skip("CXFAB_LAB_CONFIGURED=1: site.yml ran before this session")
    assert {*HOSTS, *SWITCHES} <= set(first.recap), first.tail()
    for device in (*HOSTS, *SWITCHES):
        stats = first.recap[device]
        assert stats["failed"] == stats["unreachable"] == 0, (device, stats)
    # The lab boots in seed 000's state: firmware, port type, bond and VLANs have work
    # to do on every host, and both switches start blank.
    for host in HOSTS:
        assert first.recap[host]["changed"] > 0, (host, first.tail())
    # One module call deploys the pair (from its first switch), so a switch's recap does
    # not show its own change: the deploy record of each switch does.
    records = deployed.first_site_deploy_records
    for switch in SWITCHES:
        record = records.get(switch, {})
        assert record.get("check_mode") is False, (switch, sorted(records))
        assert record.get("lines") and record.get("saved") is True, (switch, record)
        assert record.get("post_failed") == [], (switch, record.get("post_failed"))


def junit_cases_agree(path, total: int) -> None:
    """report.junit.xml as junitparser reads it: a testcase per check, no failure, and
    the not-applicable checks as its skips."""
    cases = [case for suite in JUnitXml.fromfile(str(path)) for case in suite]
    assert len(cases) == total

    def has(case, kind) -> bool:
        return any(isinstance(result, kind) for result in case.result)

    assert [case.name for case in cases if has(case, Failure)] == []
    assert {(case.classname, case.name) for case in cases if has(case, Skipped)} == set(
        NOT_APPLICABLE
    )


def promtool_accepts(path) -> None:
    """cxfab.prom as Prometheus' own checker reads it: no error, no lint warning."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing (Debian package prometheus, make setup installs it)"
    checked = subprocess.run(
        [promtool, "check", "metrics"], input=path.read_text(), capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert checked.returncode == 0 and not (checked.stdout + checked.stderr).strip(), (
        checked.stdout + checked.stderr
    )


def test_verify_passes_every_check(deployed, tmp_path):
    run = deployed.play("verify.yml", reports=tmp_path)
    report = json.loads((tmp_path / "latest" / "report.json").read_text())
    failed = [c for c in report["checks"] if c["status"] == "fail"]
    assert run.returncode == 0 and not failed, (json.dumps(failed, indent=1)[:4000], run.tail())
    not_passed = {(c["target"], c["id"]): c for c in report["checks"] if c["status"] != "pass"}
    assert set(not_passed) == set(NOT_APPLICABLE), json.dumps(list(not_passed.values()))[:4000]
    for key, reason in NOT_APPLICABLE.items():
        assert not_passed[key]["status"] == "skip", not_passed[key]
        assert reason in not_passed[key]["message"], not_passed[key]
    total = len(report["checks"])
    assert total >= 160, total  # the lab's intent gave 167 on 2026-11-28
    assert report["summary"] == {
        "passed": total - len(NOT_APPLICABLE), "warned": 0, "failed": 0,
        "skipped": len(NOT_APPLICABLE), "waived": 0, "total": total,
    }  # fmt: skip
    latest = tmp_path / "latest"
    # The same run for CI systems and for monitoring.
    junit_cases_agree(latest / "report.junit.xml", total)
    promtool_accepts(latest / "cxfab.prom")
    by_id = {(c["target"], c["id"]): c for c in report["checks"]}
    # Seed 001's QoS figures, measured: the limited VLANs within tolerance, VLAN 30 above.
    for vlan in (10, 20, 30):
        assert by_id[("lab-host1", f"qos.vlan{vlan}.throughput")]["status"] == "pass"
    assert report["performance"]["qos"], "the report carries the QoS series for its plot"
    for part in ("report.md", "report.html", "bandwidth.png", "qos.png"):
        assert (latest / part).is_file(), part
    assert f"Report: {tmp_path}" in run.output


def test_second_site_run_changes_nothing(deployed):
    again = deployed.healthy("site.yml")
    assert {*HOSTS, *SWITCHES} <= set(again.recap), again.tail()
    changed = again.changed_hosts()
    assert not changed, f"second site.yml run changed something: {changed}\n{again.tail(3000)}"
    # One reading per host (playbooks/host_state.yml) found every stage settled, so the
    # stages' own module calls were skipped on every host.
    flowing = " ".join(again.output.split())  # the YAML callback folds long messages
    assert flowing.count("), network, qos, irq, rdma'") == len(HOSTS), again.tail(3000)
    for task in ("host_qos : Program traffic classes", "irq_affinity : Pin the NIC IRQs"):
        section = flowing.split(f"TASK [{task}", 1)[1].split("TASK [", 1)[0]
        assert all(f"skipping: [{host}]" in section for host in HOSTS), (task, section)


def test_a_drifted_stage_is_read_and_repaired_on_that_host_only(deployed, host2):
    """A settled reading is what the stage itself finds: a soft-RoCE device removed on one
    host makes its RDMA stage differ, and only there does the stage run and repair it."""
    device = host2.run(
        "rdma -j link show | python3 -c 'import json,sys; "
        'print(json.load(sys.stdin)[0]["ifname"])\''
    ).strip()
    host2.run(f"rdma link delete {device}")
    run = deployed.healthy("site.yml", "--tags", "rdma")
    flowing = " ".join(run.output.split())
    assert f"ok: [{host2.name}] => msg: 'rdma differs (rdma link add {device}" in flowing, (
        run.tail()
    )
    assert run.changed_hosts() == {host2.name: 1}, run.tail()
    assert device in host2.run("rdma link show")


def test_a_drifted_network_is_compared_once_and_repaired_on_that_host_only(deployed, host2):
    """The reading before the rollout is host_network's comparison: a VLAN MTU changed on
    one host is found there, host_network does not compare a second time, and only that
    host changes."""
    vlan = "bond0.30"
    host2.run(f"ip link set {vlan} mtu 1500")
    run = deployed.healthy("site.yml", "--tags", "host_network")
    flowing = " ".join(run.output.split())
    reading = flowing.split("TASK [Report what each host needs", 1)[1].split("TASK [", 1)[0]
    assert f"ok: [{host2.name}] => msg: network differs" in reading.replace("'", ""), reading
    compare = flowing.split("TASK [host_network : Compare the bond", 1)[1].split("TASK [", 1)[0]
    assert all(f"skipping: [{host}]" in compare for host in HOSTS), compare
    assert set(run.changed_hosts()) == {host2.name}, run.tail()
    assert "mtu 9000" in host2.run(f"ip link show {vlan}")
