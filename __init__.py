"""asg: turn an approximate symbolic model into a working agent.

The distribution maps its folders to ``asg.planning``, ``asg.envs``, ``asg.learning``,
``asg.cli`` and ``asg.pddl_models`` (see ``setup.cfg``).

``asg.register_domain`` (``asg.envs.plugins.register_domain``) adds a world of your own to the
ASGRL domains; it is imported on first use, so ``import asg`` stays light.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {"register_domain": "asg.envs.plugins"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    importlib.import_module("asg.envs.domains")  # reserves the built-in domain names first
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
