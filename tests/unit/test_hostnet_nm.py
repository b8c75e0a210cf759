"""The NetworkManager backend's pure parts: the keyfile plan, nmcli's terse output, the
checkpoint calls over busctl and the rollback record they leave (a fake runner stands in
for busctl and nmcli; tests/integration/test_networkmanager_apply.py runs the real ones)."""

import subprocess
from pathlib import Path

import pytest
import yaml
from cxfab.host.net import nmapply, nmcheckpoint, rollback
from cxfab.structured import nmkeyfile

REPO = Path(__file__).resolve().parents[2]
CP = "/org/freedesktop/NetworkManager/Checkpoint/7"


class Bus:
    """busctl/nmcli stand-in: answers by method name, records every argv."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []

    def __call__(self, argv, **_kwargs):
        self.calls.append(argv)
        method = argv[5] if argv[0] == "busctl" else argv[1]
        rc, out, err = self.answers.get(method, (0, "", ""))
        return subprocess.CompletedProcess(argv, rc, out, err)


def lab_files():
    structured = yaml.safe_load((REPO / "tests/golden/lab/structured/lab-host1.yml").read_text())
    return nmapply.render(structured)


def test_plan_writes_missing_or_loose_files_and_removes_stale_cxfab_profiles(tmp_path):
    files = lab_files()
    assert nmapply.plan(str(tmp_path), files) == [f"write {tmp_path}/{n}" for n in files]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o600)
    assert nmapply.plan(str(tmp_path), files) == []
    (tmp_path / "cxfab-bond0.nmconnection").chmod(0o644)  # NetworkManager would ignore it
    (tmp_path / "cxfab-old0.nmconnection").write_text("[connection]\n")
    (tmp_path / "site-eth0.nmconnection").write_text("[connection]\n")  # not cxfab's
    assert nmapply.plan(str(tmp_path), files) == [
        f"write {tmp_path}/cxfab-bond0.nmconnection",
        f"remove {tmp_path}/cxfab-old0.nmconnection",
    ]


def test_nmcli_terse_fields_keep_escaped_colons():
    assert nmapply._split(r"a\:b:c::d") == ["a:b", "c", "", "d"]


def test_read_back_is_the_structured_configs_comparable_form(tmp_path):
    files = lab_files()
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert nmapply.read_back(str(tmp_path)) == nmkeyfile.read_keyfiles(files)


def test_checkpoint_calls_and_replies():
    bus = Bus(
        {
            "GetDeviceByIpIface": (0, 'o "/org/freedesktop/NetworkManager/Devices/3"\n', ""),
            "CheckpointCreate": (0, f'o "{CP}"\n', ""),
        }
    )
    paths = nmcheckpoint.devices(bus, ["ens1f0"])
    assert paths == {"ens1f0": "/org/freedesktop/NetworkManager/Devices/3"}
    assert nmcheckpoint.create(bus, paths.values(), 30) == CP
    assert bus.calls[-1][5:] == [
        "CheckpointCreate", "aouu", "1", "/org/freedesktop/NetworkManager/Devices/3", "30", "2"
    ]  # fmt: skip
    with pytest.raises(nmcheckpoint.CheckpointError, match="an empty list means all"):
        nmcheckpoint.create(bus, [], 30)


def test_a_checkpoint_that_is_gone_means_networkmanager_rolled_back():
    gone = (1, "", f"Call failed: checkpoint {CP} does not exist\n")
    assert nmcheckpoint.destroy(Bus({"CheckpointDestroy": gone}), CP) is False
    assert nmcheckpoint.destroy(Bus({}), CP) is True
    with pytest.raises(nmcheckpoint.CheckpointError, match="Access denied"):
        nmcheckpoint.destroy(Bus({"CheckpointDestroy": (1, "", "Access denied")}), CP)


DEVICE = (0, 'o "/org/freedesktop/NetworkManager/Devices/3"', "")


def test_no_existing_device_is_refused_not_checkpointed_as_every_device(tmp_path):
    bus = Bus({"GetDeviceByIpIface": (1, "", "No device found for the requested iface.")})
    with pytest.raises(rollback.RollbackError, match="an empty list means all"):
        rollback.arm_checkpoint(str(tmp_path), ["ens1f0"], 5, runner=bus)
    assert not (tmp_path / rollback.ARMED).exists()


def test_arm_checkpoint_then_disarm_confirms(tmp_path):
    bus = Bus({"GetDeviceByIpIface": DEVICE, "CheckpointCreate": (0, f'o "{CP}"', "")})
    armed = rollback.arm_checkpoint(str(tmp_path), ["ens1f0"], 5, runner=bus, clock=lambda: 100.0)
    assert armed["checkpoint"] == CP and armed["deadline"] == 105.0
    assert armed["method"] == "networkmanager checkpoint"
    result = rollback.disarm(str(tmp_path), armed["token"], runner=bus)
    assert result["state"] == "confirmed"
    assert bus.calls[-1][5:] == ["CheckpointDestroy", "o", CP]


def test_disarm_after_networkmanager_rolled_back_reports_the_revert(tmp_path):
    bus = Bus({"GetDeviceByIpIface": DEVICE, "CheckpointCreate": (0, f'o "{CP}"', "")})
    armed = rollback.arm_checkpoint(str(tmp_path), ["ens1f0"], 5, runner=bus)
    bus.answers["CheckpointDestroy"] = (1, "", f"checkpoint {CP} does not exist")
    result = rollback.disarm(str(tmp_path), armed["token"], runner=bus)
    assert (result["state"], result["reason"]) == ("reverted", "not confirmed within 5 s")
    assert rollback.disarm(str(tmp_path), armed["token"], runner=bus) == result  # read again


def test_an_unconfirmed_checkpoint_is_extended_not_replaced(tmp_path):
    bus = Bus({"GetDeviceByIpIface": DEVICE, "CheckpointCreate": (0, f'o "{CP}"', "")})
    first = rollback.arm_checkpoint(str(tmp_path), ["ens1f0"], 5, runner=bus)
    second = rollback.arm_checkpoint(str(tmp_path), ["ens1f0"], 9, runner=bus)
    assert second["checkpoint"] == CP and second["token"] != first["token"]
    assert bus.calls[-1][5:] == ["CheckpointAdjustRollbackTimeout", "ou", CP, "9"]
    assert [c[5] for c in bus.calls].count("CheckpointCreate") == 1


def test_a_pending_networkd_timer_is_not_mixed_with_a_checkpoint(tmp_path):
    (tmp_path / rollback.ARMED).write_text('{"token": "ab", "method": "systemd-run"}')
    with pytest.raises(rollback.RollbackError, match="confirm it first"):
        rollback.arm_checkpoint(str(tmp_path), ["ens1f0"], 5, runner=Bus({}))


class Refused(Exception):
    pass


class FakeModule:
    check_mode = False

    def __init__(self, **params):
        self.params = {"persist": True, "nm_keyfile_dir": "/nonexistent", **params}

    def fail_json(self, **kwargs):
        raise Refused(kwargs["msg"])


def _stage_run(module, intent):
    from cxfab.host.stages import network_nm

    return network_nm.run(module, None, intent, {}, {}, [], {}, None, None)


def test_the_stage_refuses_what_networkmanager_cannot_do_before_any_change():
    intent = {"bond": None, "members": [], "vlans": [], "ipoib": [{"name": "ibp59s0"}]}
    with pytest.raises(Refused, match="persist: false cannot be honoured"):
        _stage_run(FakeModule(persist=False), intent)


def test_a_failed_change_rolls_the_checkpoint_back_or_finds_networkmanager_did():
    record = {"checkpoint": CP}
    done = nmcheckpoint.restore(record, Bus({"CheckpointRollback": (0, "a{su} 1 /dev/1 0", "")}))
    assert done == ([f"NetworkManager rolled back checkpoint {CP} (a{{su}} 1 /dev/1 0)"], [])
    gone = (1, "", f"Call failed: checkpoint {CP} does not exist")
    assert nmcheckpoint.restore(record, Bus({"CheckpointRollback": gone})) == (
        [f"NetworkManager rolled back checkpoint {CP} itself at its timeout"],
        [],
    )
    refused = (1, "", "Access denied")
    restored, errors = nmcheckpoint.restore(record, Bus({"CheckpointRollback": refused}))
    assert restored == [] and "Access denied" in errors[0]


@pytest.mark.parametrize("late", [False, True])
def test_a_change_slower_than_its_timer_says_so(tmp_path, monkeypatch, late):
    """NetworkManager rolls a checkpoint back at its timeout even while the change runs
    (seen in the lab: `nmcli connection up` then fails, "The base network connection was
    interrupted"): the failure names the timer, not only nmcli's error."""
    from cxfab.host.stages import network_nm

    bus = Bus({"GetDeviceByIpIface": DEVICE, "CheckpointCreate": (0, f'o "{CP}"', "")})
    now = 1000.0
    timer = rollback.arm_checkpoint(
        str(tmp_path), ["ens1f0"], 30, runner=bus, clock=lambda: now - (60 if late else 0)
    )
    gone = nmcheckpoint.CheckpointError(f"CheckpointRollback: checkpoint {CP} does not exist")

    def rolled_back_already(_runner, _checkpoint):
        raise gone

    monkeypatch.setattr(nmcheckpoint, "rollback", rolled_back_already)
    monkeypatch.setattr(network_nm.time, "time", lambda: now)
    module = FakeModule(rollback_dir=str(tmp_path))
    interrupted = nmapply.NMApplyError("nmcli connection up: base connection interrupted")
    with pytest.raises(Refused) as failure:
        network_nm._fail_and_restore(module, interrupted, timer, [], [], [])
    message = str(failure.value)
    if late:
        assert message.startswith(
            "reverted: not confirmed within 30 s: the change took longer than "
            "host_network_revert_seconds (nmcli connection up: base connection interrupted)"
        ), message
    else:
        assert message.startswith("reverted: nmcli connection up: base"), message
    assert message.endswith(
        f"restored NetworkManager rolled back checkpoint {CP} itself at its timeout"
    )
