"""The ``asg`` command line: one click group; each family of commands lives in its own module.

Bad input never ends in a traceback: library errors (``AsgError``) and click usage errors
print one line and exit 2.
"""
from __future__ import annotations

import sys

import click

from asg.planning.errors import AsgError


def error_line(err: Exception) -> str:
    """The one line printed for an error: ``FILE:LINE:COL: error: ...`` or ``error: ...``."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if (" error: " in text or text.startswith("error: ")) else f"error: {text}"


class AsgGroup(click.Group):
    """A click group that turns bad input into one clear line and exit code 2, never a traceback."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            result = super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as err:
            click.echo(err.ctx.get_help())
            sys.exit(0)
        except click.UsageError as err:
            where = f" ({err.ctx.command_path})" if err.ctx is not None else ""
            click.echo(f"error: {err.format_message()}{where}", err=True)
            sys.exit(2)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(130)
        except click.ClickException as err:
            click.echo(error_line(err.format_message()), err=True)
            sys.exit(err.exit_code)
        except AsgError as err:
            click.echo(error_line(err), err=True)
            sys.exit(err.exit_code)
        except click.exceptions.Exit as err:
            sys.exit(err.exit_code)
        if isinstance(result, int):
            sys.exit(result)
        return result


@click.group(cls=AsgGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="asg")
def main() -> None:
    """asg: symbolic planning with a reinforcement-learning backend."""


def _register() -> None:
    from asg.cli import planning_cmds

    for module in (planning_cmds,):
        module.register(main)
    # Optional families: each module registers its commands when present.
    import importlib

    for name in ("env_cmds", "train_cmds", "fetch_cmds", "fetch_programs_cmds"):
        try:
            module = importlib.import_module(f"asg.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"asg.cli.{name}":
                raise
            continue
        module.register(main)


_register()


if __name__ == "__main__":
    main()
