"""Typed errors of the learning package; each prints as one line and exits 2 in the CLI."""
from __future__ import annotations

from asg.planning.errors import AsgError


class ConfigError(AsgError):
    """A configuration value or file that cannot be used (names the field or file)."""


class CheckpointError(AsgError):
    """A run directory or checkpoint that is missing, corrupt or of another version."""


class DomainError(AsgError):
    """An unknown domain or a domain whose model does not fit its environment."""


class RunFailedError(AsgError):
    """Training stopped because the world's own code raised (``asgrl.failures``); ``saved``: a
    checkpoint at the last consistent point was written, so the run resumes once the code is fixed."""

    def __init__(self, message: str, *, saved: bool) -> None:
        super().__init__(message)
        self.saved = saved
