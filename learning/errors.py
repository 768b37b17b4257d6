"""Typed errors of the learning package; each prints as one line and exits 2 in the CLI."""
from __future__ import annotations

from asg.planning.errors import AsgError


class ConfigError(AsgError):
    """A configuration value or file that cannot be used (names the field or file)."""


class CheckpointError(AsgError):
    """A run directory or checkpoint that is missing, corrupt or of another version."""


class DomainError(AsgError):
    """An unknown domain or a domain whose model does not fit its environment."""
