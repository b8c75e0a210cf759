"""Verification checks of the InfiniBand ports and their IPoIB interfaces.

From `cxfab_host_facts` (its `ib`: ibstat per ib port, IPoIB mode and MTU from sysfs) and the
host's structured config. A port or interface that could not be read fails with the
read's error: nothing passes on a value that was not read.
"""

from __future__ import annotations

from ..common.checks import Checks


def _ib_ports(sc: dict) -> list[dict]:
    return [
        port
        for nic in sc.get("nics") or []
        for port in nic.get("ports") or []
        if port.get("link_type") == "ib"
    ]


def ib_checks(name: str, sc: dict, result) -> list[dict]:
    """State, subnet manager, rate and link layer of every ib port; IPoIB mode and MTU."""
    out = Checks(name)
    ports = _ib_ports(sc)
    if not ports:
        return out
    # `result`: {"ib": ...} from the host facts, or the facts module's own failed result.
    if not isinstance(result, dict) or result.get("skipped"):
        out.fail("ib.read", "ibstat and IPoIB read on the host", "not read")
        return out
    if result.get("failed") or result.get("unreachable"):
        out.fail(
            "ib.read", "ibstat and IPoIB read on the host", "unreadable", str(result.get("msg"))
        )
        return out
    readings = result.get("ib") or {}
    for port in ports:
        _port_checks(out, port, (readings.get("ports") or {}).get(port["netdev"]))
    for interface in sc.get("ipoib") or []:
        _ipoib_checks(out, interface, (readings.get("ipoib") or {}).get(interface["name"]))
    return out


def _port_checks(out: Checks, port: dict, reading) -> None:
    dev = port["netdev"]
    state_id = f"ib.{dev}.state"
    if not reading or reading.get("error") or not reading.get("port"):
        why = (reading or {}).get("error") or "no reading for this port"
        out.fail(state_id, "State Active, Physical state LinkUp", "unreadable", why)
        return
    ib = reading["port"]
    where = f"{reading['device']} port {reading['ib_port']}"
    infiniband = ib["link_layer"] in ("InfiniBand", "IB")
    out.judge(
        f"ib.{dev}.link_layer",
        infiniband,
        "InfiniBand",
        ib["link_layer"],
        "" if infiniband else f"{where} runs {ib['link_layer']}: LINK_TYPE is not IB (yet)",
    )
    up = ib["state"] == "Active" and ib["physical_state"] == "LinkUp"
    observed = f"State {ib['state']}, Physical state {ib['physical_state']}"
    hint = ""
    if not up and ib["physical_state"] == "LinkUp":
        hint = f"{where} has link but is {ib['state']}: no subnet manager has configured it"
    elif not up:
        hint = f"{where} has no link ({ib['physical_state']}): check the cable and the switch"
    out.judge(state_id, up, "State Active, Physical state LinkUp", observed, hint)
    managed = ib["sm_lid"] != 0 and ib["base_lid"] != 0
    out.judge(
        f"ib.{dev}.sm",
        managed,
        "a subnet manager (SM lid and base lid not 0)",
        f"SM lid {ib['sm_lid']}, base lid {ib['base_lid']}",
        ""
        if managed
        else "no subnet manager answers on this fabric (run opensm or enable the switch's SM)",
    )
    wanted = port.get("speed_gbps")
    rate = f"{ib['rate_gbps']:g} Gb/s" + (f" ({ib['rate_note']})" if ib.get("rate_note") else "")
    if not wanted:
        out.skip(f"ib.{dev}.rate", "not set", "no speed_gbps in the intent")
    else:
        out.judge(f"ib.{dev}.rate", ib["rate_gbps"] == wanted, f"{wanted} Gb/s", rate)


def _ipoib_checks(out: Checks, interface: dict, reading) -> None:
    name = interface["name"]
    for key in ("mode", "mtu"):
        check_id = f"ipoib.{name}.{key}"
        expected = str(interface[key])
        if not reading or reading.get("error"):
            why = (reading or {}).get("error") or "no reading for this interface"
            out.fail(check_id, expected, "unreadable", why)
        else:
            out.judge(check_id, reading[key] == interface[key], expected, str(reading[key]))
