"""The symbolic models shipped with asg (ASGRL Appendix H; the Fetch program library).

Every command that takes a PDDL file also takes a bundled model's name: the file's stem with
``_`` written ``-`` (``household-v1``; the underscore form works too). ``resolve`` is the one
place that decides: an existing path wins, then a bundled name, else an ``AsgError``.
``names()`` and ``path(name)`` are the older file-name API, kept for the env registry.
Locations come from ``importlib.resources``, so they work from an installed wheel.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from asg.planning.errors import AsgError

SUFFIX = ".pddl"


def names() -> list[str]:
    """The shipped model files, sorted (e.g. ``household_v1.pddl``)."""
    return sorted(p.name for p in resources.files(__name__).iterdir() if p.name.endswith(SUFFIX))


def bundled() -> dict[str, Path]:
    """Bundled model name (``household-v1``) -> path of its file, sorted by name."""
    return {_public_name(name): _file(name) for name in names()}


def path(name: str) -> Path:
    """Path of a shipped model; ``name`` may omit ``.pddl`` and use ``-`` or ``_``."""
    target = _bundled_file(name)
    if target is None:
        raise FileNotFoundError(f"no shipped model {name!r}; have {names()}")
    return target


def resolve(spec: str | Path) -> Path:
    """A PDDL file named by a path (an existing one wins) or by a bundled model's name."""
    text = str(spec)
    if not text.strip():
        raise AsgError("error: an empty model name; give a PDDL file or a bundled model (asg models lists them)")
    candidate = Path(text).expanduser()
    if candidate.exists():
        return candidate
    target = _bundled_file(text)
    if target is not None:
        return target
    raise AsgError(f"{text}: no such file or bundled model (asg models lists them)")


def _public_name(file_name: str) -> str:
    return file_name[: -len(SUFFIX)].replace("_", "-")


def _file(file_name: str) -> Path:
    return Path(str(resources.files(__name__) / file_name))


def _bundled_file(name: str) -> Path | None:
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    if not stem or "/" in stem or "\\" in stem or stem.startswith("."):
        return None
    file_name = stem.lower().replace("-", "_") + SUFFIX
    return _file(file_name) if file_name in names() else None
