"""The RDMA stage keeps the host's daemons running (host/stages/rdma.ensure_daemons)."""

from __future__ import annotations

import pytest
from cxfab.host.stages import rdma


class FakeModule:
    def __init__(self, check_mode=False, rc=None):
        self.check_mode = check_mode
        self.calls = []
        self.rc = rc or {}

    def run_command(self, argv, check_rc=False):
        self.calls.append(argv)
        return self.rc.get(tuple(argv), 0), "", ""

    def fail_json(self, msg):
        raise AssertionError(msg)


def test_running_reads_the_command_names(tmp_path):
    (tmp_path / "17").mkdir()
    (tmp_path / "17" / "comm").write_text("lldpd\n")
    (tmp_path / "self").mkdir()
    assert rdma.running("lldpd", str(tmp_path))
    assert not rdma.running("sshd", str(tmp_path))


def test_with_systemd_an_inactive_daemon_is_enabled_and_started(monkeypatch):
    monkeypatch.setattr(rdma.os.path, "isdir", lambda path: path == "/run/systemd/system")
    module = FakeModule(rc={("systemctl", "is-active", "--quiet", "lldpd"): 3})
    assert rdma.ensure_daemons(module, ["lldpd"]) == ["systemctl enable --now lldpd"]
    assert ["systemctl", "enable", "--now", "lldpd"] in module.calls
    settled = FakeModule()
    assert rdma.ensure_daemons(settled, ["lldpd"]) == []
    assert all(call[1] != "enable" for call in settled.calls)


def test_check_mode_reports_and_changes_nothing(monkeypatch):
    monkeypatch.setattr(rdma.os.path, "isdir", lambda path: path == "/run/systemd/system")
    module = FakeModule(check_mode=True, rc={("systemctl", "is-enabled", "--quiet", "lldpd"): 1})
    assert rdma.ensure_daemons(module, ["lldpd"]) == ["systemctl enable --now lldpd"]
    assert ["systemctl", "enable", "--now", "lldpd"] not in module.calls


def test_without_systemd_the_init_script_starts_a_daemon_not_running(monkeypatch):
    monkeypatch.setattr(rdma.os.path, "isdir", lambda path: False)
    monkeypatch.setattr(rdma, "running", lambda name: False)
    monkeypatch.setattr(rdma.os, "access", lambda path, mode: path == "/etc/init.d/lldpd")
    made = []
    monkeypatch.setattr(rdma.os, "makedirs", lambda path, **kw: made.append(path))
    module = FakeModule()
    assert rdma.ensure_daemons(module, ["lldpd"]) == ["/etc/init.d/lldpd start"]
    assert module.calls == [["/etc/init.d/lldpd", "start"]] and made == ["/run/lldpd"]
    monkeypatch.setattr(rdma, "running", lambda name: True)
    assert rdma.ensure_daemons(FakeModule(), ["lldpd"]) == []


@pytest.mark.parametrize("name", ["lldpd; reboot", "../sbin/x", "", "Lldpd"])
def test_a_name_that_is_not_a_plain_word_is_refused(name, monkeypatch):
    monkeypatch.setattr(rdma.os.path, "isdir", lambda path: True)
    with pytest.raises(AssertionError, match="is not a daemon name"):
        rdma.ensure_daemons(FakeModule(), [name])
