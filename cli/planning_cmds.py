"""``asg landmarks``, ``asg plan``, ``asg check``."""
from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add the planning commands to the ``asg`` group."""
