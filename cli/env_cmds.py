"""``asg mvtr``: is a symbolic model a minimally viable task representation of an env?

The env is a domain's (``--domain NAME``: asg's own, or a plug-in's) or a world of the user's own,
named by its parts as ``asg train`` takes them (``--env ID|module:callable --labeler module:NAME
--model FILE``, built by ``asg.envs.plugins.domain_from_parts``).

Exit codes: 0 when both MVTR conditions hold, 1 when one fails, 2 on bad input, 3 when
condition 1 holds but condition 2 is not shown either way (no explored trace reached a goal
state, so none could be checked against the model's plans).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from asg.cli.options import LazyChoice, ModelPath, echo_result, own_world_as_options, world_parts
from asg.planning.errors import AsgError

EXIT_UNKNOWN = 3


def _domain_names() -> list[str]:
    from asg.envs.domains import domain_names

    return domain_names()


def _spec(domain: str | None, env: str | None, labeler: str | None, model: Path | None) -> tuple[Any, Path | None]:
    """The domain to explore and the model to check (None: the domain's own), from the options."""
    from asg.envs.domains import get_domain
    from asg.envs.plugins import domain_from_parts

    if world_parts(domain, env, labeler, model):
        return domain_from_parts(str(env), str(labeler), str(model)), None
    if domain is None:
        raise AsgError(f"--domain is required: one of {', '.join(_domain_names())} (or --env with "
                       "--labeler and --model, a world of your own)")
    return get_domain(domain), model


@click.command("mvtr", short_help="Check a model is an MVTR of a domain's env (ASGRL).")
@click.option("--domain", "domain_name", type=LazyChoice(_domain_names),
              help="Registered domain whose env is explored (asg's own or a plug-in's).")
@click.option("--env", "env_id", help="A world of your own instead of --domain: a Gymnasium id or "
                                     "module:callable, with --labeler and --model (examples/).")
@click.option("--labeler", help="With --env: module:NAME of its labeler (a dict atom -> predicate, or a Labeler).")
@click.option("--model", type=ModelPath(),
              help="PDDL model (file or bundled name): with --domain, checked instead of the domain's "
                   "own; with --env, the world's model.")
@click.option("--episodes", type=click.IntRange(min=0), default=20, show_default=True,
              help="Random-exploration episodes from the initial state (each reset with its own seed).")
@click.option("--max-steps", type=click.IntRange(min=1), default=500, show_default=True,
              help="Length of one random episode.")
@click.option("--branch-steps", type=click.IntRange(min=0), default=50, show_default=True,
              help="Random steps taken after each prefix of the solver's route (domains with a scripted solver).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def mvtr(domain_name: str | None, env_id: str | None, labeler: str | None, model: Path | None, episodes: int,
         max_steps: int, branch_steps: int, seed: int, as_json: bool) -> None:
    """Check the MVTR conditions (ASGRL Def. 4.3) of a model on an env, with evidence.

    Condition 1: the goal atoms hold only in goal states (the env's info["is_success"], or, for an
    env without it, a step ending the episode with reward > 0). Condition 2: some goal-reaching
    trace instantiates a plan of the model (Def. 4.1); the traces are the scripted solver's route
    where the domain has one, and random episodes. Also reports what the env never showed of the
    model. Exit 0 if both hold, 1 if one fails, 2 on bad input, 3 if condition 2 is unknown (no
    trace reached the goal: explore more with --episodes / --max-steps).
    """
    from asg.envs.mvtr_traces import ExplorationConfig, run_mvtr

    with own_world_as_options():
        spec, checked = _spec(domain_name, env_id, labeler, model)
        report = run_mvtr(spec, checked, ExplorationConfig(episodes, max_steps, branch_steps, seed))
    echo_result(report, as_json)
    if report.exit_code == EXIT_UNKNOWN:
        click.echo(f"condition 2 unknown: no trace of {episodes} random episodes of up to {max_steps} steps "
                   "reached the goal; more (--episodes) or longer (--max-steps) ones may", err=True)
    sys.exit(report.exit_code)
