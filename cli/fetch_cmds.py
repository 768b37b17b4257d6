"""``asg programs`` and ``asg fetch run``: the AlphaNPI-X program library and its Fetch world.

``asg fetch run`` exits 0 when the program's post-condition holds at the end, 1 when it does
not, 2 on bad input.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from asg.cli.options import OutputPath, need_output_for_pictures, write_or_echo
from asg.learning.atomic import atomic_output
from asg.planning.errors import AsgError

FORMATS = ("text", "png", "svg")
CONTROLLERS = ("scripted",)
INITIAL_STATES = ("table", "training")


@click.command("programs", short_help="The Fetch program library and its hierarchy.")
@click.option("--json", "as_json", is_flag=True, help="Print the library as JSON.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: the table and the call hierarchy; png/svg: the hierarchy drawn as a graph.")
@click.option("-o", "--output", type=OutputPath("file"),
              help="Write to this file (required for png and svg).")
def programs(as_json: bool, fmt: str, output: Path | None) -> None:
    """The Fetch program library: levels, arguments, pre/post-conditions, who calls whom, and each
    non-atomic program's landmark subgoals (from every block on the table)."""
    from asg.planning.program_view import draw_hierarchy, library_json, library_text
    from asg.planning.programs import fetch_library

    if as_json and fmt != "text":
        raise click.UsageError(f"--json: not with --format {fmt}")
    need_output_for_pictures(fmt, output)

    library = fetch_library()
    if as_json:
        write_or_echo(json.dumps(library_json(library), indent=2) + "\n", output)
    elif fmt == "text":
        write_or_echo(library_text(library) + "\n", output)
    else:
        with atomic_output(output) as handle:
            handle.write(draw_hierarchy(library, fmt))
        click.echo(f"wrote {output}")


@click.group("fetch", short_help="Run programs in the Fetch 4-block, 2-zone world.")
def fetch() -> None:
    """The Fetch 4-block, 2-zone world of AlphaNPI-X."""


@fetch.command("run", short_help="Execute a program in MuJoCo and report its post-condition.")
@click.argument("program")
@click.option("--controller", type=click.Choice(CONTROLLERS), default="scripted", show_default=True,
              help="Who executes atomic programs.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the initial state.")
@click.option("--initial-state", type=click.Choice(INITIAL_STATES), default="table", show_default=True,
              help="table: every block on the table (evaluation); training: Appendix D.1.")
@click.option("--frames", type=OutputPath("dir"),
              help="Write rendered PNG frames to this folder (needs a GL backend).")
@click.option("--frame-every", type=click.IntRange(min=1), default=5, show_default=True,
              help="Render one frame every N env steps.")
def run(program: str, controller: str, seed: int, initial_state: str, frames: Path | None,
        frame_every: int) -> None:
    """Execute PROGRAM (atomic, or non-atomic via a planner over the exact model) and report.

    Exit 0 when PROGRAM's post-condition holds at the end, 1 when not, 2 on bad input.
    """
    from asg.envs.fetch import RenderError, run_program

    try:
        episode = run_program(program, seed, initial_state, frames, frame_every)
    except RenderError as err:
        raise AsgError(f"--frames: {err}") from None
    click.echo("\n".join(episode.lines()))
    sys.exit(0 if episode.run.success else 1)
