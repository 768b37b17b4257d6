"""``asg mvtr``: is a symbolic model a minimally viable task representation of an env?

Exit codes: 0 when both MVTR conditions hold, 1 when one fails, 2 on bad input.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from asg.cli.options import LazyChoice, ModelPath


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
        click.echo(report.to_text())
    sys.exit(report.exit_code)
