"""``asg landmarks``, ``asg plan``, ``asg check``, ``asg models``: the planning core from the shell.

FILE is a PDDL file or a bundled model's name (``asg models`` lists them), resolved by
``asg.pddl_models.resolve`` through ``asg.cli.options.ModelPath``.
"""
from __future__ import annotations

import json
import sys

import click

from asg.cli.options import LazyChoice, ModelPath, OutputPath, need_output_for_pictures, write_or_echo

FORMATS = ("text", "json", "dot", "html", "png", "svg")
LENIENT_HELP = ("Accept what asg can repair, with a warning: declare undeclared predicates, read a "
                "problem that names another domain.")
_QUIET_WARNINGS = ("unused-predicate", "unused-type")  # shown by `asg check`, noise elsewhere
_PATH = click.Path(dir_okay=True, file_okay=True, path_type=str)
_MODEL = ModelPath()


def _factory_names() -> list[str]:
    from asg.planning.landmarks import FACTORIES

    return list(FACTORIES)


def _load(domain: str, problem: str | None, lenient: bool = False):
    from asg.planning import ground, parse_files

    model = parse_files(domain, problem, lenient=lenient)
    for warning in model.warnings:
        if lenient or warning.code not in _QUIET_WARNINGS:
            click.echo(warning.format(), err=True)
    return model, ground(model)


@click.command(short_help="Landmarks and orderings of a PDDL model.")
@click.argument("file", type=_MODEL)
@click.argument("problem", type=_PATH, required=False)
@click.option("--factory", type=LazyChoice(_factory_names), default="hm", show_default=True,
              help="hm: h^m (Keyder et al. 2010); rhw: Richter, Helmert & Westphal 2008, with "
                   "disjunctive landmarks; zg: Zhu & Givan 2003. As Fast Downward's lm_hm, lm_rhw, lm_zg.")
@click.option("--m", "m", type=click.IntRange(1, 2), default=1, show_default=True,
              help="h^m: 1 gives fact landmarks, 2 adds conjunctive ones (--factory hm only).")
@click.option("--reasonable", is_flag=True, help="Add reasonable orderings (Hoffmann et al. 2004).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("-o", "--output", type=OutputPath("file"),
              help="Write here instead of stdout (needed for html/png/svg).")
@click.option("--lenient", is_flag=True, help=LENIENT_HELP)
def landmarks(file, problem, factory, m, reasonable, fmt, output, lenient):
    """Fact landmarks and their orderings of FILE (domain and problem in one file) or FILE PROBLEM.

    FILE may be a bundled model's name (asg models lists them). --format html writes one
    self-contained page to explore the graph (pan, zoom, search, filters, achievers).
    """
    from asg.planning import compute_landmarks

    if m != 1 and factory != "hm":
        raise click.UsageError(f"--m {m}: only with --factory hm (the {factory} factory has no m)")
    need_output_for_pictures(fmt, output)
    _, task = _load(file, problem, lenient)
    if factory == "hm" and task.axioms:
        raise click.UsageError(f"--factory hm: {file} has axioms (derived predicates, or universal conditions "
                               "compiled into them), which h^m landmarks do not support, as Fast Downward's "
                               "lm_hm; use --factory rhw or zg")
    graph = compute_landmarks(task, factory=factory, m=m, reasonable=reasonable)
    for note in graph.notes():
        click.echo(f"note: {note}", err=True)
    if not graph.relaxed_solvable:
        click.echo("warning: the goal is unreachable even ignoring deletes; only goal landmarks listed",
                   err=True)
    if fmt in ("png", "svg"):
        from asg.planning.draw import draw

        draw(graph, str(output))
        click.echo(f"wrote {output}")
        return
    if fmt == "json":
        text = json.dumps(graph.to_json(), indent=2) + "\n"
    elif fmt == "dot":
        text = graph.to_dot()
    elif fmt == "html":
        from asg.planning.html_view import to_html

        text = to_html(graph)
    else:
        text = graph.to_text()
    write_or_echo(text, output, err=True)


@click.command(short_help="Plan with Fast Downward; validate on asg's task.")
@click.argument("file", type=_MODEL)
@click.argument("problem", type=_PATH, required=False)
@click.option("--optimal", is_flag=True, help="A* with LM-cut instead of LAMA-first.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--lenient", is_flag=True, help=LENIENT_HELP)
def plan(file, problem, optimal, timeout, as_json, lenient):
    """Plan with Fast Downward (through unified-planning) and validate the plan on asg's task.

    FILE may be a bundled model's name (asg models lists them).
    """
    from asg.planning import find_plan

    _, task = _load(file, problem, lenient)
    result = find_plan(task, optimal=optimal, timeout=timeout)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2))
    elif result.solved:
        click.echo("\n".join(result.lines()))
    else:
        click.echo(f"no plan: {result.message}", err=True)
    if not result.solved:
        sys.exit(1)


@click.command(short_help="Check a PDDL model: declarations, types, reachability.")
@click.argument("file", type=_MODEL)
@click.argument("problem", type=_PATH, required=False)
@click.option("--lenient", is_flag=True, help=LENIENT_HELP)
def check(file, problem, lenient):
    """Check a model: declarations, arities, objects, types, unused names, relaxed goal reachability.

    FILE may be a bundled model's name (asg models lists them).
    """
    from asg.planning import ground, parse_files
    from asg.planning.errors import ModelError
    from asg.planning.landmarks.hm import relaxed_reachable

    model = parse_files(file, problem, lenient=lenient, require_problem=False)
    for warning in model.warnings:
        click.echo(warning.format(), err=True)
    if model.problem is None:
        click.echo(f"{file}: ok (domain only: {len(model.domain.actions)} actions)")
        return
    task = ground(model)
    unreachable = sorted(str(a) for a in task.goal - relaxed_reachable(task))
    if unreachable:
        raise ModelError(f"goal {', '.join(unreachable)} unreachable even ignoring deletes",
                         model.problem_path or file)
    click.echo(f"{model.problem_path or file}: ok ({len(task.facts)} facts, {len(task.operators)} operators, "
               f"{len(model.warnings)} warning(s))")


@click.command(short_help="List the bundled PDDL models and their paths.")
@click.option("--json", "as_json", is_flag=True, help="Print [{name, file, path}] as JSON.")
def models(as_json: bool) -> None:
    """List the PDDL models bundled with asg; any command taking a PDDL FILE accepts their names."""
    from asg import pddl_models

    entries = [{"name": name, "file": path.name, "path": str(path)} for name, path in pddl_models.bundled().items()]
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return
    width = max((len(e["name"]) for e in entries), default=4)
    for entry in entries:
        click.echo(f"{entry['name']:<{width}}  {entry['path']}")
