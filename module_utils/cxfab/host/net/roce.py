"""What the RoCE workloads of a lossless fabric need from a host, read (never written).

GIDs: every RDMA port lists its GID table in sysfs (the kernel's
Documentation/ABI/stable/sysfs-class-infiniband, `gid_attrs`):

    /sys/class/infiniband/<dev>/ports/<p>/gids/<i>              fe80:0000:...:0001
    /sys/class/infiniband/<dev>/ports/<p>/gid_attrs/types/<i>   RoCE v2 | IB/RoCE v1
    /sys/class/infiniband/<dev>/ports/<p>/gid_attrs/ndevs/<i>   bond0.20

An unused entry reads as an error (EINVAL) in `types` and `ndevs`, so only entries
whose netdev and type both read are listed. A VLAN interface on a RoCE port gets
its own entries (one per address and GID type): the index of the one of the wanted
type is what perftest's `-x` takes.

Locked memory: pam_limits reads /etc/security/limits.conf, then the `*.conf` files
of limits.d in C-locale order, "as if all the files were concatenated" (pam_limits
(8)); for the same domain a later line overrides an earlier one. Only the wildcard
domain `*` is read here: it is what cxfab writes and what RDMA users without a line
of their own get.
"""

from __future__ import annotations

import glob
import os

from . import read_text as _read

LIMITS_CONF = "etc/security/limits.conf"
LIMITS_DIR = "etc/security/limits.d"
UNLIMITED = "unlimited"
_UNLIMITED_WORDS = ("unlimited", "infinity", "-1")


def gid_entries(root: str) -> list[dict]:
    """Every used GID entry of every RDMA port: device, port, index, gid, type, netdev."""
    entries = []
    ports = glob.glob(os.path.join(root, "sys/class/infiniband/*/ports/*"))
    for port_dir in sorted(ports):
        device = port_dir.split(os.sep)[-3]
        port = os.path.basename(port_dir)
        if not port.isdigit():
            continue
        attrs = os.path.join(port_dir, "gid_attrs")
        for type_file in glob.glob(os.path.join(attrs, "types", "*")):
            index = os.path.basename(type_file)
            if not index.isdigit():
                continue
            gid_type = _read(type_file)
            netdev = _read(os.path.join(attrs, "ndevs", index))
            if not gid_type or not netdev:
                continue
            entries.append(
                {
                    "device": device,
                    "port": int(port),
                    "index": int(index),
                    "gid": _read(os.path.join(port_dir, "gids", index)),
                    "type": gid_type,
                    "netdev": netdev,
                }
            )
    return sorted(entries, key=lambda e: (e["device"], e["port"], e["index"]))


def gids_on(root: str, netdevs: list[str]) -> dict[str, list[dict]]:
    """netdev -> its GID entries (an empty list: the netdev has none)."""
    entries = gid_entries(root)
    return {name: [e for e in entries if e["netdev"] == name] for name in netdevs}


def pick_gid(entries: list[dict], gid_type: str) -> dict | None:
    """The first entry of `gid_type`, or None."""
    return next((e for e in entries or [] if e.get("type") == gid_type), None)


def memlock_value(text: str) -> str | None:
    """`unlimited`/`infinity`/`-1` -> unlimited; a KB count -> itself; else None."""
    word = text.strip().lower()
    if word in _UNLIMITED_WORDS:
        return UNLIMITED
    return word if word.isdigit() else None


def parse_memlock(files: list[tuple[str, str]]) -> dict:
    """The `*` memlock limits the files set, in pam_limits order.

    {"soft": {"value", "file"} | None, "hard": ..., "errors": [lines not understood]}
    """
    found: dict = {"soft": None, "hard": None, "errors": []}
    for path, text in files:
        for number, line in enumerate(text.splitlines(), 1):
            words = line.split("#", 1)[0].split()
            if len(words) < 3 or words[0] != "*" or words[2] != "memlock":
                continue
            value = memlock_value(words[3]) if len(words) == 4 else None
            if value is None or words[1] not in ("soft", "hard", "-"):
                found["errors"].append(f"{path}:{number}: {line.strip()!r}")
                continue
            kinds = ("soft", "hard") if words[1] == "-" else (words[1],)
            for kind in kinds:
                found[kind] = {"value": value, "file": path}
    return found


def read_memlock(root: str) -> dict:
    """parse_memlock over limits.conf and limits.d/*.conf as they are on the host."""
    paths = [os.path.join(root, LIMITS_CONF)]
    paths += sorted(glob.glob(os.path.join(root, LIMITS_DIR, "*.conf")))
    files = []
    for path in paths:
        text = _read(path)
        if text is not None:
            files.append(("/" + os.path.relpath(path, root), text))
    return parse_memlock(files)
