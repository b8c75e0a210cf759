"""The revert timer: snapshot of files, arming (systemd-run or a detached process), disarming,
the watchdog firing, and the record the controller reads afterwards."""

import json
import os
import stat
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from cxfab.host.net import rollback
from cxfab.host.stages.network import watchdog_sources

PREFIX = "60-cxfab-"


def sources():
    """What the module installs for the watchdog (rollback.PACKAGE_FILES)."""
    return watchdog_sources()


class FakeRunner:
    """Records argv; answers with `rc`."""

    def __init__(self, rc=0):
        self.calls, self.rc = [], rc

    def __call__(self, argv, **_kwargs):
        self.calls.append(argv)
        return subprocess.CompletedProcess(argv, self.rc, "", "Failed to start transient timer")


@pytest.fixture
def networkd(tmp_path):
    """A networkd directory with one cxfab file (odd bytes, mode 0640) and a foreign file."""
    directory = tmp_path / "network"
    directory.mkdir()
    (directory / f"{PREFIX}bond0.netdev").write_bytes(b"[NetDev]\r\nName=bond0\n\xff")
    os.chmod(directory / f"{PREFIX}bond0.netdev", 0o640)
    (directory / "10-other.network").write_text("[Match]\n")
    return directory


def snapshot_of(networkd, links=None):
    wanted = {f"{PREFIX}bond0.netdev": "new", f"{PREFIX}bond0.network": "new"}
    return {
        "links": links or {},
        "files": rollback.snapshot_files(str(networkd), PREFIX, wanted),
        "networkd_dir": str(networkd),
    }


def change_files(networkd):
    """What a host_network change does to the files."""
    (networkd / f"{PREFIX}bond0.netdev").write_text("changed")
    (networkd / f"{PREFIX}bond0.network").write_text("created")


def test_files_come_back_byte_for_byte_and_created_ones_go(networkd):
    snapshot = snapshot_of(networkd)
    assert snapshot["files"][f"{PREFIX}bond0.network"] is None
    assert "10-other.network" not in snapshot["files"]
    change_files(networkd)
    done = rollback.restore_files(str(networkd), snapshot["files"])
    assert sorted(done) == [
        f"removed {networkd}/{PREFIX}bond0.network",
        f"wrote {networkd}/{PREFIX}bond0.netdev",
    ]
    assert (networkd / f"{PREFIX}bond0.netdev").read_bytes() == b"[NetDev]\r\nName=bond0\n\xff"
    assert stat.S_IMODE(os.stat(networkd / f"{PREFIX}bond0.netdev").st_mode) == 0o640
    assert not (networkd / f"{PREFIX}bond0.network").exists()
    assert rollback.restore_files(str(networkd), snapshot["files"]) == []


def test_arm_with_systemd_starts_a_transient_timer_and_disarm_stops_it(tmp_path, networkd):
    record_dir = tmp_path / "rollback"
    runner = FakeRunner()
    armed = rollback.arm(str(record_dir), snapshot_of(networkd), 120, sources(),
                         python="/usr/bin/python3", systemd=True, runner=runner,
                         clock=lambda: 1000.0)  # fmt: skip
    assert armed["armed"] and armed["method"] == "systemd-run" and armed["deadline"] == 1120.0
    (argv,) = runner.calls
    assert argv[:5] == [
        "systemd-run",
        f"--unit={rollback.UNIT_PREFIX}{armed['token']}",
        "--on-active=120s",
        "--timer-property=AccuracySec=1s",
        "--collect",
    ]
    assert argv[5:] == ["/usr/bin/python3", str(record_dir / rollback.LAUNCHER), "--dir",
                        str(record_dir), "--token", armed["token"], "fire"]  # fmt: skip
    assert stat.S_IMODE(os.stat(record_dir).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(record_dir / rollback.ARMED).st_mode) == 0o600
    assert (record_dir / "lib/cxfab/host/net/restore.py").read_text() == sources()[
        "cxfab/host/net/restore.py"
    ]
    result = rollback.disarm(str(record_dir), armed["token"], runner=runner)
    assert result["state"] == "confirmed"
    assert runner.calls[-1] == ["systemctl", "stop", f"{armed['unit']}.timer"]
    assert not (record_dir / rollback.ARMED).exists()
    # The timer firing late (a stop that did not arrive) finds nothing to do.
    assert rollback.fire(str(record_dir), armed["token"], "late", restorer=pytest.fail) is None


def test_a_timer_that_cannot_be_armed_is_an_error(tmp_path, networkd):
    with pytest.raises(rollback.RollbackError, match="systemd-run could not arm"):
        rollback.arm(str(tmp_path / "r"), snapshot_of(networkd), 60, sources(),
                     systemd=True, runner=FakeRunner(rc=1))  # fmt: skip
    assert not (tmp_path / "r" / rollback.ARMED).exists()
    with pytest.raises(rollback.RollbackError, match="must be positive"):
        rollback.arm(str(tmp_path / "r"), snapshot_of(networkd), 0, sources(), systemd=True)


def test_rearming_keeps_the_state_before_the_first_unconfirmed_change(tmp_path, networkd):
    record_dir, runner = str(tmp_path / "r"), FakeRunner()
    first = rollback.arm(record_dir, snapshot_of(networkd, {"bond0": None}), 60, sources(),
                         systemd=True, runner=runner)  # fmt: skip
    change_files(networkd)
    later = snapshot_of(networkd, {"bond0": {"kind": "bond"}, "bond0.10": None})
    second = rollback.arm(record_dir, later, 60, sources(), systemd=True, runner=runner)
    assert runner.calls[1] == ["systemctl", "stop", f"{first['unit']}.timer"]
    record = json.loads((tmp_path / "r" / rollback.ARMED).read_text())
    assert record["token"] == second["token"] != first["token"]
    assert record["links"] == {"bond0": None, "bond0.10": None}
    assert record["files"][f"{PREFIX}bond0.network"] is None  # not the "created" text


def test_fire_restores_only_its_own_armed_change_and_records_why(tmp_path, networkd):
    record_dir = str(tmp_path / "r")
    armed = rollback.arm(record_dir, snapshot_of(networkd), 60, sources(), systemd=True,
                         runner=FakeRunner())  # fmt: skip
    seen = []

    def restorer(record):
        seen.append(record["token"])
        return ["delete bond0"], []

    assert rollback.fire(record_dir, "0" * 16, "not confirmed", restorer) is None
    result = rollback.fire(record_dir, armed["token"], "not confirmed within 60 s", restorer)
    assert seen == [armed["token"]]
    assert result["state"] == "reverted" and result["restored"] == ["delete bond0"]
    assert rollback.fire(record_dir, armed["token"], "again", restorer) is None
    # The controller's confirmation comes too late: it learns what happened.
    assert rollback.disarm(record_dir, armed["token"])["state"] == "reverted"
    assert rollback.describe_result(result) == (
        "reverted: not confirmed within 60 s, restored delete bond0"
    )


def test_disarm_without_any_record_says_so(tmp_path):
    with pytest.raises(rollback.RollbackError, match="no revert timer"):
        rollback.disarm(str(tmp_path / "r"), "abc")


def test_watchdog_main_waits_for_the_deadline_then_restores(tmp_path, networkd):
    record_dir = str(tmp_path / "r")
    started = []
    armed = rollback.arm(record_dir, snapshot_of(networkd), 30, sources(), systemd=False,
                         spawner=lambda argv, **kw: started.append(argv) or SimpleNamespace(pid=0),
                         clock=lambda: 100.0)  # fmt: skip
    assert started[0][-1] == "wait" and started[0][-3:-1] == ["--token", armed["token"]]
    change_files(networkd)
    now = [100.0]
    rc = rollback.main(["--dir", record_dir, "--token", armed["token"], "wait"],
                       sleep=lambda s: now.__setitem__(0, now[0] + s),
                       clock=lambda: now[0])  # fmt: skip
    assert rc == 0 and now[0] >= 130.0
    result = json.loads((tmp_path / "r" / rollback.RESULT).read_text())
    assert result["state"] == "reverted" and result["reason"] == "not confirmed within 30 s"
    # The record says when the timer was due and when the restore ran (host clock).
    assert result["deadline"] == 130.0
    assert 130.0 <= result["started"] <= result["at"] < 131.0
    assert (networkd / f"{PREFIX}bond0.netdev").read_bytes().endswith(b"\xff")


# How long a test waits for the detached watchdog (a new Python process) to do what it
# must: generous, as a loaded machine may take many seconds to start it; a watchdog that
# never acts still fails the test, only later.
PATIENCE = 120.0


def wait_for(predicate, timeout=PATIENCE):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_detached_watchdog_restores_the_files_when_nobody_confirms(tmp_path, networkd):
    """The real process, started the way a host without systemd gets it."""
    record_dir = tmp_path / "r"
    snapshot = snapshot_of(networkd)
    # The change is made before arming (the snapshot already holds the files as they
    # were): with a 1 s timer, a test stalled by a loaded machine could otherwise change
    # the files only after the watchdog restored them.
    change_files(networkd)
    armed = rollback.arm(str(record_dir), snapshot, 1, sources(), systemd=False)
    assert armed["method"] == "detached process"
    assert wait_for((record_dir / rollback.RESULT).exists)
    result = rollback.disarm(str(record_dir), armed["token"])
    assert result["state"] == "reverted", result
    # It waited for its deadline (host clock, the one arm set it by), however late it ran.
    assert result["deadline"] == armed["deadline"] <= result["started"] <= result["at"]
    assert result["restored"] == [
        f"wrote {networkd}/{PREFIX}bond0.netdev",
        f"removed {networkd}/{PREFIX}bond0.network",
    ]
    assert (networkd / f"{PREFIX}bond0.netdev").read_bytes() == b"[NetDev]\r\nName=bond0\n\xff"


def test_confirming_stops_the_detached_watchdog_and_keeps_the_change(tmp_path, networkd):
    record_dir = tmp_path / "r"
    # Far longer than the test may take under load: the watchdog must not fire first.
    armed = rollback.arm(str(record_dir), snapshot_of(networkd), 3600, sources(), systemd=False)
    change_files(networkd)
    assert wait_for(lambda: rollback._is_watchdog(armed["pid"], armed["token"]))
    assert rollback.disarm(str(record_dir), "")["state"] == "confirmed"
    assert wait_for(lambda: not rollback._is_watchdog(armed["pid"], armed["token"]))
    assert (networkd / f"{PREFIX}bond0.netdev").read_text() == "changed"


def test_installed_copy_imports_everything_the_restore_needs(tmp_path):
    """The watchdog runs from its own copy: every module restore() imports is in it."""
    rollback.install(str(tmp_path), sources())
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import cxfab.host.net.netlink, cxfab.host.net.restore, cxfab.host.net.ipoib; "
        "import cxfab.host.net.pyroute2_lean; "
        "import cxfab.host.net.rollback as r; "
        "print(r.__file__)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "lib")],
                         capture_output=True, text=True, check=True, cwd="/")  # fmt: skip
    assert out.stdout.strip() == str(tmp_path / "lib/cxfab/host/net/rollback.py")


def test_module_restoring_after_a_failed_change_also_stops_the_timer(tmp_path, networkd):
    record_dir, runner = str(tmp_path / "r"), FakeRunner()
    armed = rollback.arm(record_dir, snapshot_of(networkd), 60, sources(), systemd=True,
                         runner=runner)  # fmt: skip
    result = rollback.fire(record_dir, armed["token"], "netlink refused a change: EOPNOTSUPP",
                           restorer=lambda record: ([], []), stop=runner)  # fmt: skip
    assert runner.calls[-1] == ["systemctl", "stop", f"{armed['unit']}.timer"]
    assert rollback.describe_result(result) == (
        "reverted: netlink refused a change: EOPNOTSUPP, "
        "restored nothing (the host was already as before)"
    )


def ipoib_tree(root, mode="connected", mtu=65520):
    """/sys/class/net/ib0 with the sysfs files the restore reads and writes."""
    net = root / "sys" / "class" / "net" / "ib0"
    net.mkdir(parents=True, exist_ok=True)
    (net / "mode").write_text(f"{mode}\n")
    (net / "mtu").write_text(f"{mtu}\n")
    return net


def test_the_restore_puts_the_ipoib_mode_and_mtu_back_before_the_files(tmp_path, networkd):
    net = ipoib_tree(tmp_path / "root")  # the change made ib0 connected, MTU 65520
    record = {
        **snapshot_of(networkd),
        "ipoib": {"ib0": {"mode": "datagram", "mtu": 2044}},
        "root": str(tmp_path / "root"),
    }
    change_files(networkd)
    restored, errors = rollback.restore(record)
    assert errors == []
    assert restored[:2] == ["set_ipoib_mode ib0 (mode=datagram)", "set_ipoib_mtu ib0 (mtu=2044)"]
    assert (net / "mode").read_text().strip() == "datagram"
    assert (net / "mtu").read_text().strip() == "2044"


def test_an_ipoib_interface_that_cannot_be_read_still_gets_its_files_back(tmp_path, networkd):
    net = ipoib_tree(tmp_path / "root")
    (net / "mode").unlink()
    record = {
        **snapshot_of(networkd),
        "ipoib": {"ib0": {"mode": "datagram", "mtu": 2044}},
        "root": str(tmp_path / "root"),
    }
    change_files(networkd)
    restored, errors = rollback.restore(record)
    assert len(errors) == 1 and errors[0].startswith("ipoib: IpoibError: "), errors
    assert f"wrote {networkd}/{PREFIX}bond0.netdev" in restored


def test_rearming_keeps_the_ipoib_state_before_the_first_unconfirmed_change(tmp_path, networkd):
    record_dir = str(tmp_path / "r")
    first = {**snapshot_of(networkd), "ipoib": {"ib0": {"mode": "datagram", "mtu": 2044}}}
    rollback.arm(record_dir, first, 60, sources(), systemd=True, runner=FakeRunner())
    second = {**snapshot_of(networkd), "ipoib": {"ib0": {"mode": "connected", "mtu": 65520}}}
    rollback.arm(record_dir, second, 60, sources(), systemd=True, runner=FakeRunner())
    record = json.loads((tmp_path / "r" / rollback.ARMED).read_text())
    assert record["ipoib"] == {"ib0": {"mode": "datagram", "mtu": 2044}}
