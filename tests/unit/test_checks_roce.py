"""roce.gid.<if> and roce.memlock: judged on what cxfab_host_facts read, never passed unread."""

from __future__ import annotations

from cxfab.verify.roce import roce_checks

SC = {
    "network": {
        "vlans": [
            {"name": "bond0.10", "id": 10},
            {"name": "bond0.20", "id": 20},
        ]
    },
    "lossless": {
        "roce": {"vlans": [20], "gid_type": "RoCE v2", "tos": 104, "dscp": 26},
        "memlock_kb": 0,
    },
}
V2 = {"device": "rxe0", "port": 1, "index": 3, "type": "RoCE v2", "gid": "::ffff:12.0.20.11"}
V1 = {**V2, "index": 2, "type": "IB/RoCE v1"}
CXFAB_FILE = "/etc/security/limits.d/90-cxfab-rdma.conf"
UNLIMITED = {
    "soft": {"value": "unlimited", "file": CXFAB_FILE},
    "hard": {"value": "unlimited", "file": CXFAB_FILE},
    "errors": [],
}


def by_id(facts, sc=SC):
    return {c["id"]: c for c in roce_checks("h1", sc, facts)}


def test_a_roce_v2_gid_and_unlimited_memlock_pass_with_what_was_read():
    found = by_id({"roce": {"gids": {"bond0.20": [V1, V2]}, "memlock": UNLIMITED}})
    assert set(found) == {"roce.gid.bond0.20", "roce.memlock"}  # VLAN 10 carries no RoCE
    gid = found["roce.gid.bond0.20"]
    assert gid["status"] == "pass" and gid["category"] == "lossless"
    assert gid["observed"] == "rxe0 port 1 index 3 (::ffff:12.0.20.11)"
    assert found["roce.memlock"]["status"] == "pass"
    assert found["roce.memlock"]["observed"] == (
        f"soft unlimited ({CXFAB_FILE}), hard unlimited ({CXFAB_FILE})"
    )


def test_only_v1_gids_or_none_fail_naming_what_is_there():
    only_v1 = by_id({"roce": {"gids": {"bond0.20": [V1]}, "memlock": UNLIMITED}})
    assert only_v1["roce.gid.bond0.20"]["status"] == "fail"
    assert only_v1["roce.gid.bond0.20"]["observed"] == "only IB/RoCE v1 GIDs"
    none = by_id({"roce": {"gids": {"bond0.20": []}, "memlock": UNLIMITED}})
    assert none["roce.gid.bond0.20"]["observed"] == "no GID on bond0.20"


def test_the_v1_type_is_picked_when_the_fabric_asks_for_it():
    sc = {**SC, "lossless": {**SC["lossless"], "roce": {**SC["lossless"]["roce"],
                                                         "gid_type": "IB/RoCE v1"}}}  # fmt: skip
    found = by_id({"roce": {"gids": {"bond0.20": [V2, V1]}, "memlock": UNLIMITED}}, sc)
    assert found["roce.gid.bond0.20"]["observed"].startswith("rxe0 port 1 index 2 ")


def test_memlock_overridden_or_missing_fails_with_the_file():
    later = {
        "soft": {"value": "8192", "file": "/etc/security/limits.d/99-local.conf"},
        "hard": None,
        "errors": [],
    }
    check = by_id({"roce": {"gids": {"bond0.20": [V2]}, "memlock": later}})["roce.memlock"]
    assert check["status"] == "fail"
    assert check["observed"] == "soft 8192 (/etc/security/limits.d/99-local.conf), hard not set"
    assert check["message"].startswith("soft and hard memlock differ")


def test_a_kb_limit_is_compared_as_asked():
    sc = {**SC, "lossless": {**SC["lossless"], "memlock_kb": 65536}}
    found = by_id({"roce": {"gids": {"bond0.20": [V2]}, "memlock": UNLIMITED}}, sc)
    assert found["roce.memlock"]["status"] == "fail"
    assert found["roce.memlock"]["expected"].startswith("memlock 65536 ")


def test_facts_without_the_roce_readings_fail_and_lossless_off_adds_nothing():
    unread = by_id({"rdma": {}})
    assert {c["status"] for c in unread.values()} == {"fail"}
    assert {c["observed"] for c in unread.values()} == {"not read"}
    assert by_id({"roce": {}}, {**SC, "lossless": None}) == {}
