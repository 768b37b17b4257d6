"""``asg mvtr``: is a symbolic model a minimally viable task representation of an env?

Exit codes: 0 when both MVTR conditions hold, 1 when one fails, 2 on bad input.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from asg.cli.options import LazyChoice, ModelPath

if TYPE_CHECKING:
    from asg.planning.mvtr import MVTRReport


def _domain_names() -> list[str]:
    from asg.envs.domains import DOMAINS

    return sorted(DOMAINS)


def DomainChoice() -> LazyChoice:
    """``click.Choice`` over ``asg.envs.domains.DOMAINS``, read on first use (keeps ``asg`` fast)."""
    return LazyChoice(_domain_names)


@click.command("mvtr", short_help="Check a model is an MVTR of a domain's env (ASGRL).")
@click.option("--domain", "domain_name", required=True, type=DomainChoice(),
              help="Registered domain whose env is explored.")
@click.option("--model", type=ModelPath(),
              help="PDDL model (file or bundled name) to check instead of the domain's own.")
@click.option("--episodes", type=click.IntRange(min=0), default=20, show_default=True,
              help="Random-exploration episodes from the initial state.")
@click.option("--max-steps", type=click.IntRange(min=1), default=500, show_default=True,
              help="Length of one random episode.")
@click.option("--branch-steps", type=click.IntRange(min=0), default=50, show_default=True,
              help="Random steps taken after each prefix of the solver's route.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def mvtr(domain_name: str, model: Path | None, episodes: int, max_steps: int,
         branch_steps: int, seed: int, as_json: bool) -> None:
    """Check the MVTR conditions (ASGRL Def. 4.3) of a model on a domain's env, with evidence.

    Condition 1: the goal atoms hold only in goal states. Condition 2: some goal-reaching
    trace instantiates a plan of the model (Def. 4.1). Also reports what the env never
    showed of the model. Exit 0 if both hold, 1 if one fails, 2 on bad input.
    """
    from asg.envs.domains import get_domain
    from asg.envs.mvtr_traces import ExplorationConfig, run_mvtr

    config = ExplorationConfig(episodes, max_steps, branch_steps, seed)
    report = run_mvtr(get_domain(domain_name), model, config)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, sort_keys=True))
    else:
        click.echo(format_report(report))
    sys.exit(report.exit_code)


def _verdict(ok: bool) -> str:
    return "holds" if ok else "FAILS"


def format_report(report: "MVTRReport") -> str:
    """The text form of an ``MVTRReport``."""
    c1, c2, inc = report.condition1, report.condition2, report.incompleteness
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.traces.items()) if k != "goal_reaching")
    lines = [
        f"MVTR of model {report.model} on domain {report.domain}: "
        f"{'is an MVTR' if report.holds else 'NOT an MVTR'}",
        f"traces: {kinds}; {report.traces.get('goal_reaching', 0)} reach the goal",
        *(f"  {note}" for note in report.notes),
        f"condition 1 (goal atoms only in goal states): {_verdict(c1.holds)}; "
        f"{c1.states_checked} distinct states checked"
        + (f", {c1.violating_states} of them non-goal states with the goal atoms true"
           if c1.violating_states else ""),
    ]
    if c1.reason:
        lines.append(f"  {c1.reason}")
    for v in c1.violations:
        lines.append(f"  counter-example: trace {v.trace} step {v.step}: {v.state}")
        lines.append(f"    true atoms: {' '.join(v.atoms) or '-'}")
    if c1.goal_states_without_goal_atoms and c1.holds:
        lines.append(f"  note: the goal atoms are false in {c1.goal_states_without_goal_atoms} "
                     f"of {c1.goal_states} goal state(s)")
    lines.append(f"condition 2 (a goal-reaching trace instantiates a plan): {_verdict(c2.holds)}; "
                 f"{c2.plans_considered} plan(s) considered, {c2.goal_traces} goal-reaching trace(s)"
                 + ("" if c2.enumeration_complete else " (plan enumeration cut by its bound)"))
    if c2.holds:
        lines.append(f"  trace {c2.trace} ({c2.trace_length} steps) instantiates plan [{c2.plan}]")
        layers = " < ".join("{" + ", ".join(layer) + "}" for layer in c2.plan_layers)
        lines.append(f"  plan makes true, in order: {layers}")
        lines.append("  trace first makes true: "
                     + ", ".join(f"{atom}@{step}" for atom, step in c2.first_steps))
    else:
        lines.append(f"  {c2.reason}")
    lines.append("incompleteness of the model:")
    lines.append("  actions never seen to have their stated effects:"
                 + ("" if inc.unrealised_actions else " none"))
    lines.extend(f"    {name}: {why}" for name, why in inc.unrealised_actions)
    lines.append("  fluents never observed: " + (" ".join(inc.unobserved_fluents) or "none"))
    lines.append("  landmark orderings the env reaches differently:"
                 + ("" if inc.order_differences else " none"))
    for d in inc.order_differences:
        total = d.respected + d.reversed + d.target_missing
        lines.append(f"    {' '.join(d.source)} < {' '.join(d.target)} ({d.kind}): respected in "
                     f"{d.respected}, not in {d.reversed}, target never reached in "
                     f"{d.target_missing}, of {total} goal-reaching traces")
    return "\n".join(lines)


def register(group: click.Group) -> None:
    """Add the env commands to the ``asg`` group."""
    group.add_command(mvtr)
