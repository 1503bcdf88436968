"""A process's memory as ``mlsmoke worker status`` states it: its resident set size,
from ``/proc/PID/status`` on Linux; "unknown" where that cannot be read."""

from __future__ import annotations


def resident_bytes(status_text: str) -> int | None:
    """The ``VmRSS`` of a ``/proc/PID/status`` text, in bytes; None without one."""
    for line in status_text.splitlines():
        name, _, value = line.partition(":")
        if name == "VmRSS":
            fields = value.split()
            if fields and fields[0].isdigit():
                unit = fields[1].lower() if len(fields) > 1 else "kb"
                return int(fields[0]) * (1024 if unit == "kb" else 1)
    return None


def describe_bytes(size: int | None) -> str:
    if size is None:
        return "unknown"
    return f"{size / 2**20:.0f} MB"


def process_resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as file:
            return resident_bytes(file.read())
    except OSError:
        return None
