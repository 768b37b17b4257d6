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
@click.option("--suggest", is_flag=True,
              help="Also propose repairs of the model from the same traces (ranked PDDL edits with evidence).")
@click.option("--min-goal-traces", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --suggest: no hint is asserted from fewer goal-reaching traces.")
@click.option("--write", "write_path", type=click.Path(path_type=Path, dir_okay=False),
              help="With --suggest: apply the top-ranked hints that keep the model an MVTR, write the "
                   "repaired model to this new file (never overwritten) and check it again.")
@click.option("--top", type=click.IntRange(min=1), default=3, show_default=True,
              help="With --write: the most hints applied.")
def mvtr(domain_name: str | None, env_id: str | None, labeler: str | None, model: Path | None, episodes: int,
         max_steps: int, branch_steps: int, seed: int, as_json: bool, suggest: bool, min_goal_traces: int,
         write_path: Path | None, top: int) -> None:
    """Check the MVTR conditions (ASGRL Def. 4.3) of a model on an env, with evidence.

    Condition 1: the goal atoms hold only in goal states (the env's info["is_success"], or, for an
    env without it, a step ending the episode with reward > 0). Condition 2: some goal-reaching
    trace instantiates a plan of the model (Def. 4.1); the traces are the scripted solver's route
    where the domain has one, and random episodes. Also reports what the env never showed of the
    model. Exit 0 if both hold, 1 if one fails, 2 on bad input, 3 if condition 2 is unknown (no
    trace reached the goal: explore more with --episodes / --max-steps).

    --suggest adds repair hints read from the same traces (docs/asgrl.md, "Repair hints"); with
    no goal-reaching trace it is bad input (exit 2). --write FIXED.pddl applies them.
    """
    from asg.envs.mvtr_traces import ExplorationConfig, run_mvtr

    config = ExplorationConfig(episodes, max_steps, branch_steps, seed)
    if write_path is not None:
        _check_new_file(write_path, suggest)
    if suggest:
        with own_world_as_options():
            spec, checked = _spec(domain_name, env_id, labeler, model)
            report = _suggest(spec, checked, config, min_goal_traces, write_path, top, as_json)
        sys.exit(report.exit_code)
    with own_world_as_options():
        spec, checked = _spec(domain_name, env_id, labeler, model)
        report = run_mvtr(spec, checked, config)
    echo_result(report, as_json)
    if report.exit_code == EXIT_UNKNOWN:
        click.echo(f"condition 2 unknown: no trace of {episodes} random episodes of up to {max_steps} steps "
                   "reached the goal; more (--episodes) or longer (--max-steps) ones may", err=True)
    sys.exit(report.exit_code)


def _check_new_file(path: Path, suggest: bool) -> None:
    """--write names a new file in a writable folder (nothing is ever overwritten)."""
    from asg.cli.options import check_writable

    if not suggest:
        raise AsgError(f"--write {path}: needs --suggest (it writes the model the hints repair)")
    if path.exists() or path.is_symlink():
        raise AsgError(f"--write {path}: exists; give a new file name (a model is never overwritten)")
    try:
        check_writable(path)
    except AsgError as err:
        raise AsgError(f"--write {getattr(err, 'path', path)}: {getattr(err, 'reason', err)}") from None


def _suggest(spec: Any, checked: Path | None, config: Any, min_goal_traces: int, write_path: Path | None,
             top: int, as_json: bool) -> Any:
    """Prints the report, the hints and (with ``write_path``) the repaired model's re-check; returns
    the report whose exit code ends the command."""
    import json

    from asg.envs.mvtr_traces import NothingToRepair, repair_model, run_mvtr, run_suggest
    from asg.learning.atomic import atomic_output
    from asg.planning.hints import HintConfig

    found = run_suggest(spec, checked, config, HintConfig(min_goal_traces=min_goal_traces))
    data = found.to_json()
    lines = [found.report.to_text(), *found.hints.lines()]
    if found.hints.status != "ok" and found.hints.more_episodes is not None:
        lines[-1] += " (--episodes; where random episodes never get there, longer ones: --max-steps, --branch-steps)"
    report = found.report
    if write_path is not None:
        try:
            fixed = repair_model(spec, checked, found, top)
        except NothingToRepair as err:
            raise AsgError(f"--write {write_path}: {err}; nothing written") from None
        if write_path.exists():  # created while the hints were computed
            raise AsgError(f"--write {write_path}: exists; give a new file name (a model is never overwritten)")
        with atomic_output(write_path) as handle:
            handle.write(fixed.text.encode("utf-8"))
        report = run_mvtr(spec, write_path, config)
        data["repair"] = {**fixed.to_json(), "written": str(write_path), "mvtr": report.verdict}
        lines += [f"wrote {write_path}: {len(fixed.applied)} hint(s) applied",
                  *(f"  {edit}" for edit in fixed.edits),
                  f"re-check of {write_path}: {report.to_text().splitlines()[0].split(': ', 1)[1]}",
                  "new landmark sequence: " + " < ".join(fixed.subgoals),
                  *(["needed again: " + "; ".join(fixed.again)] if fixed.again else [])]
    click.echo(json.dumps(data, indent=2, sort_keys=True, default=str) if as_json else "\n".join(lines))
    return report
