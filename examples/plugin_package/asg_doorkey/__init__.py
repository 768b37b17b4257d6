"""MiniGrid-DoorKey-8x8 as an ASGRL domain, found by asg through the ``asg.domains`` entry point.

``domain`` is what the entry point names: a zero-argument callable, so nothing (not even
minigrid) is imported until someone asks asg for the ``doorkey`` domain.
"""
from __future__ import annotations

from pathlib import Path

from asg.envs.plugins import PluginDomain, make_domain


def domain() -> PluginDomain:
    """The ``doorkey`` domain: the env id, the labeler of ``labels.py``, the model beside it."""
    from asg_doorkey.labels import DOORKEY

    return make_domain("doorkey", env="MiniGrid-DoorKey-8x8-v0", labeler=DOORKEY,
                       model=Path(__file__).with_name("doorkey.pddl"),
                       description="MiniGrid DoorKey 8x8: key, door, goal (approximate model)")
