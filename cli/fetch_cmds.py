"""``asg programs`` and ``asg fetch run``: the AlphaNPI-X program library and its Fetch world.

``asg fetch run`` exits 0 when the program's post-condition holds at the end, 1 when it does
not, 2 on bad input.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from asg.cli.options import OutputPath, need_output_for_pictures
from asg.learning.atomic import atomic_output, atomic_write
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
    from asg.planning.programs import fetch_library

    if as_json and fmt != "text":
        raise click.UsageError(f"--json: not with --format {fmt}")
    need_output_for_pictures(fmt, output)

    library = fetch_library()
    if as_json:
        data = library.to_json()
        for entry in data["programs"]:
            entry["subgoals"] = None if entry["level"] == 0 else [str(a) for a in library.subgoals(entry["name"])]
        _emit(json.dumps(data, indent=2), output)
    elif fmt == "text":
        _emit(format_library(library), output)
    else:
        draw_hierarchy(library, output, fmt)
        click.echo(f"wrote {output}")


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text)
        return
    try:
        atomic_write(output, (text + "\n").encode("utf-8"))
    except OSError as err:
        raise AsgError(f"-o/--output {output}: cannot write ({err.strerror})") from None
    click.echo(f"wrote {output}")


def format_library(library) -> str:
    """The library as text: one block per program, then the family call hierarchy."""
    lines = [f"{len(library.atomic)} atomic and {len(library.non_atomic)} non-atomic programs "
             f"({library.path})", ""]
    for p in library:
        lines.append(f"{p.name}  level {p.level}  arguments ({' '.join(p.arguments)})")
        if p.description:
            lines.append(f"  {p.description}")
        if p.calls:
            lines.append(f"  calls: {len(p.calls)} programs ({', '.join(_families(library, p.calls))})")
        lines.append(f"  pre:  {p.pre}")
        lines.append(f"  post: {p.post}")
        if not p.atomic:
            subgoals = " ".join(map(str, library.subgoals(p.name))) or "none (no single atom is forced)"
            lines.append(f"  landmarks (from the model's :init): {subgoals}")
    lines += ["", "call hierarchy (families, highest level first):"]
    for family, level, callees in family_graph(library):
        lines.append(f"  [{level}] {family}" + (f" -> {', '.join(callees)}" if callees else ""))
    return "\n".join(lines)


def _families(library, names) -> list[str]:
    seen: list[str] = []
    for name in names:
        family = library.get(name).family
        if family not in seen:
            seen.append(family)
    return seen


def family_graph(library) -> list[tuple[str, int, list[str]]]:
    """(family, level, called families) for every family, highest level first."""
    out: dict[str, tuple[int, list[str]]] = {}
    for p in library:
        out.setdefault(p.family, (p.level, _families(library, p.calls)))
    return sorted(((f, lv, calls) for f, (lv, calls) in out.items()), key=lambda t: -t[1])


def draw_hierarchy(library, output: Path, fmt: str) -> None:
    """Draw the family call graph, one row per level, with matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graph = family_graph(library)
    counts = {f: sum(1 for p in library if p.family == f) for f, _, _ in graph}
    rows: dict[int, list[str]] = {}
    for family, level, _ in graph:
        rows.setdefault(level, []).append(family)
    pos = {f: ((i + 1) / (len(fs) + 1), level) for level, fs in rows.items() for i, f in enumerate(fs)}
    fig, ax = plt.subplots(figsize=(10, 1.8 * (len(rows) + 1)))
    for family, _, callees in graph:
        for callee in callees:
            ax.annotate("", xy=pos[callee], xytext=pos[family],
                        arrowprops={"arrowstyle": "->", "color": "0.5", "shrinkA": 14, "shrinkB": 14})
    for family, (x, y) in pos.items():
        ax.text(x, y, f"{family}\n{counts[family]} program{'s' * (counts[family] > 1)}", ha="center",
                va="center", bbox={"boxstyle": "round", "fc": "#cfe8cf" if y == 0 else "#cfdff5"})
    ax.set_ylim(-0.6, max(rows) + 0.6)
    ax.set_yticks(sorted(rows), [f"level {lv}" for lv in sorted(rows)])
    ax.set_xticks([])
    ax.set_xlim(0, 1)
    ax.set_title("AlphaNPI-X program hierarchy (arrows: may call)")
    with atomic_output(output) as handle:
        fig.savefig(handle, format=fmt, bbox_inches="tight")
    plt.close(fig)


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
    from asg.planning.programs import fetch_library

    library = fetch_library()
    try:
        name = library.get(program).name
    except KeyError:
        raise AsgError(f"unknown program {program!r}; `asg programs` lists all "
                       f"{len(library)}") from None
    if frames is not None:
        os.environ.setdefault("MUJOCO_GL", "egl")
    from asg.envs.fetch.env import FetchBlocksEnv
    from asg.envs.fetch.runner import execute_program
    from asg.envs.fetch.scripted import ScriptedController

    env = FetchBlocksEnv(initial_state=initial_state, max_steps=None,
                         render_mode="rgb_array" if frames is not None else None, width=320, height=320)
    options = {"program": name} if library.get(name).atomic else {}
    env.reset(seed=seed, options=options)
    writer = _FrameWriter(env, frames, frame_every) if frames is not None else None
    click.echo(f"{name} (seed {seed}, {initial_state} start)")
    click.echo("  start: " + " ".join(sorted(map(str, env.atoms()))))
    result = execute_program(env, name, ScriptedController(), on_step=writer)
    if result.plan is not None and not result.plan.atomic:
        click.echo("plan (exact behaviour model):")
        click.echo("\n".join("  " + line for line in result.plan.lines()))
    if result.calls:
        click.echo("executed (scripted controller, re-planning after each atomic program):")
    for k, call in enumerate(result.calls, start=1):
        click.echo(f"  {k:2d}. {call.program:<26} {'ok' if call.success else 'FAILED'}")
    click.echo("  end:   " + " ".join(sorted(map(str, env.atoms()))))
    if writer is not None:
        click.echo(f"wrote {writer.count} frames to {frames}")
    env.close()
    verdict = "success" if result.success else f"failure{': ' + result.reason if result.reason else ''}"
    click.echo(f"{verdict} ({result.steps} steps, {len(result.calls)} atomic calls)")
    sys.exit(0 if result.success else 1)


class _FrameWriter:
    """Renders every ``every``-th step to DIR/frame_00000.png."""

    def __init__(self, env, folder: Path, every: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.env, self.folder, self.every, self.step, self.count = env, folder, every, 0, 0
        self.write()

    def __call__(self, env) -> None:
        self.step += 1
        if self.step % self.every == 0:
            self.write()

    def write(self) -> None:
        import matplotlib.pyplot as plt

        try:
            frame = self.env.render()
        except Exception as err:  # GL back-ends fail in many ways; say what to do instead
            raise AsgError(f"--frames: rendering failed ({type(err).__name__}: {err}); set MUJOCO_GL=egl "
                           "or MUJOCO_GL=osmesa (Debian: apt-get install libosmesa6)") from None
        plt.imsave(self.folder / f"frame_{self.count:05d}.png", frame)
        self.count += 1


def register(group: click.Group) -> None:
    """Add ``programs`` and ``fetch`` to the ``asg`` group."""
    group.add_command(programs)
    group.add_command(fetch)
