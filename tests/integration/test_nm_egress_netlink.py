"""nmegress's netlink call against a real kernel, in a fresh network namespace.

The defect it works around is one of wire format: NetworkManager < 1.46.6 types the
entries of IFLA_VLAN_EGRESS_QOS 0, 1, 2, ... (their index) and the kernel keeps only
those typed IFLA_VLAN_QOS_MAPPING (1) (host/net/nmegress.py). So this reads the bytes
pyroute2 really sends for nmegress's `set_egress_map` and decodes every nested entry's
type and payload itself, not through pyroute2's parser.

Where the kernel has 802.1Q it also builds the defect's result - a VLAN whose egress map
is {1: 5} only, as NetworkManager 1.42 left the lab's - and checks that nmegress.complete
makes `ip -d -j link show` report all eight entries. This controller's kernel has no
802.1Q (CONFIG_VLAN_8021Q unset), so there that test skips with the kernel's answer and
only the lab (tests/system/test_lab_networkmanager.py) shows it after a real
NetworkManager.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration]
REPO = Path(__file__).resolve().parents[2]
MAP = {p: 5 for p in range(8)}
INTENT = {"bond": None, "members": [], "ipoib": [],
          "vlans": [{"name": "cxq0.30", "id": 30, "link": "cxq0", "mtu": 1500,
                     "addresses": [], "egress_qos_map": MAP}]}  # fmt: skip
IFLA_LINKINFO, IFLA_INFO_DATA, IFLA_VLAN_EGRESS_QOS = 18, 2, 3


def _in_netns(code: str) -> subprocess.CompletedProcess:
    """`code` in a fresh network namespace with module_utils importable; nothing leaks."""
    prelude = f"import json, sys\nsys.path.insert(0, {str(REPO / 'module_utils')!r})\n"
    return subprocess.run(
        ["unshare", "-n", sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def _attrs(data: bytes):
    """(type, payload) of each netlink attribute in `data` (4-byte aligned)."""
    while len(data) >= 4:
        length, kind = struct.unpack_from("HH", data)
        yield kind & 0x3FFF, data[4:length]
        data = data[(length + 3) & ~3 :]


def _child(data: bytes, kind: int) -> bytes:
    return next(payload for t, payload in _attrs(data) if t == kind)


def test_the_egress_map_goes_out_with_every_entry_typed_ifla_vlan_qos_mapping():
    done = _in_netns(f"""
        from pyroute2 import IPRoute
        from cxfab.host.net import netlink
        sent = []
        with IPRoute() as ipr:
            send = ipr.asyncore.send
            def spy(data, *args, **kwargs):
                sent.append(bytes(data))
                return send(data, *args, **kwargs)
            ipr.asyncore.send = spy
            try:  # on the namespace's lo: no VLAN, the kernel refuses; the bytes are the point
                netlink.apply(ipr, [("set_egress_map", "lo", {{"egress_qos_map": {MAP}}})], {{}})
                answer = "accepted"
            except Exception as exc:
                answer = repr(exc)
        print(json.dumps({{"answer": answer, "sent": sent[-1].hex()}}))
    """)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    message = bytes.fromhex(out["sent"])
    # nlmsghdr (16 bytes) + ifinfomsg (16 bytes), then the link's attributes.
    qos = _child(_child(_child(message[32:], IFLA_LINKINFO), IFLA_INFO_DATA), IFLA_VLAN_EGRESS_QOS)
    entries = [(kind, struct.unpack("II", payload)) for kind, payload in _attrs(qos)]
    assert entries == [(1, (prio, 5)) for prio in range(8)], out["answer"]
    assert "Operation not supported" in out["answer"] or out["answer"] == "accepted"


def _kernel_makes_vlans() -> str:
    probe = subprocess.run(
        ["unshare", "-n", "sh", "-c",
         "ip link add cxq0 type dummy && ip link add link cxq0 name cxq0.9 type vlan id 9"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return "" if probe.returncode == 0 else f"this kernel makes no VLAN: {probe.stderr.strip()}"


def test_a_vlan_left_with_one_entry_gets_all_eight():
    why = _kernel_makes_vlans()
    if why:
        pytest.skip(why)
    done = _in_netns(f"""
        import subprocess
        from pyroute2 import IPRoute
        from cxfab.host.net import netlink, nmegress
        ip = lambda *a: subprocess.run(["ip", *a], check=True, capture_output=True, text=True)
        ip("link", "add", "cxq0", "type", "dummy")
        # What NetworkManager 1.42 leaves on a kernel with Linux 6c21660fe221: from 1 only.
        ip("link", "add", "link", "cxq0", "name", "cxq0.30", "type", "vlan", "id", "30",
           "egress-qos-map", "1:5")
        ip("link", "set", "cxq0", "up")
        ip("link", "set", "cxq0.30", "up")
        with IPRoute() as ipr:
            links, steps = nmegress.complete(ipr, {INTENT!r}, netlink.read_links(ipr), False,
                                             netlink.read_links)
        shown = json.loads(ip("-d", "-j", "link", "show", "cxq0.30").stdout)[0]
        egress = shown["linkinfo"]["info_data"]["egress_qos"]
        print(json.dumps({{"steps": steps, "egress": egress}}))
    """)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {int(m["from"]): int(m["to"]) for m in out["egress"]} == MAP
    assert out["steps"] == [
        f"set the egress map of cxq0.30 over netlink: NetworkManager left {{1: 5}}, wanted {MAP}"
    ]
