"""verify.yml --tags verify_cabling: the cabling section alone (section `cabling`).

Only each cabled port's LLDP neighbour is judged and expected; a host whose facts
could not be read fails, and every cabled port's check it did not produce fails "not
measured" - the section cannot go green without an LLDP reading.
"""

from __future__ import annotations

from cxfab.verify import checks

from tests.unit.checks_data import WORKLOADS, host_data, host_intent, structured


def _fabric():
    host = host_intent(1)
    for port, switch in zip(host["nics"][0]["ports"], ("sw-a", "sw-b"), strict=True):
        port.update(peer=switch, peer_port="1/3")
    return {
        "hosts": {"h1": host},
        "structured": {"h1": structured(host)},
        "vlans": [],
        "workloads": WORKLOADS,
    }


def _lldp(first, second):
    return {"lldp": {"neighbours": {
        "ens1f0": [{"sysname": first, "port_id": "Eth1/3"}],
        "ens1f1": [{"sysname": second, "port_id": "Eth1/3"}],
    }}}  # fmt: skip


def _by_id(found):
    return {c["id"]: c for c in found["checks"]}


def test_the_cabling_section_judges_only_the_neighbours():
    found = _by_id(
        checks.all_checks(_fabric(), {"h1": host_data(_lldp("sw-a", "sw-b"))}, {}, {}, [],
                          ["cabling"])
    )  # fmt: skip
    assert set(found) == {"link.ens1f0.neighbour", "link.ens1f1.neighbour"}
    assert {c["status"] for c in found.values()} == {"pass"}
    crossed = _by_id(
        checks.all_checks(_fabric(), {"h1": host_data(_lldp("sw-b", "sw-a"))}, {}, {}, [],
                          ["cabling"])
    )  # fmt: skip
    assert {c["status"] for c in crossed.values()} == {"fail"}
    assert crossed["link.ens1f0.neighbour"]["observed"] == "sw-b Eth1/3"


def test_the_cabling_section_fails_without_a_reading():
    failed_facts = host_data(facts={}, facts_failed=True)
    failed_facts["facts"] = {"failed": True, "msg": "lldpcli timed out"}
    found = _by_id(checks.all_checks(_fabric(), {"h1": failed_facts}, {}, {}, [], ["cabling"]))
    assert found["host.facts"]["status"] == "fail"
    for port in ("ens1f0", "ens1f1"):
        check = found[f"link.{port}.neighbour"]
        assert check["status"] == "fail" and "not measured" in check["message"], check
    unreachable = _by_id(checks.all_checks(_fabric(), {}, {}, {}, [], ["cabling"]))
    assert unreachable["host.data"]["status"] == "fail"
    assert unreachable["link.ens1f1.neighbour"]["status"] == "fail"


def test_a_host_run_holds_the_cabling_once():
    hosts = checks.all_checks(
        _fabric(), {"h1": host_data({**_lldp("sw-a", "sw-b")})}, {}, {}, [], ["hosts"]
    )
    ids = [c["id"] for c in hosts["checks"]]
    assert ids.count("link.ens1f0.neighbour") == 1
    assert len(ids) > 2  # the whole host section, not the cabling alone
