"""`make lab-up` tells a wedged TCG guest (a vCPU whose timer never fires) from a slow one."""

from tests.lab.vm import guests as lab
from tests.lab.vm.topology import Guest

# Lines of a boot that wedged (lab-host2's console in a CI-like run, 2026-11-23).
WEDGED = """\
[   37.972194] iTCO_vendor_support: vendor-support=0
[   47.545757] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
[   46.506414] NMI backtrace for cpu 1 skipped: idling at native_safe_halt+0xb/0x10
[   47.545757] rcu: rcu_preempt kthread timer wakeup didn't happen for 5249 jiffies! g897 f0x0
[   47.545757] rcu: 	Possible timer handling issue on cpu=1 timer-softirq=11
"""
# A slow but healthy boot: udev is done, the lab's init script runs.
HEALTHY = """\
[   65.695001] kvm: Nested Virtualization enabled
[   67.313184] virtme-ng-init: udev is done
[   67.344628] virtme-ng-init: starting script
"""


def _guest(tmp_path, monkeypatch, console: str | None) -> Guest:
    guest = Guest("lab-host2", 2)
    monkeypatch.setattr(Guest, "run_dir", property(lambda self: tmp_path / self.name))
    (tmp_path / guest.name).mkdir(parents=True)
    if console is not None:
        guest.console_log.write_text(console)
    return guest


def test_a_lost_timer_wedge_is_named(tmp_path, monkeypatch):
    guest = _guest(tmp_path, monkeypatch, WEDGED)
    assert lab.boot_wedged(guest) == "rcu_preempt kthread timer wakeup didn't happen"


def test_a_slow_healthy_boot_and_a_missing_console_are_not_wedged(tmp_path, monkeypatch):
    assert lab.boot_wedged(_guest(tmp_path, monkeypatch, HEALTHY)) == ""
    assert lab.boot_wedged(_guest(tmp_path / "none", monkeypatch, None)) == ""


class _Process:
    def __init__(self, status):
        self.status = status

    def poll(self):
        return self.status


def test_a_qemu_gone_mid_boot_is_trouble_to_restart_for_and_a_running_one_is_not(
    tmp_path, monkeypatch
):
    # CI, 2026-11-27: lab-host1's QEMU segfaulted at PCI enumeration.
    crashed = _guest(tmp_path, monkeypatch, "[    1.13] pci 0000:00:0a.0: BAR 1\n")
    later = lab.time.monotonic() + 600
    assert lab.boot_trouble(crashed, _Process(-11), later) == "its QEMU exited with status -11"
    assert lab.boot_trouble(crashed, _Process(None), later) == ""
    assert lab.boot_trouble(crashed, _Process(None), 0.0).startswith("no SSH after")
    wedged = _guest(tmp_path / "w", monkeypatch, WEDGED)
    assert lab.boot_trouble(wedged, _Process(None), later).startswith("rcu_preempt")
