"""Parameter types shared by every ``asg`` command: one meaning per option name, checked early.

- ``ModelPath``: a PDDL file, or a bundled model's name (``asg models`` lists them).
- ``existing``: an existing file or folder (``click.Path``).
- ``OutputPath``: where a command will write a file or a folder, checked before any work starts
  (``asg.learning.atomic.check_writable``: the parent exists, the place is writable, a file is not
  meant where a folder stands, ``/dev/null`` is no file).
- ``LazyChoice``: a ``click.Choice`` whose choices are read at each use (keeps ``asg`` fast).
- ``grid_options``: ``--jobs N`` and ``--ray-address ADDR``, where a grid's cells run
  (``learning.asgrl.grid.run_cells``); ``add_grid_arguments`` gives a benchmark script's argparse
  parser the same two options, checked the same way (``check_grid_options``).

Errors are ``AsgError`` lines naming the option: ``error: --out /proc/x: cannot write in /proc (...)``.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click

from asg.learning.atomic import UnwritableError, atomic_write, check_writable
from asg.learning.configio import FieldError
from asg.planning.errors import AsgError


def option_name(param: click.Parameter | None) -> str:
    """How the user spells ``param``: its longest flag (``--out``), or its metavar for arguments."""
    if param is None:
        return "value"
    if isinstance(param, click.Option):
        return "/".join(sorted(param.opts, key=len))
    return (param.name or "value").upper()


class ModelPath(click.ParamType):
    """A PDDL file: an existing path wins, else a bundled model's name (``household-v1``)."""

    name = "model"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # type: ignore[override]
        return "FILE|NAME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            return value
        from asg import pddl_models

        if not str(value).strip():
            raise AsgError(f"{option_name(param)}: an empty name; give a PDDL file or a bundled model "
                           "(asg models lists them)")
        return pddl_models.resolve(value)


def existing(kind: str = "file") -> click.Path:
    """An existing file (``kind="file"``), folder (``"dir"``) or either (``"any"``): click's own check,
    whose error names the option."""
    return click.Path(exists=True, file_okay=kind != "dir", dir_okay=kind != "file", path_type=Path)


class OutputPath(click.ParamType):
    """A file (``kind="file"``) or folder (``kind="dir"``) a command will write, checked up front."""

    name = "output"

    def __init__(self, kind: str = "file") -> None:
        if kind not in ("file", "dir"):
            raise ValueError(kind)
        self.kind = kind

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # type: ignore[override]
        return "FILE" if self.kind == "file" else "DIR"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        name, text = option_name(param), str(value)
        if not text.strip():
            raise AsgError(f"{name}: an empty path")
        try:
            return check_writable(text, self.kind)
        except UnwritableError as err:
            raise AsgError(f"{name} {text}: {err.reason}") from None


def need_output_for_pictures(fmt: str, output: Path | None) -> None:
    """``--format html|png|svg`` writes a page or a picture: it needs ``-o/--output FILE`` ending in ``.fmt``."""
    if fmt not in ("html", "png", "svg"):
        return
    if output is None:
        raise click.UsageError(f"--format {fmt} needs -o/--output FILE.{fmt}")
    if output.suffix.lower() != f".{fmt}":
        raise AsgError(f"-o {output}: the file name must end in .{fmt} for --format {fmt}")


class LazyChoice(click.Choice):
    """A ``click.Choice`` whose choices are read from ``source()`` at each use, not at import: ``asg``
    starts fast, and a domain a plug-in registers later is a choice too."""

    def __init__(self, source: Callable[[], list[str]] | Callable[[], tuple[str, ...]]) -> None:
        self._source, self.case_sensitive = source, True

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._source())

    @choices.setter
    def choices(self, value: Any) -> None:  # click.Choice.__init__ would set it
        pass


def split_list(option: str, value: str | None, known: list[str], what: str = "name") -> list[str] | None:
    """``A,B`` -> ``["A", "B"]``, each checked against ``known`` (case-insensitively; ``what`` a name is)."""
    if value is None:
        return None
    by_lower = {name.lower(): name for name in known}
    chosen = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        if item.lower() not in by_lower:
            raise AsgError(f"{option}: unknown {what} {item!r}; choose from {', '.join(known)}")
        chosen.append(by_lower[item.lower()])
    if not chosen:
        raise AsgError(f"{option}: an empty list")
    return chosen


class Scoped(click.Option):
    """An option of some workflows only (``scope``: their names; None: of every one)."""

    def __init__(self, decls: Sequence[str], scope: Iterable[str] | None = None, **kwargs: Any) -> None:
        super().__init__(decls, **kwargs)
        self.scope = None if scope is None else frozenset(scope)


def refuse_out_of_scope(ctx: click.Context, workflow: str, message: Callable[[str, frozenset[str], str], str]) -> None:
    """A usage error for the first :class:`Scoped` option given (on the command line or in the
    environment) outside ``workflow``: options of one workflow are refused by the others, not
    ignored. ``message(flag, scope, workflow)`` words the error."""
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    for param in ctx.command.params:
        scope = getattr(param, "scope", None)
        if scope is not None and workflow not in scope and ctx.get_parameter_source(param.name or "") in given:
            raise click.UsageError(message(option_name(param), scope, workflow), ctx)


def flag(name: str) -> str:
    """How the user spells the running command's parameter ``name`` (``env_id`` -> ``--env``)."""
    return next(option_name(p) for p in click.get_current_context().command.params if p.name == name)


@contextlib.contextmanager
def fields_as_options(**renamed: str) -> Iterator[None]:
    """A library ``FieldError`` about an argument or config field, re-raised as one line naming the
    running command's option of that name (or of ``renamed[field]``); the library names no flags."""
    try:
        yield
    except FieldError as err:
        name = renamed.get(err.field, err.field)
        if name not in {p.name for p in click.get_current_context().command.params}:
            raise
        raise AsgError(f"{flag(name)}: {err.detail}") from None


@contextlib.contextmanager
def own_world_as_options() -> Iterator[None]:
    """A world of the user's own that cannot be built (``envs.plugins.PluginError``, naming its
    parameter ``env``, ``labeler`` or ``model``) as one line naming that option."""
    from asg.envs.plugins import PluginError

    try:
        yield
    except PluginError as err:
        raise AsgError(f"--{err.param} {err.value}: {err.reason}") from None


def echo_result(result: Any, as_json: bool) -> None:
    """A result object for the user: ``to_json()`` as sorted JSON, else its ``lines()`` or ``to_text()``."""
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=2, sort_keys=True, default=str))
    else:
        click.echo("\n".join(result.lines()) if hasattr(result, "lines") else result.to_text())


def write_or_echo(text: str, output: Path | None, err: bool = False) -> None:
    """``text`` (ending in a newline) to stdout, or atomically to ``output`` and ``wrote OUTPUT`` to
    stdout (to stderr with ``err``)."""
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        atomic_write(output, text.encode("utf-8"))
    except OSError as error:
        raise AsgError(f"-o/--output {output}: cannot write ({error.strerror})") from None
    click.echo(f"wrote {output}", err=err)


def print_next(*commands: tuple[str, str]) -> None:
    """``next:`` and the commands a user would type after this one, each with why."""
    width = max(len(command) for command, _ in commands)
    click.echo("next:")
    for command, why in commands:
        click.echo(f"  {command:<{width}}  # {why}" if why else f"  {command}")


def world_parts(domain: str | None, env: str | None, labeler: str | None, model: Path | str | None) -> bool:
    """Whether ``--env``, ``--labeler`` and ``--model`` name a world of the user's own (instead of
    ``--domain``); one line naming the option when they are given only in part or with --domain."""
    if env is None and labeler is None:
        return False
    if domain is not None:
        raise AsgError("--env: not with --domain (a world of your own is its own domain)")
    missing = [name for name, value in (("--env", env), ("--labeler", labeler), ("--model", model)) if value is None]
    if missing:
        raise AsgError(f"{missing[0]}: needed with {'--labeler' if missing[0] == '--env' else '--env'} "
                       "(--env, --labeler and --model name a world of your own together)")
    return True


JOBS_HELP = "Run the cells on a local Ray with N CPUs, one a cell (needs the distributed extra)."
RAY_ADDRESS_HELP = "Run the cells on the Ray cluster at ADDR (host:port of `ray start --head`)."


def grid_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--jobs N`` and ``--ray-address ADDR`` (parameters ``jobs``, ``ray_address``) of a grid command."""
    command = click.option("--ray-address", metavar="ADDR", help=RAY_ADDRESS_HELP)(command)
    return click.option("--jobs", type=click.IntRange(min=1), help=JOBS_HELP)(command)


def check_grid_options(jobs: int | None, ray_address: str | None) -> None:
    """--jobs and --ray-address: not both, and only where Ray is installed."""
    if jobs is not None and ray_address is not None:
        raise click.UsageError("--jobs: not with --ray-address (the cluster's CPUs are its own; start the head "
                               "with ray start --head --num-cpus N)")
    if jobs is None and ray_address is None:
        return
    if importlib.util.find_spec("ray") is None:
        name = "--jobs" if jobs is not None else "--ray-address"
        raise AsgError(f"{name} needs the distributed extra: pip install 'asg[distributed]'")
    if ray_address is not None and not ray_address.strip():
        raise AsgError("--ray-address: an empty address; give host:port (ray start --head prints it)")


def _at_least_one(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is smaller than the minimum valid value 1")
    return value


def add_grid_arguments(parser: argparse.ArgumentParser) -> None:
    """``--jobs N`` and ``--ray-address ADDR`` for a benchmark script's parser, as ``grid_options``."""
    parser.add_argument("--jobs", type=_at_least_one, metavar="N", help=JOBS_HELP)
    parser.add_argument("--ray-address", metavar="ADDR", help=RAY_ADDRESS_HELP)


def run_benchmark_grid(cells: Sequence[Any], out: Path, where: dict[str, Any],
                       on_done: Callable[..., None] | None = None) -> tuple[list[Any], bool]:
    """A benchmark script's grid: ``cells`` through ``grid.run_cells`` (finished cells read back) under the
    one progress view, on ``where`` (``grid_arguments``). Returns the runs and whether Ctrl-C stopped the
    grid, in which case it has said that the same command resumes. A run folder of another config
    under ``out`` is one line and exit 2 (``SystemExit``), the folder untouched."""
    import sys

    from asg.cli.progress import Stages
    from asg.learning.asgrl.grid import run_cells
    from asg.learning.errors import ConfigError

    stages = Stages()
    try:
        try:
            runs = run_cells(cells, out, reuse=True, progress=stages, on_done=on_done, **where)
        finally:
            stages.close()
    except ConfigError as err:  # a run folder of another config under ``out``: left as it is
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    interrupted = any(run.result.status == "interrupted" for run in runs)
    if interrupted:
        print("interrupted; the same command resumes", file=sys.stderr)
    return runs, interrupted


def grid_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """``jobs`` and ``ray_address`` of parsed ``args`` (``add_grid_arguments``) for ``run_cells``,
    checked as ``check_grid_options`` checks them (``parser.error``: one line, exit 2)."""
    try:
        check_grid_options(args.jobs, args.ray_address)
    except (click.UsageError, AsgError) as err:
        parser.error(err.message if isinstance(err, click.UsageError) else str(err))
    return {"jobs": args.jobs, "ray_address": args.ray_address}
