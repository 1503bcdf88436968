"""Describe the machine a benchmark ran on: the context every absolute figure needs."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
from pathlib import Path


def describe_machine() -> dict[str, str]:
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M UTC"
        ),
        "cpu": cpu_model(),
        "cores": str(len(os.sched_getaffinity(0))),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "torch": _version("torch"),
        "lightning": _version("lightning"),
        "pre-commit": _version("pre-commit"),
        "load average": load_average(),
    }


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def to_markdown(machine: dict[str, str]) -> str:
    lines = ["| machine | |", "| --- | --- |"]
    lines += [f"| {key} | {value} |" for key, value in machine.items()]
    return "\n".join(lines) + "\n"


def _version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"
