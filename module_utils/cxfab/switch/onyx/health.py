"""The post-deploy health checks of an Onyx switch and of its pair, from its show outputs.

Every check returns {id, target, category, status, expected, observed,
message, scope}: status is `pass` or `fail`; scope is `local` when the check
holds for a switch on its own (its config, saved state) and `pair` when it
needs the partner too (MLAG Up, IPL Up, MPOs Active-full, MAGP Master, one
VRRP master per VRID). A switch whose partner is still blank can pass only
the local checks.

The outputs are read by shows.py, which fails closed: an output it cannot read
raises ReadError, and the checks built on it fail with that message. A check
never compares two missing values.
"""

from __future__ import annotations

from ...common.checks import check, judged, one_master
from .readerror import ReadError
from .readerror import unreadable as _unreadable
from .shows import PARSERS, parse, parse_show_vrrp, show_command
from .statements import ONYX_TRUST


def needed_shows(structured: dict) -> list[str]:
    names = ["files"]
    if structured.get("mlag"):
        names += ["mlag", "mlag_vip", "mpo"]
    if structured.get("anycast_gateways"):
        names.append("magp")
    if structured.get("vrrp"):
        names.append("vrrp")
    if structured.get("lossless"):
        names += ["pfc", "running"]
    return names


def switch_checks(
    structured: dict,
    outputs: dict[str, str | None],
    errors: dict[str, str],
    release: str | None = None,
) -> list[dict]:
    """Checks of one switch from its show outputs (None = the command failed)."""
    name = structured["switch"]
    checks: list[dict] = []
    errors, parsed = dict(errors), {}
    for key in PARSERS:
        if outputs.get(key) is None:
            continue
        try:
            parsed[key] = parse(key, outputs[key], release)
        except ReadError as exc:
            # A check never passes on a value it did not read.
            said = f"release {release or 'unknown'}"
            errors[key] = str(exc) if said in str(exc) else f"{exc} ({said})"

    def unavailable(key):
        return f"`{show_command(key, release)}` failed: {errors.get(key, 'no output')}"

    files = parsed.get("files")
    if files is None:
        checks.append(
            check(
                "config.saved",
                name,
                "fail",
                "Unsaved changes: no",
                unavailable("files"),
                scope="local",
            )
        )
    else:
        unsaved = files["unsaved"]
        checks.append(
            judged(
                "config.saved",
                name,
                unsaved is False,
                "Unsaved changes: no",
                f"Unsaved changes: {'unknown' if unsaved is None else 'yes' if unsaved else 'no'}",
                scope="local",
            )
        )

    mlag_intent = structured.get("mlag")
    if mlag_intent:
        checks += _mlag_checks(structured, parsed, unavailable)
    if structured.get("anycast_gateways"):
        checks += _magp_checks(structured, parsed.get("magp"), unavailable)
    if structured.get("vrrp"):
        checks += _vrrp_local_checks(structured, parsed.get("vrrp"), unavailable)
    if structured.get("lossless"):
        checks += lossless_checks(structured, parsed, unavailable)
    return checks


def lossless_checks(structured, parsed, unavailable) -> list[dict]:
    """PFC on the RoCE priority and on each RoCE port (read from `show dcb
    priority-flow-control`), DSCP trust and ECN thresholds (read from the running config)."""
    name, intent = structured["switch"], structured["lossless"]
    checks = []

    def add(check_id, ok, expected, observed, message=""):
        checks.append(judged(check_id, name, ok, expected, observed, message, scope="local"))

    priority = intent["priority"]
    pfc = parsed.get("pfc")
    expected = f"PFC enabled, priority {priority} in the enabled list"
    if pfc is None:
        add("pfc.priority", False, expected, unavailable("pfc"))
    else:
        observed = (
            f"PFC {'enabled' if pfc['enabled'] else 'disabled'}, "
            f"enabled priorities {pfc['priorities'] or 'none'}"
        )
        add("pfc.priority", pfc["enabled"] and priority in pfc["priorities"], expected, observed)
    for port in intent["ports"]:
        expected = "PFC oper Enabled"
        if pfc is None:
            add(f"pfc.{port}", False, expected, unavailable("pfc"))
            continue
        row = pfc["ports"].get(port)
        observed = f"PFC admin {row['admin']}, oper {row['oper']}" if row else "port not listed"
        add(f"pfc.{port}", bool(row) and row["oper"] == "Enabled", expected, observed)
    running = parsed.get("running")
    ecn = intent["ecn"]
    for port in intent["ports"]:
        trust_wanted = ONYX_TRUST[intent["trust"]]
        trust_expected = f"qos trust {trust_wanted}"
        ecn_expected = (
            f"traffic-class {ecn['traffic_class']} ECN {ecn['min_kb']}-{ecn['max_kb']} KB"
        )
        if running is None:
            add(f"trust.{port}", False, trust_expected, unavailable("running"))
            add(f"ecn.{port}", False, ecn_expected, unavailable("running"))
            continue
        trust = running.get(("eth_trust", port))
        add(f"trust.{port}", trust == trust_wanted, trust_expected,
            f"qos trust {trust}" if trust else "no qos trust line (default L2)")  # fmt: skip
        marks = running.get(("eth_ecn", port, ecn["traffic_class"]))
        observed = f"ECN {marks[0]}-{marks[1]} KB" if marks else "no ECN on the traffic class"
        add(f"ecn.{port}", marks == (ecn["min_kb"], ecn["max_kb"]), ecn_expected, observed)
    return checks


def _mlag_checks(structured, parsed, unavailable) -> list[dict]:
    name, intent = structured["switch"], structured["mlag"]
    ipl = intent["peer_link"]
    mlag = parsed.get("mlag")
    checks = []
    expected_ipl = f"Po{ipl['bond_id']} vlan {ipl['vlan']} peer {ipl['peer_address']}"
    mpo_count = len(structured.get("mlag_bonds") or [])
    if mlag is None:
        observed = unavailable("mlag")
        for check_id, scope in (
            ("mlag.enabled", "local"),
            ("mlag.system_mac", "local"),
            ("mlag.ipl_config", "local"),
            ("mlag.oper", "pair"),
            ("mlag.ipl_state", "pair"),
            ("mlag.mpo_status", "pair"),
        ):
            checks.append(check(check_id, name, "fail", "readable", observed, scope=scope))
    else:
        checks.append(
            judged(
                "mlag.enabled",
                name,
                mlag["admin"] == "Enabled",
                "Admin status: Enabled",
                f"Admin status: {mlag['admin']}",
                scope="local",
            )
        )
        checks.append(
            check(
                "mlag.system_mac",
                name,
                "pass"
                if mlag["system_mac"] == intent["system_mac"] and not mlag["mismatched"]
                else "fail",
                f"System-mac: {intent['system_mac']}",
                f"System-mac: {mlag['system_mac_raw']}",
                scope="local",
            )
        )
        row = next((r for r in mlag["ipls"] if r["id"] == ipl["id"]), None)
        observed_ipl = (
            f"Po{row['port_channel']} vlan {row['vlan']} peer {row['peer_ip']}"
            if row
            else "no IPL row"
        )
        checks.append(
            judged(
                "mlag.ipl_config",
                name,
                observed_ipl == expected_ipl,
                expected_ipl,
                observed_ipl,
                scope="local",
            )
        )
        checks.append(
            judged(
                "mlag.oper",
                name,
                mlag["oper"] == "Up",
                "Operational status: Up",
                f"Operational status: {mlag['oper']}",
                scope="pair",
            )
        )
        checks.append(
            judged(
                "mlag.ipl_state",
                name,
                bool(row) and row["state"] == "Up",
                f"IPL {ipl['id']} Up",
                f"IPL {ipl['id']} {row['state'] if row else 'missing'}",
                scope="pair",
            )
        )
        observed = (
            f"Inactive {mlag['inactive']}, Active-partial {mlag['active_partial']}, "
            f"Active-full {mlag['active_full']}"
        )
        checks.append(
            check(
                "mlag.mpo_status",
                name,
                "pass"
                if mlag["inactive"] == 0
                and mlag["active_partial"] == 0
                and mlag["active_full"] == mpo_count
                else "fail",
                f"Inactive 0, Active-partial 0, Active-full {mpo_count}",
                observed,
                scope="pair",
            )
        )

    vip = parsed.get("mlag_vip")
    if vip is None:
        checks.append(
            check(
                "mlag_vip.nodes",
                name,
                "fail",
                "Active nodes: 2, one master, one standby",
                unavailable("mlag_vip"),
                scope="pair",
            )
        )
        checks.append(
            check(
                "mlag_vip.address",
                name,
                "fail",
                f"{intent['domain']} {intent['vip']}",
                unavailable("mlag_vip"),
                scope="local",
            )
        )
    else:
        states = sorted(node["state"] for node in vip["nodes"])
        ok = vip["active_nodes"] == 2 and states == ["master", "standby"]
        checks.append(
            judged(
                "mlag_vip.nodes",
                name,
                ok,
                "Active nodes: 2, one master, one standby",
                f"Active nodes: {vip['active_nodes']}, states: {', '.join(states) or 'none'}",
                scope="pair",
            )
        )
        checks.append(
            check(
                "mlag_vip.address",
                name,
                "pass"
                if vip["group"] == intent["domain"] and vip["vip"] == intent["vip"]
                else "fail",
                f"{intent['domain']} {intent['vip']}",
                f"{vip['group']} {vip['vip']}",
                scope="local",
            )
        )

    mpos = parsed.get("mpo")
    for mpo in structured.get("mlag_bonds") or []:
        check_id = f"mpo.{mpo['id']}"
        if mpos is None:
            checks.append(
                check(check_id, name, "fail", "(U), members (P)", unavailable("mpo"), scope="pair")
            )
            continue
        row = mpos.get(mpo["id"])
        if row is None:
            checks.append(
                check(check_id, name, "fail", f"Mpo{mpo['id']}(U)", "not listed", scope="pair")
            )
            continue
        # Every intended member on this switch is listed and bundled (P); one Individual
        # (I), down, suspended or absent (`N/A`) is named, and so is a stray (S)/(D) member.
        flags = dict(row["ports"])
        bad = [f"Eth{p}({flags.get(p, 'absent')})" for p in mpo["members"] if flags.get(p) != "P"]
        bad += [
            f"Eth{p}({f})" for p, f in row["ports"] if p not in mpo["members"] and f in ("S", "D")
        ]
        observed = f"Mpo{mpo['id']}({row['flag']})" + (f", members {' '.join(bad)}" if bad else "")
        wanted = " ".join(f"Eth{p}(P)" for p in mpo["members"]) or "none"
        checks.append(
            judged(
                check_id,
                name,
                row["flag"] == "U" and not bad,
                f"Mpo{mpo['id']}(U), members {wanted}",
                observed,
                scope="pair",
            )
        )
    return checks


def _magp_config(gateway: dict) -> str:
    return f"vlan {gateway['vlan']} {gateway['virtual_ip']} {gateway['virtual_mac']}"


def _vrrp_config(gateway: dict) -> str:
    return f"address {gateway['virtual_ip']}, priority {gateway['priority']}"


def _instance_config(parsed: dict, key, describe) -> str:
    """How the switch shows the gateway instance `key` (described like the intent)."""
    instance = parsed.get(key)
    return describe(instance) if instance else "instance missing"


def _magp_checks(structured, parsed, unavailable) -> list[dict]:
    name, checks = structured["switch"], []
    for gateway in structured["anycast_gateways"]:
        base = f"magp.{gateway['id']}"
        expected_cfg = _magp_config(gateway)
        expected_state = "Admin Enabled, State Master"
        if parsed is None:
            # Both checks fail: an unread state must not vanish from the report either.
            observed = unavailable("magp")
            checks.append(
                judged(base + ".config", name, False, expected_cfg, observed, scope="local")
            )
            checks.append(
                judged(base + ".state", name, False, expected_state, observed, scope="pair")
            )
            continue
        observed_cfg = _instance_config(parsed, gateway["id"], _magp_config)
        checks.append(
            judged(
                base + ".config",
                name,
                observed_cfg == expected_cfg,
                expected_cfg,
                observed_cfg,
                scope="local",
            )
        )
        inst = parsed.get(gateway["id"]) or {}
        state = inst["state"] if inst else "missing"
        checks.append(
            judged(
                base + ".state",
                name,
                state == "Master" and inst.get("admin") == "Enabled",
                expected_state,
                f"Admin {inst.get('admin')}, State {state}",
                scope="pair",
            )
        )
    return checks


def _vrrp_local_checks(structured, parsed, unavailable) -> list[dict]:
    name, checks = structured["switch"], []
    for gateway in structured["vrrp"]:
        check_id = f"vrrp.{gateway['vlan']}.{gateway['vrid']}.config"
        expected = _vrrp_config(gateway)
        if parsed is None:
            observed, ok = unavailable("vrrp"), False
        else:
            observed = _instance_config(parsed, (gateway["vlan"], gateway["vrid"]), _vrrp_config)
            ok = observed == expected
        checks.append(judged(check_id, name, ok, expected, observed, scope="local"))
    return checks


def pair_checks(
    pair: str,
    structured: dict[str, dict],
    outputs: dict[str, dict],
    releases: dict[str, str | None] | None = None,
) -> list[dict]:
    """Checks that compare the two peers: same system MAC, one VRRP master per VRID.

    `releases` (switch -> release) says how each output was asked for (text when absent)."""
    checks, releases = [], releases or {}
    names = sorted(structured)
    first = structured[names[0]]
    if first.get("mlag"):
        # Compared normalised (common.addressing.mac): one peer read by JSON and one by
        # text may print the same MAC in different case; the raw values are shown.
        macs, normalised = {}, set()
        for switch in names:
            text = outputs.get(switch, {}).get("mlag")
            try:
                mlag = parse("mlag", text, releases.get(switch))
                macs[switch] = mlag["system_mac_raw"] or "unreadable"
                normalised.add(None if mlag["mismatched"] else mlag["system_mac"])
            except ReadError:
                macs[switch] = "unreadable"
                normalised.add(None)
        ok = len(normalised) == 1 and None not in normalised
        checks.append(
            judged(
                "mlag.system_mac_equal",
                pair,
                ok,
                f"System-mac {first['mlag']['system_mac']} on both peers",
                ", ".join(f"{k}: {v}" for k, v in macs.items()),
                scope="pair",
            )
        )
    for gateway in first.get("vrrp") or []:
        key = (gateway["vlan"], gateway["vrid"])
        states, unread = {}, []
        for switch in names:
            text = outputs.get(switch, {}).get("vrrp")
            try:
                if text is None:
                    raise _unreadable("show vrrp", "", "the command failed or was not run")
                inst = parse_show_vrrp(text).get(key)
            except ReadError as exc:
                # A partner that could not be read is not "no master there".
                states[switch] = str(exc)
                unread.append(switch)
                continue
            states[switch] = inst["state"] if inst else "instance absent"
        checks.append(one_master(key[0], key[1], pair, states, unread))
    return checks
