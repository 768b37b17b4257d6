"""How a training stage or an evaluation ended: one status vocabulary for both halves of asg.

Every result dataclass (``asgrl.trainer.TrainResult``, ``fetch_programs.StageResult``,
``fetch_programs.PipelineResult``, ``fetch_programs.SuiteResult``) carries a :class:`Status`; its
``to_json`` writes the status as its plain string value, the key other tools read.
"""
from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """The end state of a run, stage or evaluation (a ``str``: it compares and serialises as its value)."""

    RUNNING = "running"
    """Still going (the state saved inside a checkpoint)."""
    FINISHED = "finished"
    """The whole budget was spent."""
    SOLVED = "solved"
    """Stopped early: the success criterion held (ASGRL's early stop, the meta-controller's validation)."""
    PAUSED = "paused"
    """Stopped at a budget of this call (``max_epochs``); the same run resumes and continues."""
    INTERRUPTED = "interrupted"
    """Ctrl-C or SIGTERM: checkpointed at a safe point; resuming repeats the uninterrupted run."""
    REUSED = "reused"
    """Not trained: a finished run folder, or a file shipped with asg, was used."""
    EVALUATED = "evaluated"
    """An evaluation that ran all its episodes."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: str) -> Status:
        """The status named ``value`` (as written by ``to_json``); ``ValueError`` for another string."""
        return cls(value)
