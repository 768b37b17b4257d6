"""The ``asg`` command line: one click group; each family of commands lives in its own module.

Bad input never ends in a traceback: library errors (``AsgError``) and click usage errors
print one line and exit 2.
"""
from __future__ import annotations

import sys

import click

from asg.planning.errors import AsgError


class AsgGroup(click.Group):
    """A click group that turns library errors into one clear line and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except AsgError as err:
            click.echo(str(err) if str(err).count(": error: ") or str(err).startswith("error")
                       else f"error: {err}", err=True)
            sys.exit(err.exit_code)


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

    for name in ("env_cmds", "train_cmds", "fetch_cmds"):
        try:
            module = importlib.import_module(f"asg.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"asg.cli.{name}":
                raise
            continue
        module.register(main)


_register()
