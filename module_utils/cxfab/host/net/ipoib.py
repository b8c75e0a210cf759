"""IPoIB interfaces: find them from the adapter port, read and set their mode and MTU.

Finding the interface of an adapter port (explicit, never guessed from names):

1. the RDMA device of the port. `/sys/class/infiniband/<dev>/device` is the PCI
   function the device sits on. A ConnectX-4 and later (mlx5) has one PCI function
   and one RDMA device per port, each with a single IB port 1: adapter port N is
   port 1 of the device on function `<pci>` + (N - 1). A ConnectX-3 (mlx4) has one
   function and one device with ports 1 and 2: adapter port N is port N of the
   device on `<pci>` itself. The device on `<pci>` with a `ports/N` directory is
   taken first, so both layouts resolve without knowing the family;
2. its IPoIB interface: of the netdevs under `/sys/class/infiniband/<dev>/device/net/`,
   the one with `type` 32 (ARPHRD_INFINIBAND) whose `dev_port` is the IB port - 1
   (the ib_ipoib driver sets it; `dev_id` on kernels that predate it) and which is
   no P_Key child (a child has a `parent` file).

Mode and MTU are the interface's sysfs files `mode` (`datagram` / `connected`) and
`mtu`, read and written under a root prefix so the tests run on a copied tree.
Writing `connected` makes the kernel raise the MTU to 65520 itself; writing
`datagram` clamps it to the multicast (IB link) MTU - 4; the MTU is written after
the mode and every value is read back.
"""

from __future__ import annotations

import errno
import os
import re

from . import IntentError
from . import read_text as _read

ARPHRD_INFINIBAND = "32"
MODES = ("datagram", "connected")
_PCI_RE = re.compile(r"^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2})\.([0-7])$")


class IpoibError(RuntimeError):
    """The IPoIB interface could not be read or did not take the value written."""


def _sys(root: str, *parts: str) -> str:
    return os.path.join(root, "sys", *parts)


def port_function(pci: str, offset: int) -> str | None:
    """The PCI function `offset` functions after `pci` (mlx5: one function per port)."""
    match = _PCI_RE.match(pci.lower())
    if not match or int(match.group(2)) + offset > 7:
        return None
    return f"{match.group(1)}.{int(match.group(2)) + offset}"


def rdma_devices(root: str) -> dict[str, str]:
    """RDMA device name -> PCI function it sits on (software devices have none)."""
    base = _sys(root, "class", "infiniband")
    found = {}
    for name in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        device = os.path.join(base, name, "device")
        if os.path.exists(device):
            found[name] = os.path.basename(os.path.realpath(device))
    return found


def rdma_port(root: str, pci: str, port: int) -> tuple[str, int]:
    """(RDMA device, its IB port) serving adapter port `port` of the adapter at `pci`."""
    devices = rdma_devices(root)
    own = [d for d, function in devices.items() if function == pci.lower()]
    for device in own:  # mlx4: one device, one IB port per adapter port
        if os.path.isdir(_sys(root, "class", "infiniband", device, "ports", str(port))):
            return device, port
    function = port_function(pci, port - 1)
    for device, where in devices.items():  # mlx5: one device per port, on its function
        if where == function and os.path.isdir(
            _sys(root, "class", "infiniband", device, "ports", "1")
        ):
            return device, 1
    seen = ", ".join(f"{d} on {f}" for d, f in devices.items()) or "none"
    raise IpoibError(
        f"no RDMA device serves port {port} of the adapter at {pci} "
        f"(RDMA devices in /sys/class/infiniband: {seen}); is the driver loaded?"
    )


def _dev_port(netdev_dir: str) -> int | None:
    text = _read(os.path.join(netdev_dir, "dev_port"))
    if text is None:
        text = _read(os.path.join(netdev_dir, "dev_id"))
    try:
        return int(text, 0) if text is not None else None
    except ValueError:
        return None


def find_interface(root: str, pci: str, port: int) -> dict:
    """{name, device, ib_port, link_layer} of the IPoIB interface of an adapter port."""
    device, ib_port = rdma_port(root, pci, port)
    link_layer = _read(
        _sys(root, "class", "infiniband", device, "ports", str(ib_port), "link_layer")
    )
    if link_layer is not None and link_layer != "InfiniBand":
        raise IpoibError(
            f"{device} port {ib_port} has link layer {link_layer}, not InfiniBand: the port "
            "is not in IB mode yet (LINK_TYPE_P<n> needs the NIC link-type role and a reset)"
        )
    net = _sys(root, "class", "infiniband", device, "device", "net")
    candidates = []
    for name in sorted(os.listdir(net)) if os.path.isdir(net) else []:
        directory = os.path.join(net, name)
        if _read(os.path.join(directory, "type")) != ARPHRD_INFINIBAND:
            continue
        if os.path.exists(os.path.join(directory, "parent")):
            continue  # a P_Key child interface (ib0.8001), not the port's own
        if _dev_port(directory) == ib_port - 1:
            candidates.append(name)
    where = f"/sys/class/infiniband/{device}/device/net"
    if not candidates:
        raise IpoibError(
            f"{device} port {ib_port} has no IPoIB interface in {where} "
            "(is the ib_ipoib module loaded?)"
        )
    if len(candidates) > 1:
        raise IpoibError(
            f"{device} port {ib_port} has several IPoIB interfaces in {where}: "
            + ", ".join(candidates)
        )
    return {"name": candidates[0], "device": device, "ib_port": ib_port, "link_layer": link_layer}


def read_state(root: str, name: str) -> dict:
    """{mode, mtu} of an IPoIB interface; fails closed on anything it cannot read."""
    base = _sys(root, "class", "net", name)
    mode = _read(os.path.join(base, "mode"))
    mtu = _read(os.path.join(base, "mtu"))
    if mode not in MODES:
        raise IpoibError(
            f"{os.path.join(base, 'mode')}: cannot read the IPoIB mode (got {mode!r}); "
            "is this an IPoIB interface?"
        )
    if mtu is None or not mtu.isdigit():
        raise IpoibError(f"{os.path.join(base, 'mtu')}: cannot read the MTU (got {mtu!r})")
    return {"mode": mode, "mtu": int(mtu)}


def resolve(root: str, interfaces: list[dict], nics: list[dict]) -> dict[str, dict]:
    """Find every intended IPoIB interface; IntentError names the key of a mismatch.

    Returns {name: {"found": find_interface(...), "state": read_state(...)}}.
    """
    resolved = {}
    for interface in interfaces:
        path = port_path(nics, interface)
        try:
            found = find_interface(root, interface["pci"], interface["port"])
        except IpoibError as exc:
            raise IntentError(path, str(exc)) from None
        if found["name"] != interface["name"]:
            raise IntentError(
                path,
                f"port {interface['port']} of {interface['pci']} is IPoIB interface "
                f"{found['name']} ({found['device']} port {found['ib_port']}), "
                f"not {interface['name']}",
            )
        try:
            state = read_state(root, found["name"])
        except IpoibError as exc:
            raise IntentError(path, str(exc)) from None
        resolved[interface["name"]] = {"found": found, "state": state}
    return resolved


def with_states(view: dict, states: dict[str, dict]) -> dict:
    """A link diff view plus each IPoIB interface's sysfs mode and MTU."""
    for name, state in states.items():
        view[name] = {**(view.get(name) or {}), "ipoib": dict(state)}
    return view


def report(found: dict[str, dict], states: dict[str, dict]) -> dict[str, dict]:
    """Each interface's mode and MTU with where resolve() found it (RDMA device, IB port)."""
    return {
        name: {
            **states[name],
            "device": entry["found"]["device"],
            "ib_port": entry["found"]["ib_port"],
        }
        for name, entry in found.items()
    }


def port_path(nics: list[dict], interface: dict) -> str:
    for n, nic in enumerate(nics or []):
        if nic.get("name") != interface.get("nic"):
            continue
        for p, port in enumerate(nic.get("ports") or []):
            if port.get("port") == interface["port"]:
                return f"cxfab_host.nics[{n}].ports[{p}].netdev"
    return f"cxfab_host.ipoib.{interface['name']}"


def plan(interfaces: list[dict], states: dict[str, dict]) -> list[tuple]:
    """Actions (mode first, then MTU) that bring each interface to its intent."""
    actions = []
    for interface in interfaces:
        name = interface["name"]
        have = states[name]
        if have["mode"] != interface["mode"]:
            actions.append(("set_ipoib_mode", name, {"mode": interface["mode"]}))
        if have["mtu"] != interface["mtu"] or have["mode"] != interface["mode"]:
            # A mode switch moves the MTU itself (65520, or clamped): set it after.
            actions.append(("set_ipoib_mtu", name, {"mtu": interface["mtu"]}))
    return actions


def simulate(states: dict[str, dict], actions: list[tuple]) -> dict[str, dict]:
    """The states after `actions` (check mode's diff)."""
    after = {name: dict(state) for name, state in states.items()}
    for action, name, args in actions:
        key = "mode" if action == "set_ipoib_mode" else "mtu"
        after[name][key] = args[key]
    return after


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as handle:
        handle.write(value + "\n")


def apply(root: str, actions: list[tuple]) -> None:
    """Write the sysfs files; a refusal says what the kernel refused and why it may."""
    for action, name, args in actions:
        base = _sys(root, "class", "net", name)
        if action == "set_ipoib_mode":
            try:
                _write(os.path.join(base, "mode"), args["mode"])
            except OSError as exc:
                hint = ""
                if args["mode"] == "connected" and exc.errno == errno.EINVAL:
                    hint = (
                        "; ConnectX-4 and later run enhanced IPoIB, which is datagram only "
                        "(MLNX_OFED: options ib_ipoib ipoib_enhanced=0)"
                    )
                raise IpoibError(
                    f"{name}: the kernel refused mode {args['mode']}: {exc.strerror}{hint}"
                ) from None
        elif action == "set_ipoib_mtu":
            try:
                _write(os.path.join(base, "mtu"), str(args["mtu"]))
            except OSError as exc:
                raise IpoibError(
                    f"{name}: the kernel refused MTU {args['mtu']}: {exc.strerror} "
                    "(datagram mode carries at most the IB link MTU - 4)"
                ) from None
        else:
            raise IpoibError(f"unknown IPoIB action {action}")


def verify(root: str, interfaces: list[dict]) -> dict[str, dict]:
    """Read every interface back; IpoibError when one differs from its intent."""
    states = {i["name"]: read_state(root, i["name"]) for i in interfaces}
    wrong = [
        f"{i['name']} is {states[i['name']]['mode']} MTU {states[i['name']]['mtu']}, "
        f"intended {i['mode']} MTU {i['mtu']}"
        for i in interfaces
        if (states[i["name"]]["mode"], states[i["name"]]["mtu"]) != (i["mode"], i["mtu"])
    ]
    if wrong:
        raise IpoibError("IPoIB read back differs: " + "; ".join(wrong))
    return states
