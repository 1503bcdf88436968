"""The debt table that ``mlsmoke debt`` prints and ``mlsmoke init`` ends with."""

from __future__ import annotations

from collections.abc import Mapping

from mlsmoke.adopt.baselines import Debt

WHERE = {
    "flake8": "per-file-ignores",
    "black": "[tool.black] force-exclude",
    "bash-strict-mode": "[tool.mlsmoke.strict-mode] exclude",
    "doctest": "[tool.mlsmoke.doctest] exclude",
}


def table(debt: Debt, files_checked: Mapping[str, int] | None = None) -> str:
    """One line per tool (files, codes, where), then its files and their codes."""
    if not any(debt.values()):
        return "Baselines: none. Every file meets every rule."
    lines = ["Baselines (files excluded from a check until fixed):"]
    width = max(len(tool) for tool in debt)
    for tool, failures in sorted(debt.items()):
        if not failures:
            continue
        codes = sum(len(c) for c in failures.values())
        counted = f"{len(failures)} file{'s' if len(failures) != 1 else ''}"
        if files_checked and tool in files_checked:
            counted += f" of {files_checked[tool]}"
        counted += f", {codes} code{'s' if codes != 1 else ''}" if codes else ""
        where = WHERE.get(tool, "exclude: in .pre-commit-config.yaml")
        lines.append(f"  {tool:<{width}}  {counted}  ({where})")
        for path, file_codes in sorted(failures.items()):
            suffix = f"  {','.join(file_codes)}" if file_codes else ""
            lines.append(f"      {path}{suffix}")
    total = len({path for failures in debt.values() for path in failures})
    lines.append(f"  total: {total} file{'s' if total != 1 else ''} with debt")
    return "\n".join(lines)
