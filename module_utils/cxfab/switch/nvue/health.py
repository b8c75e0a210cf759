"""The health checks of a Cumulus Linux switch and of its pair, from NVUE show outputs.

The check ids are the Onyx driver's (switch/onyx/health.py), so verify and the
pair transaction judge both OSes alike: config.saved (no revision waiting for its
confirm), mlag.enabled, mlag.system_mac, mlag.ipl_config (local), mlag.oper,
mlag.ipl_state, mlag.mpo_status, mpo.N (pair), magp.N.config (local) and
magp.N.state (pair) for the VRR gateways, vrrp.V.I.config / .master for VRRP
(health_vrrp.py), pfc/trust/ecn.<port> for lossless RoCE,
and mlag.system_mac_equal across peers. mlag.backup (the partner's management address
as the MLAG backup; backup-active is shown, not judged) stands where Onyx has
mlag_vip.nodes.

Inputs are the raw `-o json` texts by command (SHOWS). Their fields are those
of the NVUE show tables in the Cumulus Linux 5.9 user guide (MLAG "Check MLAG
Status", `nv show interface bond1 bond mlag`, VRR "nv show interface vlan10 ip
vrr", RoCE "nv show qos roce"); the JSON nesting of each table is UNCONFIRMED
until the lab (issue 27) records real outputs, so a value is looked up by the
table's field name and a value that is absent or of another shape fails its
check: an output that is missing, is not JSON or lacks a field never passes.
"""

from __future__ import annotations

from ...common.checks import check, judged
from . import health_vrrp, names
from .show_json import Failed, Unreadable, field, read  # noqa: F401 (the driver's names)

AWAITING = "confirm"  # UNCONFIRMED: a revision applied, its confirm timer running


def show_mlag() -> str:
    return "nv show mlag -o json"


def show_interface(name: str) -> str:
    return f"nv show interface {name} -o json"


def show_vrr(vlan: int) -> str:
    return f"nv show interface {names.svi(vlan)} ip vrr -o json"


def show_roce() -> str:
    return "nv show qos roce -o json"


def show_revisions() -> str:
    """`nv config revision` (5.5+, NVUE command reference "Config Commands"): GET /revision."""
    return "nv config revision -o json"


def needed_shows(structured: dict) -> list[str]:
    shows = [show_revisions()]
    if structured.get("mlag"):
        shows += [show_mlag(), show_interface(names.PEERLINK)]
        shows += [show_interface(names.bond(b["id"])) for b in structured.get("mlag_bonds") or []]
    shows += [show_vrr(g["vlan"]) for g in structured.get("anycast_gateways") or []]
    shows += health_vrrp.needed_shows(structured)
    if structured.get("lossless"):
        shows.append(show_roce())
    return shows


def _truth(value) -> bool:
    """NVUE prints flags as JSON booleans or as True/False/on/yes text."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("true", "on", "yes", "enabled", "up")


def _state(value) -> str:
    """`up`, {"up": {}} -> "up" (the VRR state is a keyed set in the applied tree)."""
    if isinstance(value, dict) and len(value) == 1:
        return next(iter(value))
    return str(value)


def _link_up(data: dict) -> bool:
    link = field(data, "link")
    if "oper-status" in link:
        return str(link["oper-status"]).lower() == "up"
    return _state(field(link, "state")) == "up"


def _mlag_checks(structured: dict, outputs: dict) -> list[dict]:
    name, intent = structured["switch"], structured["mlag"]
    bonds = structured.get("mlag_bonds") or []
    checks = []

    def add(check_id, ok, expected, observed, scope):
        checks.append(judged(check_id, name, ok, expected, observed, scope=scope))

    try:
        mlag = read(outputs, show_mlag())
        enable = _truth(field(mlag, "enable"))
        add("mlag.enabled", enable, "enable on", f"enable {mlag.get('enable')}", "local")
        mac = str(field(mlag, "mac-address"))
        wanted_mac = intent["system_mac"]
        same_mac = mac.lower() == wanted_mac.lower()
        add("mlag.system_mac", same_mac, f"mac-address {wanted_mac}", f"mac-address {mac}", "local")
        peer_if = field(mlag, "peer-interface")
        expected_if = f"peer-interface {names.PEERLINK_SUB}"
        add("mlag.ipl_config", peer_if == names.PEERLINK_SUB, expected_if,
            f"peer-interface {peer_if}", "local")  # fmt: skip
        alive = field(mlag, "peer-alive")
        observed = f"peer-alive {alive}, local-role {mlag.get('local-role')}"
        add("mlag.oper", _truth(alive), "peer-alive True", observed, "pair")
        backup, active = field(mlag, "backup"), field(mlag, "backup-active")
        wanted = structured["partner_management"]["address"]
        backups = sorted(backup) if isinstance(backup, dict | list) else [str(backup)]
        # backup-active is reported, not judged: NVIDIA's 5.9 MLAG page shows a healthy
        # pair with False, its VXLAN active-active page one with True (UNCONFIRMED which
        # means what), and a health gate that failed on it would revert real changes.
        add("mlag.backup", wanted in backups, f"backup {wanted}",
            f"backup {','.join(backups) or 'none'}, backup-active {active}", "local")  # fmt: skip
    except Unreadable as exc:
        for check_id, scope in (
            ("mlag.enabled", "local"),
            ("mlag.system_mac", "local"),
            ("mlag.ipl_config", "local"),
            ("mlag.oper", "pair"),
            ("mlag.backup", "pair"),
        ):
            if any(c["id"] == check_id for c in checks):
                continue  # judged before the field that was missing
            checks.append(
                check(check_id, name, "fail", "readable", f"unreadable: {exc}", scope=scope)
            )
    try:
        up = _link_up(read(outputs, show_interface(names.PEERLINK)))
        checks.append(
            judged(
                "mlag.ipl_state",
                name,
                up,
                f"{names.PEERLINK} up",
                f"{names.PEERLINK} {'up' if up else 'down'}",
                scope="pair",
            )
        )
    except Unreadable as exc:
        checks.append(
            check(
                "mlag.ipl_state",
                name,
                "fail",
                f"{names.PEERLINK} up",
                f"unreadable: {exc}",
                scope="pair",
            )
        )
    dual = 0
    for bond in bonds:
        bond_name = names.bond(bond["id"])
        expected = f"{bond_name} up, bond mlag status dual"
        try:
            data = read(outputs, show_interface(bond_name))
            status, up = field(data, "bond", "mlag", "status"), _link_up(data)
            ok = up and status == "dual"
            dual += ok
            checks.append(
                judged(
                    f"mpo.{bond['id']}",
                    name,
                    ok,
                    expected,
                    f"{bond_name} {'up' if up else 'down'}, status {status}",
                    scope="pair",
                )
            )
        except Unreadable as exc:
            checks.append(
                check(
                    f"mpo.{bond['id']}", name, "fail", expected, f"unreadable: {exc}", scope="pair"
                )
            )
    checks.append(
        judged(
            "mlag.mpo_status",
            name,
            dual == len(bonds),
            f"{len(bonds)} of {len(bonds)} MLAG bonds dual",
            f"{dual} of {len(bonds)} dual and up",
            scope="pair",
        )
    )
    return checks  # fmt: skip


def _vrr_checks(structured: dict, outputs: dict) -> list[dict]:
    name, checks = structured["switch"], []
    for gateway in structured.get("anycast_gateways") or []:
        base = f"magp.{gateway['id']}"
        expected_cfg = f"vrr {gateway['virtual_ip']} mac {gateway['virtual_mac']}"
        try:
            vrr = read(outputs, show_vrr(gateway["vlan"]))
            addresses = [a.split("/")[0] for a in field(vrr, "address")]
            mac = str(field(vrr, "mac-address"))
            ok = (
                gateway["virtual_ip"] in addresses and mac.lower() == gateway["virtual_mac"].lower()
            )
            checks.append(
                judged(
                    base + ".config",
                    name,
                    ok,
                    expected_cfg,
                    f"vrr {','.join(addresses) or 'none'} mac {mac}",
                    scope="local",
                )
            )
            state = _state(field(vrr, "state"))
            checks.append(
                judged(
                    base + ".state", name, state == "up", "state up", f"state {state}", scope="pair"
                )
            )
        except Unreadable as exc:
            checks.append(
                check(
                    base + ".config",
                    name,
                    "fail",
                    expected_cfg,
                    f"unreadable: {exc}",
                    scope="local",
                )
            )
            checks.append(
                check(base + ".state", name, "fail", "state up", f"unreadable: {exc}", scope="pair")
            )
    return checks  # fmt: skip


def _lossless_checks(structured: dict, outputs: dict) -> list[dict]:
    """`qos roce` is switch-wide on NVUE: every lossless port is judged by it."""
    name, lossless = structured["switch"], structured["lossless"]
    priority = lossless["priority"]
    expected = {
        "pfc": f"qos roce mode lossless, PFC priority {priority}",
        "trust": "qos roce trust includes dscp",
        "ecn": f"qos roce ECN on traffic class {lossless['ecn']['traffic_class']}",
    }
    try:
        roce = read(outputs, show_roce())
        mode, pfc_prio = field(roce, "mode"), field(roce, "pfc", "pfc-priority")
        trust = str(field(roce, "trust", "trust-mode"))
        tcs = str(field(roce, "congestion-control", "enabled-tc")).replace(" ", "").split(",")
        observed = {
            "pfc": (
                mode == "lossless" and str(pfc_prio) == str(priority),
                f"mode {mode}, PFC priority {pfc_prio}",
            ),
            "trust": ("dscp" in trust.split(","), f"trust-mode {trust}"),
            "ecn": (str(lossless["ecn"]["traffic_class"]) in tcs, f"enabled-tc {','.join(tcs)}"),
        }
    except Unreadable as exc:
        observed = {kind: (False, f"unreadable: {exc}") for kind in expected}
    return [
        judged(f"{kind}.{port}", name, observed[kind][0], expected[kind], observed[kind][1],
               scope="local")
        for port in lossless["ports"]
        for kind in ("pfc", "trust", "ecn")
    ]  # fmt: skip


def _saved_check(structured: dict, outputs: dict) -> dict:
    """Onyx's `Unsaved changes: no`: 5.9 saves an apply by itself, so what is not kept
    is a revision still waiting for its confirm (the switch rolls it back at the timer)."""
    name, expected = structured["switch"], "no revision awaiting its confirm"
    try:
        revisions = read(outputs, show_revisions(), empty=True)
        states = {rev: field(record, "state") for rev, record in revisions.items()}
    except Unreadable as exc:
        return check("config.saved", name, "fail", expected, f"unreadable: {exc}", scope="local")
    waiting = sorted(rev for rev, state in states.items() if state == AWAITING)
    observed = (f"revision {', '.join(waiting)} awaiting its confirm" if waiting
                else f"{len(states)} revisions, none awaiting its confirm")  # fmt: skip
    return judged("config.saved", name, not waiting, expected, observed, scope="local")


def switch_checks(structured: dict, outputs: dict) -> list[dict]:
    """This switch's checks from {command: its -o json text (None: it failed)}."""
    checks = [_saved_check(structured, outputs)]
    if structured.get("mlag"):
        checks += _mlag_checks(structured, outputs)
    checks += _vrr_checks(structured, outputs)
    checks += health_vrrp.switch_checks(structured, outputs)
    if structured.get("lossless"):
        checks += _lossless_checks(structured, outputs)
    return checks


def pair_checks(pair: str, structured: dict[str, dict], outputs: dict[str, dict]) -> list[dict]:
    """Both peers show the intended MLAG system MAC (mlag.system_mac_equal); one VRRP
    Master per virtual router (vrrp.<vlan>.<vrid>.master)."""
    switches = sorted(structured)
    first = structured[switches[0]]
    vrrp = health_vrrp.pair_checks(pair, structured, outputs)
    if not first.get("mlag"):
        return vrrp
    macs = {}
    for switch in switches:
        try:
            macs[switch] = str(field(read(outputs.get(switch, {}), show_mlag()), "mac-address"))
        except Unreadable:
            macs[switch] = "unreadable"
    seen = {m.lower() for m in macs.values()}
    ok = "unreadable" not in seen and seen == {first["mlag"]["system_mac"].lower()}
    return [
        judged("mlag.system_mac_equal", pair, ok,
               f"mac-address {first['mlag']['system_mac']} on both peers",
               ", ".join(f"{k}: {v}" for k, v in macs.items()), scope="pair"),
        *vrrp,
    ]  # fmt: skip
