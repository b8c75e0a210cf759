"""What verify reads back: module results that failed or were absent, the data ports."""

from __future__ import annotations


def failed(result) -> bool:
    """A module result that failed or whose host was unreachable."""
    return isinstance(result, dict) and bool(result.get("failed") or result.get("unreachable"))


def absent(result) -> bool:
    """No result, or a skipped task: that part of verify did not run."""
    return not isinstance(result, dict) or bool(result.get("skipped"))


def tool_missing(message: str) -> bool:
    """The failure says a card tool is missing or its path is wrong."""
    text = message.lower()
    words = ("no tool for", "not found in path", "not an executable", "is not installed")
    return any(word in text for word in words)


def data_ports(host: dict) -> list[dict]:
    """Every port of every NIC of a host's structured config."""
    return [port for nic in host.get("nics") or [] for port in nic.get("ports") or []]


def gbps(bits) -> str:
    """Bits per second as the report prints them."""
    return f"{float(bits) / 1e9:.3f} Gb/s"
