"""Make the guest kernel shape a netdev the way a ConnectX would (cxfab lab emulator).

A real ConnectX applies ``mlnx_qos --ratelimit`` in hardware: each egress frame goes to a
traffic class chosen by its 802.1p user priority (the VLAN PCP; untagged frames count as
priority 0) through the ``prio_tc`` map, and each TC is rate limited. The lab NICs are
virtio, so the emulated mlnx_qos programs the same policy into the kernel:

    root HTB 1:  default = class of the TC that priority 0 maps to
      class 1:1<t> per TC t, rate = ceil = the TC's limit (or the port speed if unlimited)
      filters: 802.1Q frames with PCP p -> class of prio_tc[p]
               (tc flower vlan_prio; where flower is missing, u32 on an in-band tag)

All limits back to "unlimited" removes the root qdisc again. Any tc failure is reported
to the caller, which turns it into the driver error the real tool would print.
"""

import shutil
import subprocess

PORT_SPEED_KBPS = 100_000_000  # 100 Gb/s: "unlimited" TCs still get a finite HTB rate
QUANTUM = 60000  # explicit, so HTB does not warn about huge quanta at Gb/s rates
MIN_BURST_BYTES = 15000
# A card shapes in hardware, on time. HTB shapes when the guest's timers fire, and
# under TCG on a busy machine they fire late: with a burst of a millisecond or two the
# tokens of the late interval are lost, and a 25 Mbit/s class delivered 0.66-0.88 of
# its rate whenever other traffic kept the vCPUs busy (a paced 30 Mbit/s flow beside it
# kept its full rate). 50 ms of tokens ride out such lateness; over a 10 s measurement
# they add at most 0.5 % to the long-term rate, which stays the configured one.
BURST_SECONDS = 0.05


def burst_bytes(rate_kbps: int) -> int:
    """BURST_SECONDS of traffic at the class's rate (tc's default is far too small)."""
    return max(MIN_BURST_BYTES, int(rate_kbps * 1000 / 8 * BURST_SECONDS))


class ShaperError(Exception):
    """tc is missing or the kernel refused the configuration."""


def _tc() -> str:
    for candidate in ("tc", "/usr/sbin/tc", "/sbin/tc"):
        found = shutil.which(candidate)
        if found:
            return found
    raise ShaperError("tc: command not found")


def _batch(lines: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_tc(), "-batch", "-"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )


def class_id(tc: int) -> str:
    return f"1:{0x10 + tc:x}"


def _filters(netdev: str, prio_tc: list[int], kind: str) -> list[str]:
    lines = []
    for priority, tc in enumerate(prio_tc):
        if kind == "flower":
            match = f"flower vlan_prio {priority}"
        else:
            # without flower: the tag is the first 16 bits after the MAC header
            match = f"u32 match u16 0x{priority << 13:04x} 0xe000 at 0"
        lines.append(
            f"filter add dev {netdev} parent 1: protocol 802.1Q prio {priority + 1} "
            f"{match} classid {class_id(tc)}"
        )
    return lines


def apply(netdev: str, prio_tc: list[int], rates_kbps: list[int], scale: float = 1.0) -> str:
    """Program the shaper; return the classifier used ("flower", "u32" or "none").

    ``scale`` shrinks every kernel rate (the card keeps reporting the configured ones): a
    TCG guest cannot push Gb/s, so the lab sets e.g. 0.01 to turn "1 Gbps" into 10 Mbit/s
    of real shaping while ratios between TCs stay those of the configuration.
    """
    _batch([f"qdisc del dev {netdev} root"])  # absent root qdisc is fine
    if not any(rates_kbps):
        return "none"
    setup = [f"qdisc add dev {netdev} root handle 1: htb default {0x10 + prio_tc[0]:x}"]
    for tc, rate in enumerate(rates_kbps):
        limit = max(8, int((rate or PORT_SPEED_KBPS) * scale))
        setup.append(
            f"class add dev {netdev} parent 1: classid {class_id(tc)} htb "
            f"rate {limit}kbit ceil {limit}kbit burst {burst_bytes(limit)} "
            f"cburst {burst_bytes(limit)} quantum {QUANTUM}"
        )
    result = _batch(setup)
    if result.returncode != 0:
        raise ShaperError(result.stderr.strip() or "tc failed")
    for kind in ("flower", "u32"):
        result = _batch(_filters(netdev, prio_tc, kind))
        if result.returncode == 0:
            return kind
        _batch([f"filter del dev {netdev} parent 1:"])
    _batch([f"qdisc del dev {netdev} root"])
    raise ShaperError(result.stderr.strip() or "tc filter failed")
