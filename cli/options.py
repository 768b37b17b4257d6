"""Parameter types shared by every ``asg`` command: one meaning per option name, checked early.

- ``ModelPath``: a PDDL file, or a bundled model's name (``asg models`` lists them).
- ``InputPath``: an existing file or folder (an empty string is refused, not read as ``.``).
- ``OutputPath``: where a command will write a file or a folder, checked before any work starts:
  the parent folder exists, the place is writable (probed, so ``/proc`` and read-only mounts are
  caught even as root), a file is not meant where a folder stands or the other way round, and a
  device such as ``/dev/null`` is not taken for a file.
- ``LazyChoice``: a ``click.Choice`` whose choices are read on first use (keeps ``asg`` fast).

Errors are ``AsgError`` lines naming the option: ``error: --out /proc/x: cannot write in /proc (...)``.
"""
from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from asg.planning.errors import AsgError

T = TypeVar("T")


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


class InputPath(click.ParamType):
    """An existing file (``kind="file"``), folder (``"dir"``) or either (``"any"``)."""

    name = "path"

    def __init__(self, kind: str = "file") -> None:
        if kind not in ("file", "dir", "any"):
            raise ValueError(kind)
        self.kind = kind

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:  # type: ignore[override]
        return {"file": "FILE", "dir": "DIR", "any": "PATH"}[self.kind]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        name = option_name(param)
        text = str(value)
        if not text.strip():
            raise AsgError(f"{name}: an empty path")
        path = Path(text).expanduser()
        if not path.exists():
            raise AsgError(f"{name} {text}: no such {'folder' if self.kind == 'dir' else 'file'}")
        if self.kind == "file" and path.is_dir():
            raise AsgError(f"{name} {text}: is a folder, not a file")
        if self.kind == "dir" and not path.is_dir():
            raise AsgError(f"{name} {text}: is a file, not a folder")
        return path


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
        return check_output(value, self.kind, option_name(param))


def check_output(value: str | Path, kind: str, option: str) -> Path:
    """``value`` as a ``Path`` if a ``kind`` ("file" or "dir") can be written there; else ``AsgError``."""
    text = str(value)
    where = f"{option} {text}"
    if not text.strip():
        raise AsgError(f"{option}: an empty path")
    path = Path(text).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise AsgError(f"{where}: cannot use it ({err.strerror})") from None
    if info is not None:
        if kind == "file":
            if stat.S_ISDIR(info.st_mode):
                raise AsgError(f"{where}: is a folder; give a file name")
            if not stat.S_ISREG(info.st_mode):
                raise AsgError(f"{where}: not a regular file (a device or pipe); give a file name")
            if not os.access(path, os.W_OK):
                raise AsgError(f"{where}: the file is not writable")
            _probe(path.parent, where)
        else:
            if stat.S_ISREG(info.st_mode):
                raise AsgError(f"{where}: is a file; give a folder")
            if not stat.S_ISDIR(info.st_mode):
                raise AsgError(f"{where}: not a folder (a device or pipe)")
            _probe(path, where)
        return path
    parent = path.parent
    if not parent.exists():
        raise AsgError(f"{where}: the folder {parent} does not exist")
    if not parent.is_dir():
        raise AsgError(f"{where}: {parent} is not a folder")
    _probe(parent, where)
    return path


def _probe(folder: Path, where: str) -> None:
    """Create and remove a file in ``folder``: the only test that also holds for root and /proc."""
    try:
        fd, name = tempfile.mkstemp(prefix=".asg-write-test-", dir=folder)
    except OSError as err:
        raise AsgError(f"{where}: cannot write in {folder} ({err.strerror or type(err).__name__})") from None
    os.close(fd)
    try:
        os.unlink(name)
    except OSError:
        pass


def need_output_for_pictures(fmt: str, output: Path | None) -> None:
    """``--format html|png|svg`` writes a page or a picture: it needs ``-o/--output FILE`` ending in ``.fmt``."""
    if fmt not in ("html", "png", "svg"):
        return
    if output is None:
        raise click.UsageError(f"--format {fmt} needs -o/--output FILE.{fmt}")
    if output.suffix.lower() != f".{fmt}":
        raise AsgError(f"-o {output}: the file name must end in .{fmt} for --format {fmt}")


class LazyChoice(click.Choice):
    """A ``click.Choice`` whose choices come from ``source()`` on first use (keeps ``asg`` fast)."""

    def __init__(self, source: Callable[[], list[str]] | Callable[[], tuple[str, ...]],
                 case_sensitive: bool = True) -> None:
        self._source = source
        self._choices: tuple[str, ...] | None = None
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        if self._choices is None:
            self._choices = tuple(self._source())
        return self._choices

    @choices.setter
    def choices(self, value: Any) -> None:  # click.Choice.__init__ would set it
        self._choices = tuple(value)


def split_list(option: str, value: str | None, known: list[str]) -> list[str] | None:
    """``A,B`` -> ``["A", "B"]``, each checked against ``known`` (case-insensitively)."""
    if value is None:
        return None
    by_lower = {name.lower(): name for name in known}
    chosen = []
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        if item.lower() not in by_lower:
            raise AsgError(f"{option}: unknown name {item!r}; choose from {', '.join(known)}")
        chosen.append(by_lower[item.lower()])
    if not chosen:
        raise AsgError(f"{option}: an empty list")
    return chosen


def apply_config_file(cfg: T, path: Path) -> T:
    """``cfg`` with the nested fields of the JSON file ``path`` on top (a whole saved ``config.json``,
    ``{"config": {...}, ...}``, works too), every value checked; errors name the file and key path."""
    import json

    from asg.learning.configio import override
    from asg.learning.errors import ConfigError

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AsgError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise AsgError(f"{path}: not a JSON config ({type(err).__name__})") from None
    if isinstance(data, dict) and isinstance(data.get("config"), dict):
        data = data["config"]
    if not isinstance(data, dict):
        raise AsgError(f"{path}: a config file must hold a JSON object")
    try:
        return override(cfg, data, "config")
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None


def refuse_out_of_scope(ctx: click.Context, scopes: dict[str, frozenset[str]], workflow: str,
                        message: Callable[[str, frozenset[str]], str]) -> None:
    """A usage error for the first option given on the command line (or in the environment) whose
    scope does not hold ``workflow``: options of one workflow are refused by the others, not ignored.
    ``scopes`` maps a parameter name to the workflows it belongs to (absent: every workflow);
    ``message(flag, scope)`` words the error."""
    given = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    for param in ctx.command.params:
        scope = scopes.get(param.name or "")
        if scope is not None and workflow not in scope and ctx.get_parameter_source(param.name or "") in given:
            raise click.UsageError(message(option_name(param), scope), ctx)
