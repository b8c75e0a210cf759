"""RoCE facts of a host: the GID table per netdev and the memlock limits pam_limits applies."""

from __future__ import annotations

from pathlib import Path

from cxfab.host.net import roce

# A soft-RoCE port on bond0 with VLAN 20 above it, as rxe fills its table (kernel
# Documentation/ABI/stable/sysfs-class-infiniband, gid_attrs): each address of each
# netdev once per GID type; unused entries fail to read (no file here).
GIDS = [
    (0, "fe80:0000:0000:0000:5054:00ff:fe00:0101", "IB/RoCE v1", "bond0"),
    (1, "fe80:0000:0000:0000:5054:00ff:fe00:0101", "RoCE v2", "bond0"),
    (2, "0000:0000:0000:0000:0000:ffff:0c00:140b", "IB/RoCE v1", "bond0.20"),
    (3, "0000:0000:0000:0000:0000:ffff:0c00:140b", "RoCE v2", "bond0.20"),
]


def gid_tree(root: Path, entries=GIDS, device="rxe0") -> None:
    port = root / "sys/class/infiniband" / device / "ports/1"
    for index, gid, kind, ndev in entries:
        for sub, value in ((f"gids/{index}", gid), (f"gid_attrs/types/{index}", kind),
                           (f"gid_attrs/ndevs/{index}", ndev)):  # fmt: skip
            (port / sub).parent.mkdir(parents=True, exist_ok=True)
            (port / sub).write_text(value + "\n")
    # An unused slot: the GID reads as zeros, its type file is there but unreadable.
    (port / "gids/4").write_text("0000:0000:0000:0000:0000:0000:0000:0000\n")
    (port / "gid_attrs/types/4").mkdir()


def test_gids_listed_per_netdev_with_their_type_and_index(tmp_path):
    gid_tree(tmp_path)
    found = roce.gids_on(str(tmp_path), ["bond0.20", "bond0.30"])
    assert [(e["index"], e["type"]) for e in found["bond0.20"]] == [
        (2, "IB/RoCE v1"),
        (3, "RoCE v2"),
    ]
    assert found["bond0.20"][1]["gid"].endswith("ffff:0c00:140b")
    assert found["bond0.30"] == []  # no VLAN 30 address: no GID on it
    assert roce.pick_gid(found["bond0.20"], "RoCE v2")["index"] == 3
    assert roce.pick_gid(found["bond0.20"], "RoCE v2")["device"] == "rxe0"
    assert roce.pick_gid(found["bond0.30"], "RoCE v2") is None


def test_no_rdma_device_means_no_gid(tmp_path):
    assert roce.gids_on(str(tmp_path), ["bond0.20"]) == {"bond0.20": []}


def test_memlock_later_file_overrides_earlier_and_dash_sets_both():
    files = [
        ("/etc/security/limits.conf", "# default\n*  soft  memlock  64\n*  hard  memlock  64\n"),
        ("/etc/security/limits.d/90-cxfab-rdma.conf", "*    -    memlock    unlimited\n"),
    ]
    found = roce.parse_memlock(files)
    assert found["soft"] == {"value": "unlimited", "file": files[1][0]}
    assert found["hard"] == {"value": "unlimited", "file": files[1][0]}
    assert found["errors"] == []


def test_memlock_overridden_by_a_later_file_is_seen():
    files = [
        ("/etc/security/limits.d/90-cxfab-rdma.conf", "* soft memlock unlimited\n"),
        ("/etc/security/limits.d/99-local.conf", "* soft memlock 8192  # local policy\n"),
    ]
    found = roce.parse_memlock(files)
    assert found["soft"] == {"value": "8192", "file": files[1][0]}
    assert found["hard"] is None


def test_memlock_ignores_other_domains_and_items_and_names_bad_lines():
    files = [
        (
            "/etc/security/limits.conf",
            "@rdma hard memlock 1024\n* hard nofile 4096\n* hard memlock lots\n",
        )
    ]
    found = roce.parse_memlock(files)
    assert found["soft"] is None and found["hard"] is None
    assert found["errors"] == ["/etc/security/limits.conf:3: '* hard memlock lots'"]


def test_memlock_read_in_pam_limits_order(tmp_path):
    limits = tmp_path / "etc/security"
    (limits / "limits.d").mkdir(parents=True)
    (limits / "limits.conf").write_text("* hard memlock 64\n")
    (limits / "limits.d/90-cxfab-rdma.conf").write_text("* hard memlock unlimited\n")
    (limits / "limits.d/10-early.conf").write_text("* hard memlock 128\n")
    (limits / "limits.d/99-notes.txt").write_text("* hard memlock 1\n")  # not a .conf
    found = roce.read_memlock(str(tmp_path))
    assert found["hard"] == {
        "value": "unlimited",
        "file": "/etc/security/limits.d/90-cxfab-rdma.conf",
    }
