"""What ``mlsmoke suites`` prints: a table of suites, then, per regressed suite, the
examples that flipped from right to wrong; for a record, the possible label issues."""

from __future__ import annotations

from typing import Any

from mlsmoke.suites.comparison import Comparison, Flip, SuiteOutcome
from mlsmoke.suites.label_issues import LabelIssue
from mlsmoke.suites.records import Evaluation

FLIPS_SHOWN = 10
VALUE_WIDTH = 18


def evaluated_line(evaluation: Evaluation) -> str:
    return (
        f"{evaluation.checkpoint}: {len(evaluation)} examples on"
        f" {evaluation.device} in {evaluation.seconds:.1f} s"
    )


def record_table(rows: list[tuple[str, int, float, float]]) -> list[str]:
    """``(suite, examples, mean score, mean loss)`` rows."""
    lines = [f"  {'suite':<24} {'examples':>8} {'score':>8} {'loss':>9}"]
    for name, size, score, loss in rows:
        lines.append(f"  {name:<24} {size:>8} {score:>8.3f} {loss:>9.4g}")
    return lines


def label_issue_lines(issues: list[LabelIssue], hard: int) -> list[str]:
    if not issues:
        return [f"  no possible label issue among the {hard} hard examples"]
    lines = [
        f"  possible label issues among the {hard} hard examples ({len(issues)}):"
        " a hint, not a verdict; look at these labels before the model"
    ]
    return lines + [f"    {issue.describe()}" for issue in issues]


def check_lines(comparison: Comparison) -> list[str]:
    outcomes = [comparison.whole_set, *comparison.suites]
    lines = [
        f"  {'suite':<24} {'examples':>8} {'baseline':>8} {'now':>7} {'drop':>7}"
        f" {'allowed':>7} {'flipped':>7} {'fixed':>5}  verdict"
    ]
    for outcome in outcomes:
        lines.append(
            f"  {outcome.name:<24} {outcome.size:>8} {outcome.baseline:>8.3f}"
            f" {outcome.now:>7.3f} {outcome.drop:>7.3f} {outcome.tolerance:>7.3f}"
            f" {_flipped(outcome):>7} {_fixed(outcome):>5}  {verdict(outcome)}"
        )
    if comparison.whole_set.regressed:
        lines.append(_global_shift_line(comparison))
    for outcome in comparison.suites:
        if outcome.regressed and outcome.flips:
            lines += flip_lines(outcome)
        if outcome.loss_regressed:
            lines += less_sure_lines(outcome)
    return lines


def verdict(outcome: SuiteOutcome) -> str:
    if not outcome.regressed:
        return "held"
    if not outcome.score_regressed:
        return "REGRESSED (less sure)"
    return "REGRESSED (global shift)" if outcome.global_shift else "REGRESSED"


def less_sure_lines(outcome: SuiteOutcome) -> list[str]:
    """The loss of the examples right at record time, and those whose loss rose
    most while they stayed right."""
    head = (
        f"  {outcome.name}: the {outcome.right} example(s) right at record time are"
        f" less sure: mean loss {outcome.right_loss_before:.4g} ->"
        f" {outcome.right_loss_now:.4g}, up {outcome.loss_rise:.4g} (allowed"
        f" {outcome.loss_tolerance:g})"
    )
    if not outcome.less_sure:
        return [head]
    shown = outcome.less_sure[:FLIPS_SHOWN]
    more = f", the {len(shown)} that rose most:" if len(shown) < len(
        outcome.less_sure) else ":"  # fmt: skip
    return [
        f"{head}; {len(outcome.less_sure)} still right with a loss up by more than"
        f" {outcome.loss_tolerance:g}{more}",
        _table_head(),
        *[_flip_line(flip) for flip in shown],
    ]


def _flipped(outcome: SuiteOutcome) -> str:
    return "-" if outcome.kind == "whole-set" else str(len(outcome.flips))


def _fixed(outcome: SuiteOutcome) -> str:
    return "-" if outcome.kind == "whole-set" else str(outcome.fixed)


def _global_shift_line(comparison: Comparison) -> str:
    """Whether the whole set's fall is a global shift (suites fell no more than it)
    or the echo of a few suites that fell much further."""
    whole = comparison.whole_set
    following = [s.name for s in comparison.suites if s.global_shift]
    own = [s.name for s in comparison.suites if s.regressed and not s.global_shift]
    fell = f"  the whole set fell by {whole.drop:.3f} (allowed {whole.tolerance:.3f})"
    if not following and own:
        return (
            f"{fell}, less than {', '.join(own)}: the regression is concentrated"
            " there, not a global shift"
        )
    text = f"{fell}: a global shift"
    if following:
        text += f"; {', '.join(following)} fell no more than it"
    if own:
        text += f"; {', '.join(own)} fell further, on their own"
    return text


def flip_lines(outcome: SuiteOutcome) -> list[str]:
    shown = outcome.flips[:FLIPS_SHOWN]
    lines = [
        f"  {outcome.name}: {len(outcome.flips)} example(s) flipped from right to"
        " wrong" + (f", the {len(shown)} with the highest loss now:"
                    if len(shown) < len(outcome.flips) else ":"),
        _table_head(),
    ]  # fmt: skip
    lines += [_flip_line(flip) for flip in shown]
    return lines


def _table_head() -> str:
    return (
        f"    {'index':>7}  {'label':<{VALUE_WIDTH}} {'was':<{VALUE_WIDTH}}"
        f" {'now':<{VALUE_WIDTH}} loss before -> now"
    )


def _flip_line(flip: Flip) -> str:
    return (
        f"    {flip.index:>7}  {short(flip.label):<{VALUE_WIDTH}}"
        f" {short(flip.old_prediction):<{VALUE_WIDTH}}"
        f" {short(flip.new_prediction):<{VALUE_WIDTH}}"
        f" {flip.old_loss:.4g} -> {flip.new_loss:.4g}"
    )


def short(value: Any) -> str:
    """A label or prediction in one table cell (a token sequence is cut)."""
    text = "-" if value is None else str(value)
    if len(text) > VALUE_WIDTH:
        return text[: VALUE_WIDTH - 1] + "…"
    return text
