"""InfiniBand ports in verify: the ibstat parser on its real layouts, the reader, the checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from cxfab.host.mlnx import ibport
from cxfab.host.mlnx.ibstat import IbstatParseError, parse_ibstat, port_of
from cxfab.verify.checks import host_checks
from cxfab.verify.ib import ib_checks
from test_hostnet_ipoib import add_function

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mlnx"


def sample(name: str) -> str:
    """A fixture's output, below its `# ---` source header."""
    return (FIXTURES / name).read_text().split("# ---\n", 1)[1]


def test_full_listing_of_an_ib_and_a_roce_function():
    cas = parse_ibstat(sample("ibstat_mlx5_ib_and_roce.txt"))
    assert sorted(cas) == ["mlx5_0", "mlx5_1"]
    ib = cas["mlx5_0"][1]
    assert (ib.state, ib.physical_state, ib.rate_gbps, ib.base_lid, ib.sm_lid) == (
        "Active", "LinkUp", 100.0, 7, 1,
    )  # fmt: skip
    assert ib.infiniband and not cas["mlx5_1"][1].infiniband
    assert cas["mlx5_1"][1].link_layer == "Ethernet"


def test_mlx4_two_ports_fdr10_rate_and_a_port_without_cable():
    ports = parse_ibstat(sample("ibstat_mlx4_fdr10_and_down.txt"))["mlx4_0"]
    assert (ports[1].rate_gbps, ports[1].rate_note, ports[1].sm_lid) == (40.0, "FDR10", 3)
    assert (ports[2].state, ports[2].physical_state, ports[2].base_lid) == ("Down", "Polling", 0)


def test_single_port_layout_of_ibstat_ca_port():
    port = port_of(sample("ibstat_port_no_sm.txt"), "mlx5_0", 1)
    assert (port.state, port.sm_lid, port.base_lid) == ("Initializing", 0, 65535)
    with pytest.raises(IbstatParseError, match="no port 2 of mlx5_0"):
        port_of(sample("ibstat_port_no_sm.txt"), "mlx5_0", 2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ibpanic: [1234] main: 'mlx5_9' IB device can't be found\n", "no CA in the output"),
        ("", r"no CA in the output: \(empty output\)"),
        ("CA: 'mlx5_0'\nPort 1:\nState: Active\nRate: 100\n", "port 1 has no Physical state"),
        (
            "CA: 'mlx5_0'\nPort 1:\nState: Active\nPhysical state: LinkUp\nRate: fast\n"
            "Base lid: 1\nSM lid: 1\nLink layer: InfiniBand\n",
            "unreadable value fast",
        ),
    ],
)
def test_unreadable_output_fails_closed_with_what_was_printed(text, message):
    with pytest.raises(IbstatParseError, match=message):
        parse_ibstat(text)


STRUCTURED = {
    "nics": [
        {
            "name": "cx5ib",
            "pci": "0000:3b:00.0",
            "ports": [{"port": 1, "netdev": "ibp59s0", "link_type": "ib", "speed_gbps": 100}],
        }
    ],
    "ipoib": [{"name": "ibp59s0", "nic": "cx5ib", "pci": "0000:3b:00.0", "port": 1,
               "mode": "connected", "mtu": 65520, "addresses": []}],
}  # fmt: skip


def test_reader_runs_ibstat_on_the_port_rdma_device(tmp_path):
    add_function(tmp_path, "0000:3b:00.0", "mlx5_0", {1: "ibp59s0"}, mode="connected", mtu=65520)
    calls = []

    def runner(argv):
        calls.append(argv)
        return 0, sample("ibstat_port_no_sm.txt"), ""

    got = ibport.gather(STRUCTURED, runner, "/usr/sbin/ibstat", str(tmp_path))
    assert calls == [["/usr/sbin/ibstat", "mlx5_0", "1"]]
    assert got["ports"]["ibp59s0"]["port"]["state"] == "Initializing"
    assert got["ipoib"] == {"ibp59s0": {"mode": "connected", "mtu": 65520}}
    failed = ibport.gather(STRUCTURED, lambda argv: (255, "", "ibpanic: no UMAD"), "ibstat",
                           str(tmp_path))  # fmt: skip
    assert failed["ports"]["ibp59s0"]["error"].startswith("ibstat mlx5_0 1 failed (rc=255)")
    missing = ibport.gather(STRUCTURED, runner, None, str(tmp_path / "none"))
    assert "no RDMA device serves port 1" in missing["ports"]["ibp59s0"]["error"]
    assert "cannot read the IPoIB mode" in missing["ipoib"]["ibp59s0"]["error"]


def _reading(text_name, ipoib=None):
    port = port_of(sample(text_name), *(("mlx5_0", 1)))
    return {
        "ib": {
            "ports": {"ibp59s0": {"device": "mlx5_0", "ib_port": 1, "port": port.as_dict()}},
            "ipoib": {"ibp59s0": ipoib or {"mode": "connected", "mtu": 65520}},
        }
    }


def by_id(checks):
    return {check["id"]: check for check in checks}


def test_healthy_port_passes_every_check():
    text = sample("ibstat_mlx5_ib_and_roce.txt")
    port = parse_ibstat(text)["mlx5_0"][1].as_dict()
    result = {"ib": {"ports": {"ibp59s0": {"device": "mlx5_0", "ib_port": 1, "port": port}},
                     "ipoib": {"ibp59s0": {"mode": "connected", "mtu": 65520}}}}  # fmt: skip
    checks = by_id(ib_checks("h1", STRUCTURED, result))
    assert {c["status"] for c in checks.values()} == {"pass"}
    assert sorted(checks) == [
        "ib.ibp59s0.link_layer", "ib.ibp59s0.rate", "ib.ibp59s0.sm", "ib.ibp59s0.state",
        "ipoib.ibp59s0.mode", "ipoib.ibp59s0.mtu",
    ]  # fmt: skip
    assert checks["ib.ibp59s0.rate"]["observed"] == "100 Gb/s"


def test_port_without_subnet_manager_and_wrong_ipoib_fail_with_the_cause():
    reading = _reading("ibstat_port_no_sm.txt", {"mode": "datagram", "mtu": 2044})
    checks = by_id(ib_checks("h1", STRUCTURED, reading))
    state = checks["ib.ibp59s0.state"]
    assert state["status"] == "fail"
    assert state["observed"] == "State Initializing, Physical state LinkUp"
    assert "no subnet manager has configured it" in state["message"]
    assert checks["ib.ibp59s0.sm"]["status"] == "fail"
    assert checks["ib.ibp59s0.sm"]["observed"] == "SM lid 0, base lid 65535"
    assert (checks["ipoib.ibp59s0.mode"]["status"], checks["ipoib.ibp59s0.mode"]["observed"]) == (
        "fail", "datagram",
    )  # fmt: skip
    assert checks["ipoib.ibp59s0.mtu"]["observed"] == "2044"


def test_a_roce_port_where_ib_was_intended_and_a_slow_rate_fail():
    structured = {**STRUCTURED, "ipoib": []}
    structured["nics"] = [dict(STRUCTURED["nics"][0], ports=[
        {"port": 1, "netdev": "ibp59s0", "link_type": "ib", "speed_gbps": 200}])]  # fmt: skip
    port = parse_ibstat(sample("ibstat_mlx5_ib_and_roce.txt"))["mlx5_1"][1].as_dict()
    result = {"ib": {"ports": {"ibp59s0": {"device": "mlx5_1", "ib_port": 1, "port": port}}}}
    checks = by_id(ib_checks("h1", structured, result))
    assert checks["ib.ibp59s0.link_layer"]["status"] == "fail"
    assert "LINK_TYPE is not IB" in checks["ib.ibp59s0.link_layer"]["message"]
    assert (checks["ib.ibp59s0.rate"]["status"], checks["ib.ibp59s0.rate"]["expected"]) == (
        "fail", "200 Gb/s",
    )  # fmt: skip


def test_nothing_read_never_passes():
    assert by_id(ib_checks("h1", STRUCTURED, None))["ib.read"]["status"] == "fail"
    failed = {"failed": True, "msg": "MODULE FAILURE"}
    assert by_id(ib_checks("h1", STRUCTURED, failed))["ib.read"]["message"] == "MODULE FAILURE"
    errors = {"ib": {"ports": {"ibp59s0": {"error": "ibstat is not installed"}}, "ipoib": {}}}
    checks = by_id(ib_checks("h1", STRUCTURED, errors))
    assert checks["ib.ibp59s0.state"]["status"] == "fail"
    assert checks["ib.ibp59s0.state"]["message"] == "ibstat is not installed"
    assert checks["ipoib.ibp59s0.mode"]["message"] == "no reading for this interface"
    # A host without ib ports gets no InfiniBand check at all.
    assert ib_checks("h1", {"nics": [], "ipoib": []}, None) == []


def test_host_checks_include_the_ib_checks():
    sc = {**STRUCTURED, "network": {"bond": None, "members": [], "vlans": []}}
    checks = by_id(host_checks("h1", sc, {"facts": {"skipped": True}, "ib": None}))
    assert checks["ib.read"]["category"] == "link/cable"
