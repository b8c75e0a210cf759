"""NetworkManager checkpoints as host_network's revert timer, over D-Bus with `busctl`.

A checkpoint (org.freedesktop.NetworkManager.CheckpointCreate, NetworkManager >= 1.12;
the mechanism linux-system-roles/network uses) records the devices' applied
connections and the profiles; unless it is destroyed within its rollback timeout,
NetworkManager itself restores them: the profiles and their files as they were,
every profile added since deleted (flag DELETE_NEW_CONNECTIONS, file and all), the
devices re-activated with what they had. NetworkManager is the timer here, so no
watchdog process is needed; the confirm step destroys the checkpoint
(CheckpointDestroy), and a checkpoint that no longer exists means NetworkManager
rolled back.

Why `busctl`: it ships with systemd, which every NetworkManager host cxfab targets runs
(RHEL, Rocky, Alma, Fedora, Debian, Ubuntu), it needs no Python bindings (python3-gi or
dbus-python are not on a minimal host, and the module runs with the host's Python), and
its reply for these calls is one line (`o "/org/..."`). `gdbus` would need the GLib
tools package (Debian's libglib2.0-bin is not installed with network-manager); a
D-Bus wire client of our own would be more code to get right than the four calls need.
`nmcli` has no checkpoint command.

`runner` is subprocess.run-like: runner(argv, capture_output=True, text=True,
check=False) -> object with returncode, stdout, stderr.
"""

from __future__ import annotations

import subprocess

SERVICE = "org.freedesktop.NetworkManager"
PATH = "/org/freedesktop/NetworkManager"
INTERFACE = "org.freedesktop.NetworkManager"
# NMCheckpointCreateFlags: 0x2 delete the profiles added after the checkpoint on rollback.
# (DISCONNECT_NEW_DEVICES, 0x4, is refused with an explicit device list: NM 1.42 says
# "can only be used with an empty device list", and an empty list means every device,
# the management interface included.)
DELETE_NEW_CONNECTIONS = 0x2
GONE = "does not exist"


class CheckpointError(RuntimeError):
    """A checkpoint call failed; the message carries busctl's error."""


def _call(runner, method: str, signature: str, *args) -> str:
    argv = ["busctl", "call", SERVICE, PATH, INTERFACE, method, signature, *map(str, args)]
    done = runner(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CheckpointError(f"{method}: {(done.stderr or done.stdout).strip()[:300]}")
    return done.stdout.strip()


def _object_path(reply: str) -> str:
    # `o "/org/freedesktop/NetworkManager/Checkpoint/1"`
    kind, _, value = reply.partition(" ")
    if kind != "o" or not value.startswith('"/'):
        raise CheckpointError(f"unexpected busctl reply {reply!r}")
    return value.strip('"')


def devices(runner, interfaces) -> dict[str, str]:
    """{interface: NetworkManager device path} of those of `interfaces` that exist."""
    found = {}
    for name in interfaces:
        try:
            found[name] = _object_path(_call(runner, "GetDeviceByIpIface", "s", name))
        except CheckpointError:
            continue  # not there yet (a bond or VLAN the change creates)
    return found


def create(runner, device_paths, seconds: int) -> str:
    """A checkpoint of `device_paths` rolling back after `seconds`; its object path."""
    if not device_paths:
        raise CheckpointError("no existing device to checkpoint (an empty list means all)")
    if seconds <= 0:
        raise CheckpointError(f"rollback timeout must be positive, got {seconds}")
    paths = sorted(device_paths)
    reply = _call(
        runner, "CheckpointCreate", "aouu", len(paths), *paths, seconds, DELETE_NEW_CONNECTIONS
    )
    return _object_path(reply)


def _unless_gone(runner, method: str, signature: str, *args) -> bool:
    """Call `method` on a checkpoint; False when NetworkManager no longer has it."""
    try:
        _call(runner, method, signature, *args)
    except CheckpointError as exc:
        if GONE in str(exc):
            return False
        raise
    return True


def adjust(runner, checkpoint: str, seconds: int) -> bool:
    """Give a pending checkpoint `seconds` more from now; False when it is gone."""
    return _unless_gone(runner, "CheckpointAdjustRollbackTimeout", "ou", checkpoint, seconds)


def destroy(runner, checkpoint: str) -> bool:
    """Keep the change (drop the checkpoint); False when it is gone (rolled back)."""
    return _unless_gone(runner, "CheckpointDestroy", "o", checkpoint)


def rollback(runner, checkpoint: str) -> str:
    """Roll back now; busctl's reply (a{su}: device path -> result, 0 = success)."""
    return _call(runner, "CheckpointRollback", "o", checkpoint)


def restore(record: dict, runner=subprocess.run) -> tuple[list[str], list[str]]:
    """rollback.restore for a checkpoint record: roll back now, as the failed change asks."""
    try:
        reply = rollback(runner, record["checkpoint"])
    except CheckpointError as exc:
        if GONE in str(exc):
            # Still armed (only disarm destroys it, under the record's lock) and gone:
            # NetworkManager's own timeout rolled it back, while the change still ran.
            return [
                f"NetworkManager rolled back checkpoint {record['checkpoint']} itself at "
                "its timeout"
            ], []
        return [], [f"NetworkManager checkpoint {record['checkpoint']}: {exc}"]
    return [f"NetworkManager rolled back checkpoint {record['checkpoint']} ({reply})"], []
