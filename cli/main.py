"""The ``asg`` command line: one lazy click group; each family of commands lives in its own module.

``COMMANDS`` maps each command to ``module:attribute`` and its short help, so ``asg --help``
lists every command without importing any of them (start-up imports click and this module
only); a command's module is imported when it is invoked. ``tests/test_cli_errors.py`` checks
that the table agrees with each command's own ``short_help``.

Bad input never ends in a traceback: library errors (``AsgError``) and click usage errors
print one line and exit 2. SIGTERM is handled like Ctrl-C (a ``KeyboardInterrupt``), so the
trainers checkpoint on either; an interrupted command exits 130.
"""
from __future__ import annotations

import importlib
import signal
import sys
from typing import Any

import click

from asg.planning.errors import AsgError

COMMANDS: dict[str, tuple[str, str]] = {  # name: ("module:attribute", the short help `asg --help` prints)
    "check": ("asg.cli.planning_cmds:check", "Check a PDDL model: declarations, types, reachability."),
    "compare": ("asg.cli.train_cmds:compare_cmd", "Run methods x seeds on a domain; write Figure 3."),
    "eval": ("asg.cli.train_cmds:eval_cmd", "Re-evaluate a saved run, or the Fetch programs."),
    "fetch": ("asg.cli.fetch_cmds:fetch", "Run programs in the Fetch 4-block, 2-zone world."),
    "landmarks": ("asg.cli.planning_cmds:landmarks", "Landmarks and orderings of a PDDL model."),
    "models": ("asg.cli.planning_cmds:models", "List the bundled PDDL models and their paths."),
    "mvtr": ("asg.cli.env_cmds:mvtr", "Check a model is an MVTR of a domain's env (ASGRL)."),
    "plan": ("asg.cli.planning_cmds:plan", "Plan with Fast Downward; validate on asg's task."),
    "programs": ("asg.cli.fetch_cmds:programs", "The Fetch program library and its hierarchy."),
    "train": ("asg.cli.train_cmds:train_cmd", "Train ASGRL on a domain (or the Fetch pipeline)."),
}


def error_line(err: Exception | str) -> str:
    """The one line printed for an error: ``FILE:LINE:COL: error: ...`` or ``error: ...``."""
    text = " ".join(str(err).split()) or type(err).__name__
    return text if (" error: " in text or text.startswith("error: ")) else f"error: {text}"


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


class AsgGroup(click.Group):
    """A lazy click group that turns bad input into one clear line and exit code 2, never a traceback."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in self.commands and name in COMMANDS:
            module, _, attribute = COMMANDS[name][0].partition(":")
            self.commands[name] = getattr(importlib.import_module(module), attribute)
        return self.commands.get(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Like click's, but from the static table, importing no command."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in sorted(COMMANDS)])

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            old_term = signal.signal(signal.SIGTERM, _interrupt)
        except ValueError:  # not the main thread
            old_term = None
        try:
            result = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.NoArgsIsHelpError as err:
            click.echo(err.ctx.get_help())
            sys.exit(0)
        except click.UsageError as err:
            where = f" ({err.ctx.command_path})" if err.ctx is not None else ""
            click.echo(error_line(f"error: {err.format_message()}{where}"), err=True)
            sys.exit(2)
        except (click.exceptions.Abort, KeyboardInterrupt):
            click.echo("interrupted", err=True)
            sys.exit(130)
        except (click.ClickException, AsgError) as err:
            click.echo(error_line(err.format_message() if isinstance(err, click.ClickException) else err), err=True)
            sys.exit(err.exit_code)
        except click.exceptions.Exit as err:
            sys.exit(err.exit_code)
        finally:
            if old_term is not None:
                signal.signal(signal.SIGTERM, old_term)
        if isinstance(result, int):
            sys.exit(result)
        return result


@click.group(cls=AsgGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="asg")
def main() -> None:
    """asg: symbolic planning with a reinforcement-learning backend.

    A PDDL FILE may also be a bundled model's name (asg models lists them).
    """


if __name__ == "__main__":
    main()
