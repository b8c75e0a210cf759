"""Health checks report pass/fail with the expected and the observed value."""

from cxfab.switch.onyx import health, shows
from cxfab.switch.secrets import redact
from onyx_helpers import FIXTURES, example_fabric, intended


def _outputs(mlag_file, unsaved="no"):
    return {
        "files": f"Active configuration: initial\nUnsaved changes : {unsaved}\n",
        "mlag": (FIXTURES / mlag_file).read_text(),
        "mlag_vip": "MLAG-VIP:\n MLAG group name: rack1-mlag\n MLAG VIP address: 10.0.0.50/24\n"
        " Active nodes: 2\n\n----\nHostname  VIP-State  IP Address\n----\n"
        "sw-a   master   10.0.0.51\nsw-b   standby   10.0.0.52\n",
        "mpo": "  Group          Type     Local          Peer\n"
        "  1 Mpo1(U)     LACP     Eth1/1(P)      Eth1/1(P)\n"
        "  2 Mpo2(U)     LACP     Eth1/2(S)      Eth1/2(P)\n",
        "magp": "".join(
            f"\nMAGP {i}:\n  Interface vlan: {i}\n  Admin state   : Enabled\n"
            f"  State         : Master\n  Virtual IP    : 12.0.{0 if i == 1 else i}.1\n"
            f"  Virtual MAC   : 00:00:5E:00:01:{i:02X}\n"
            for i in (1, 10, 20, 30)
        ),
    }


def _by_id(checks):
    return {c["id"]: c for c in checks}


def test_healthy_mlag_passes_and_suspended_member_fails():
    sc, _ = intended(example_fabric(), "sw-a")
    checks = _by_id(health.switch_checks(sc, _outputs("show_mlag_healthy.txt"), {}))
    for check_id in (
        "config.saved",
        "mlag.enabled",
        "mlag.oper",
        "mlag.ipl_state",
        "mlag.ipl_config",
        "mlag.mpo_status",
        "mlag_vip.nodes",
        "mpo.1",
        "magp.10.state",
        "magp.30.config",
    ):
        assert checks[check_id]["status"] == "pass", checks[check_id]
    assert checks["mpo.2"]["status"] == "fail"
    assert checks["mpo.2"]["observed"] == "Mpo2(U), members Eth1/2(S)"
    assert set(checks["mpo.2"]) >= {
        "id",
        "target",
        "category",
        "status",
        "expected",
        "observed",
        "message",
    }


def test_mismatched_system_mac_and_ipl_down_are_reported_with_observed_values():
    sc, _ = intended(example_fabric(), "sw-a")
    checks = _by_id(health.switch_checks(sc, _outputs("show_mlag_mismatched.txt", "yes"), {}))
    assert checks["mlag.system_mac"]["status"] == "fail"
    assert checks["mlag.system_mac"]["observed"] == "System-mac: 00:00:5E:00:01:5E [Mismatched]"
    assert checks["mlag.ipl_state"]["observed"] == "IPL 1 Down"
    assert checks["mlag.mpo_status"]["observed"] == "Inactive 0, Active-partial 2, Active-full 0"
    assert checks["config.saved"]["status"] == "fail"


def test_unreadable_show_fails_the_checks_with_the_error():
    sc, _ = intended(example_fabric(), "sw-a")
    outputs = _outputs("show_mlag_healthy.txt")
    outputs["mlag"] = None
    checks = _by_id(health.switch_checks(sc, outputs, {"mlag": "% Unrecognized command"}))
    assert checks["mlag.oper"]["status"] == "fail"
    assert "Unrecognized" in checks["mlag.oper"]["observed"]


def test_pair_checks_need_exactly_one_vrrp_master():
    fabric = example_fabric()
    for vlan in fabric["vlans"]:
        if vlan["id"] == 10:
            vlan["gateway"] = {"mode": "vrrp", "virtual_ip": "12.0.10.1", "vrrp": {}}
    structures = {name: intended(fabric, name)[0] for name in ("sw-a", "sw-b")}
    vrrp = (
        "Interface  VR  Pri  Time  Pre  State   VR IP addr\n"
        "-------------------------------------------------\n"
        "Vlan10     10  100  1s    Y    {}  12.0.10.1\n"
    )
    both = {
        "sw-a": {"vrrp": vrrp.format("Master"), "mlag": None},
        "sw-b": {"vrrp": vrrp.format("Master"), "mlag": None},
    }
    checks = _by_id(health.pair_checks("rack1", structures, both))
    assert checks["vrrp.10.10.master"]["status"] == "fail"
    both["sw-b"]["vrrp"] = vrrp.format("Backup")
    assert (
        _by_id(health.pair_checks("rack1", structures, both))["vrrp.10.10.master"]["status"]
        == "pass"
    )


def test_secrets_are_redacted_from_backups():
    text = (FIXTURES / "sw-a_3.6.5000_running.cfg").read_text()
    clean = redact(text, ["s3cret"]) + redact("login failed for s3cret", ["s3cret"])
    assert "secrethashvalue" not in clean and "s3cret" not in clean
    assert "username admin password <redacted>" in clean
    assert "interface vlan 10 mtu 9000" in clean


# ---------------------------------------------------------------- lossless RoCE
CORPUS = FIXTURES / "corpus"


def test_dcb_pfc_layouts_parse():
    on = shows.parse_show_dcb_pfc((CORPUS / "dcb_pfc.txt").read_text())
    assert on["enabled"] is True and on["priorities"] == [3]
    assert on["ports"]["1/2"] == {"admin": "Auto", "oper": "Enabled"}
    assert on["ports"]["1/3"]["oper"] == "Disabled"
    off = shows.parse_show_dcb_pfc((CORPUS / "dcb_pfc_disabled.txt").read_text())
    assert off["enabled"] is False and off["priorities"] == []
    assert off["ports"]["1/1"] == {"admin": "On", "oper": "Disabled"}


def test_dcb_pfc_unreadable_replies_fail_closed():
    for text, why in (
        ("", "no PFC, Priority Enabled List"),
        ("PFC: enabled\nPriority Enabled List: 3\n", "no Interface / PFC admin / PFC oper"),
        ("PFC: enabled\nPriority Enabled List: high\n", "not 0-7"),
    ):
        try:
            shows.parse_show_dcb_pfc(text)
        except health.ReadError as exc:
            assert why in str(exc) and "show dcb priority-flow-control" in str(exc)
        else:
            raise AssertionError(f"{text!r} was read")


def _lossless_outputs(running):
    """`running`: a config body; the switch prints it under its running-database header."""
    return {
        **_outputs("show_mlag_healthy.txt"),
        "pfc": (CORPUS / "dcb_pfc.txt").read_text(),
        "running": '##\n## Running database "initial"\n##\n' + running,
    }


def test_a_running_config_without_its_header_fails_the_checks_built_on_it():
    sc, text = intended(example_fabric(), "sw-a")
    checks = _by_id(health.switch_checks(sc, {**_lossless_outputs(text), "running": text}, {}))
    for check_id in ("trust.1/1", "ecn.1/2"):
        assert checks[check_id]["status"] == "fail"
        assert (
            "could not read `show running-config`: no `## Running database`"
            in (checks[check_id]["observed"])
        )


def test_lossless_checks_read_pfc_per_port_trust_and_ecn():
    sc, text = intended(example_fabric(), "sw-a")
    assert health.needed_shows(sc)[-2:] == ["pfc", "running"]
    checks = _by_id(health.switch_checks(sc, _lossless_outputs(text), {}))
    for check_id in ("pfc.priority", "pfc.1/1", "pfc.1/2", "trust.1/1", "ecn.1/2"):
        assert checks[check_id]["status"] == "pass", checks[check_id]
        assert checks[check_id]["category"] == "lossless"
    assert checks["ecn.1/1"]["observed"] == "ECN 150-1500 KB"


def test_a_removed_pfc_or_trust_line_is_caught():
    sc, text = intended(example_fabric(), "sw-a")
    running = text.replace("interface ethernet 1/2 qos trust L3\n", "")
    pfc = (
        (CORPUS / "dcb_pfc.txt")
        .read_text()
        .replace(
            "Eth1/2           Auto             Enabled",
            "Eth1/2           Auto             Disabled",
        )
    )
    outputs = {**_lossless_outputs(running), "pfc": pfc}
    checks = _by_id(health.switch_checks(sc, outputs, {}))
    assert checks["pfc.1/2"]["status"] == "fail"
    assert checks["pfc.1/2"]["observed"] == "PFC admin Auto, oper Disabled"
    assert checks["trust.1/2"]["status"] == "fail"
    assert checks["trust.1/2"]["observed"] == "no qos trust line (default L2)"
    assert checks["trust.1/1"]["status"] == "pass"


def test_lossless_checks_fail_when_the_shows_could_not_be_read():
    sc, _ = intended(example_fabric(), "sw-a")
    outputs = {**_outputs("show_mlag_healthy.txt"), "pfc": "", "running": None}
    checks = _by_id(health.switch_checks(sc, outputs, {"running": "% timeout"}))
    assert checks["pfc.priority"]["status"] == "fail"
    assert "could not read `show dcb priority-flow-control`" in checks["pfc.priority"]["observed"]
    assert checks["ecn.1/1"]["status"] == "fail" and "% timeout" in checks["ecn.1/1"]["observed"]
