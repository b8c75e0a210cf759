"""CPU lists in the kernel's text form (`0-3,8,10-11`) and spreading IRQs over CPUs."""

from __future__ import annotations

from . import IntentError


def parse_cpulist(text: str, path: str = "cpulist") -> list[int]:
    """`"0-2,5"` -> `[0, 1, 2, 5]` (sorted, unique). An empty string is an empty list."""
    cpus: set[int] = set()
    text = (text or "").strip()
    if not text:
        return []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                low_text, high_text = part.split("-", 1)
                low, high = int(low_text), int(high_text)
                if low > high:
                    raise ValueError
                cpus.update(range(low, high + 1))
            else:
                cpus.add(int(part))
        except ValueError:
            raise IntentError(path, f"{text!r} is not a CPU list like '0-3,8'") from None
    if any(cpu < 0 for cpu in cpus):
        raise IntentError(path, f"{text!r} has a negative CPU number")
    return sorted(cpus)


def format_cpulist(cpus) -> str:
    """`[0, 1, 2, 5]` -> `"0-2,5"` (the form the kernel prints back)."""
    ordered = sorted(set(cpus))
    ranges: list[str] = []
    start = prev = None
    for cpu in ordered:
        if start is None:
            start = prev = cpu
        elif cpu == prev + 1:
            prev = cpu
        else:
            ranges.append(f"{start}-{prev}" if prev != start else str(start))
            start = prev = cpu
    if start is not None:
        ranges.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(ranges)


def spread(irqs, cpus) -> dict[int, int]:
    """Give each IRQ one CPU, round robin in IRQ order, so queues land on distinct cores."""
    cpu_list = sorted(set(cpus))
    if not cpu_list:
        raise ValueError("no CPU to spread the IRQs over")
    return {irq: cpu_list[index % len(cpu_list)] for index, irq in enumerate(sorted(irqs))}
