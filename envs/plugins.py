"""Plug-in domains: bring your own world to ASGRL.

## Description

A domain is three things, and nothing here asks for more:

* an **env factory**: a registered Gymnasium id (``"MiniGrid-DoorKey-8x8-v0"``; ``"pkg:Id"``
  imports ``pkg`` first, as ``gymnasium.make`` does), or a callable returning a
  ``gymnasium.Env``, with or without a ``max_steps=`` keyword. The action space must be ``Discrete``.
  Episodes end where the env's own do (its Gymnasium ``TimeLimit``, a Minigrid env's
  ``max_steps``), for ASGRL as for the flat learners and baselines, so a world is learned with the
  time limit its authors gave it; ``max_episode_steps=N`` overrides it, and an env without one
  is capped at ``DEFAULT_EPISODE_STEPS`` (2000, asg's own worlds' length).
* a **labeler**: ground atom text -> predicate, as a dict ``{"(has-key)": lambda env: ...}``,
  a ``LabelTable`` (one decorator per atom) or an ``asg.envs.labeling.Labeler``.
* a **PDDL model**: a file path, or the name of a bundled model (``asg.pddl_models``).

A registered plug-in is looked up, bound and trained exactly like asg's own domains:
``asg.envs.domains.get_domain`` -> ``asg.learning.registry.bind_domain`` -> the same trainer.

## How a labeler sees the env

A plug-in predicate receives the **unwrapped env** (``env.unwrapped``; ``Labeler.reads ==
"env"``), so a Minigrid labeler reads ``env.carrying``, ``env.agent_pos`` or ``env.grid``.
It must not change the env. asg's own labelers read ``hashable_state()`` instead
(``reads == "state"``); such a labeler works on a plug-in env only if the env has that method.
A predicate that raises is reported as a ``LabelerEvaluationError`` naming the atom.

## Observations: the tabular route

The tabular learners key their Q tables on the observation's exact bytes, so the observation
must be Markov. With ``observation="state"`` (the default) ``make_env`` adapts the env:

* a Minigrid env's observation becomes its full state, a ``uint8`` vector (``StateObservation``:
  the grid encoding, agent position and direction, what it carries), since Minigrid's own
  egocentric view is not Markov;
* any other env keeps its own observation, keyed by its bytes. That is exact when the
  observation is the state (a position, a board); otherwise write the env so that it is.

``observation="view"`` (Minigrid only) gives Minigrid's own egocentric view, the ``image`` of its
observation (``minigrid.wrappers.ImgObsWrapper``): 7 x 7 cells of (object, colour, state) codes,
the carried object drawn in the agent's cell. It is not Markov (a Q table would alias states),
but it reads the same wherever the agent stands, so a network learns one policy for layouts
drawn anew; it is what deep skills with ``deep.encoding = "categorical"`` read.
``observation="env"`` keeps the env's own observations for learners that read them (images).
``fixed_seed=N`` resets every episode with seed ``N`` (``FixedSeed``), so a procedurally
generated world keeps one layout, the setting in which tabular skills can learn it.

## Public names

* ``register_domain(name, *, env, labeler, model, max_episode_steps=None, skill_max_steps=700,
  description="", fixed_seed=None, observation="state", env_kwargs=None, replace=False)
  -> PluginDomain``: build and register (exported as ``asg.register_domain``).
* ``make_domain(name, *, env, labeler, model, ...) -> PluginDomain``: build without registering
  (what an entry point names).
* ``add_domain(spec, *, replace=False)``, ``unregister_domain(name)``: the registry itself.
* ``domain_from_parts(env, labeler, model, *, name=None, ...) -> PluginDomain``: the command
  line form, ``env`` an id or ``module:callable``, ``labeler`` ``module:NAME``, ``model`` a path;
  imports, builds and checks (vocabulary, first evaluation on a reset env).
* ``find_domain(name)``, ``plugin_names()``, ``discover(refresh=False)``: lookup and listing.
* ``as_labeler(obj, domain)``, ``resolve_env(text)``, ``import_object(text, param)``.
* ``PluginDomain``, ``LabelTable``, ``StateObservation``, ``FixedSeed``, ``minigrid_state(env)``.
* Errors, each one line (all ``AsgError``): ``PluginError`` and its ``PluginImportError``,
  ``UnknownEnvError``, ``LabelerTypeError``, ``EntryPointError``, ``DomainRegistrationError``;
  ``LabelerEvaluationError`` and ``UnknownAtomError`` from ``asg.envs.labeling``.

## Entry points

An installed package declares domains in the group ``asg.domains``; each entry point is named
after its domain and names a ``PluginDomain`` (or any ``DomainSpec``-like object) or a
zero-argument callable returning one::

    [project.entry-points."asg.domains"]
    doorkey = "asg_doorkey:domain"

Entry points are read (``importlib.metadata``) the first time domains are listed or looked up,
and one is loaded only when its domain is looked up, so a broken plug-in breaks only itself, with
one ``EntryPointError`` line naming the entry point and its package. A domain registered from
Python wins over an entry point of the same name; neither may take the name of a built-in domain.
"""
from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import TimeLimit

from asg import pddl_models
from asg.envs.labeling import Labeler, LabelerEvaluationError, LabelTable, UnknownAtomError
from asg.planning import load_task
from asg.planning.errors import AsgError
from asg.planning.task import Atom

if TYPE_CHECKING:
    from asg.planning.task import Task

ENTRY_POINT_GROUP = "asg.domains"
OBSERVATIONS = ("state", "view", "env")
# Codes of each cell of Minigrid's view: object (0..10), colour (0..5) and state (0..2) indices.
MINIGRID_CATEGORIES = (11, 6, 3)
# Ids whose package registers them on import (``import minigrid``), tried before giving up.
ID_PACKAGES = (("MiniGrid-", "minigrid"), ("BabyAI-", "minigrid"))

__all__ = ["DomainRegistrationError", "ENTRY_POINT_GROUP", "EntryPointError", "FixedSeed", "LabelTable",
           "LabelerEvaluationError", "LabelerTypeError", "PluginDomain", "PluginError", "PluginImportError",
           "StateObservation", "UnknownAtomError", "UnknownEnvError", "add_domain", "as_labeler", "discover",
           "domain_from_parts", "find_domain", "import_object", "is_minigrid_env", "make_domain", "minigrid_state",
           "plugin_names",
           "register_domain", "resolve_env", "unregister_domain"]


# ---------------------------------------------------------------------------------------- errors
class PluginError(AsgError):
    """A plug-in domain that cannot be built; ``param`` is the argument at fault (``env``, ...)."""

    def __init__(self, param: str, value: Any, reason: str) -> None:
        self.param, self.value, self.reason = param, str(value), reason
        super().__init__(f"{param} {value}: {reason}")


class PluginImportError(PluginError):
    """A ``module:NAME`` path whose module or attribute cannot be imported."""


class UnknownEnvError(PluginError):
    """An env that is neither a registered Gymnasium id nor a callable returning an env."""


class LabelerTypeError(PluginError):
    """A labeler object of the wrong type, or a table that is not atom text -> predicate."""


class EntryPointError(AsgError):
    """An ``asg.domains`` entry point that does not load or does not give a domain."""


class DomainRegistrationError(AsgError):
    """A domain name that is taken, or an object that is not a domain."""


# ---------------------------------------------------------------------------------------- wrappers
class FixedSeed(gym.Wrapper):
    """Reset with the same seed every episode: one layout of a procedurally generated world."""

    def __init__(self, env: gym.Env, seed: int) -> None:
        super().__init__(env)
        self.fixed_seed = seed

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Reset with ``fixed_seed`` whatever ``seed`` is asked for."""
        return self.env.reset(seed=self.fixed_seed, options=options)


def is_minigrid_env(env: str | Callable[..., gym.Env], folder: str | Path | None = None) -> bool:
    """Whether the env an id or ``module:callable`` names (``resolve_env``) is a Minigrid env (built once)."""
    factory = resolve_env(env, folder) if isinstance(env, str) else env
    try:
        made = gym.make(factory) if isinstance(factory, str) else factory()
    except Exception:  # building the domain reports it, naming the env
        return False
    try:
        return _is_minigrid(made.unwrapped)
    finally:
        made.close()


DEFAULT_EPISODE_STEPS = 2000
"""The episode cap of an env that has none of its own (asg's own worlds' length)."""


def own_episode_limit(env: gym.Env) -> int | None:
    """The step at which ``env``'s episodes end of themselves: the tightest ``TimeLimit`` among its
    wrappers, or a Minigrid env's ``max_steps``; None when it sets none."""
    limits: list[int] = []
    layer: Any = env
    while True:
        if isinstance(layer, TimeLimit):
            limits.append(int(layer._max_episode_steps))
        if not isinstance(layer, gym.Wrapper):
            break
        layer = layer.env
    if _is_minigrid(layer):
        limits.append(int(layer.max_steps))
    return min(limits) if limits else None


def _is_minigrid(base: Any) -> bool:
    module = sys.modules.get("minigrid.minigrid_env")  # a Minigrid env means minigrid is imported
    return module is not None and isinstance(base, module.MiniGridEnv)


def minigrid_state(base: Any) -> np.ndarray:
    """The full state of an unwrapped Minigrid env: grid encoding, x, y, dir, carried object."""
    grid = base.grid.encode().reshape(-1)  # (width * height * 3,)
    carried = base.carrying.encode() if base.carrying is not None else (0, 0, 0)
    x, y = base.agent_pos
    tail = np.array([x, y, base.agent_dir, *carried], dtype=np.uint8)
    return np.concatenate([grid.astype(np.uint8), tail])  # (width * height * 3 + 6,)


class StateObservation(gym.ObservationWrapper):
    """Replace a Minigrid env's egocentric view by its full state (``minigrid_state``), which is Markov."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        base = env.unwrapped
        size = base.width * base.height * 3 + 6
        self.observation_space = spaces.Box(0, 255, (size,), np.uint8)

    def observation(self, observation: Any) -> np.ndarray:
        """The state vector of the env after the step (``observation`` is ignored)."""
        return minigrid_state(self.env.unwrapped)


# ---------------------------------------------------------------------------------------- imports
def import_object(text: str, param: str, folder: str | Path | None = None) -> Any:
    """The object a ``module:NAME`` path names (``folder``, default the current directory, is searched too)."""
    module_name, sep, attr = str(text).partition(":")
    if not sep or not module_name or not attr:
        raise PluginImportError(param, text, "expected module:NAME")
    obj = _import_module(module_name, param, text, folder)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginImportError(param, text, f"module {module_name} has no attribute {attr}") from None
    return obj


def _import_module(name: str, param: str, text: str, folder: str | Path | None = None) -> Any:
    """Import ``name`` as ``python -m`` would from ``folder`` (default: the current directory). A
    given folder is searched first, even where ``sys.path`` already holds ``""``, and a module of the
    same name imported earlier from elsewhere (another world's ``labels.py``) is not reused for it."""
    cwd = str(Path(folder).resolve()) if folder is not None else os.getcwd()
    added = folder is not None or not any(entry in ("", cwd) for entry in sys.path)
    if added:  # as ``python -m`` does; console scripts do not put the current directory first
        sys.path.insert(0, cwd)
    if folder is not None:
        _forget_elsewhere(name.partition(".")[0], Path(cwd))
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise PluginImportError(param, text, f"no module {name}") from None
        raise PluginImportError(param, text, f"importing {name} failed: {exc}") from None
    except Exception as exc:
        raise PluginImportError(param, text, f"importing {name} raised {type(exc).__name__}: {exc}") from None
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def _forget_elsewhere(top: str, folder: Path) -> None:
    """Drop the cached module ``top`` (and its submodules) when ``folder`` holds a module of that name
    and the cached one came from another place, so that the import below finds ``folder``'s."""
    if not ((folder / f"{top}.py").is_file() or (folder / top / "__init__.py").is_file()):
        return
    cached = sys.modules.get(top)
    where = getattr(cached, "__file__", None)
    if cached is None or (where is not None and Path(where).resolve().is_relative_to(folder)):
        return
    for key in [key for key in sys.modules if key == top or key.startswith(top + ".")]:
        del sys.modules[key]


def resolve_env(env: str | Callable[..., gym.Env], folder: str | Path | None = None) -> str | Callable[..., gym.Env]:
    """A registered Gymnasium id or a callable: from an id, ``pkg:Id``, ``module:callable`` or a callable."""
    if callable(env):
        return env
    if not isinstance(env, str) or not env.strip():
        raise UnknownEnvError("env", env, "expected a Gymnasium id, 'module:callable' or a callable")
    if env in gym.registry:
        return env
    module_name, sep, attr = env.partition(":")
    if sep:
        module = _import_module(module_name, "env", env, folder)
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            if not callable(obj):
                raise UnknownEnvError("env", env, f"{attr} is a {type(obj).__name__}, not a callable "
                                                  "returning a gymnasium.Env")
            return obj
        if attr in gym.registry:
            return attr
        raise UnknownEnvError("env", env, f"module {module_name} has no attribute {attr} and registers "
                                          f"no Gymnasium id {attr!r}")
    for prefix, package in ID_PACKAGES:
        if env.startswith(prefix):
            try:
                importlib.import_module(package)
            except ImportError:
                raise UnknownEnvError("env", env, f"the id needs the {package} package, which is not "
                                                  "installed") from None
            if env in gym.registry:
                return env
    close = difflib.get_close_matches(env, list(gym.registry), n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    raise UnknownEnvError("env", env, f"no Gymnasium id {env!r} is registered{hint}; give a registered id, "
                                      "'package:Id' or 'module:callable'")


def _accepts_max_steps(factory: Any) -> bool:
    """Whether ``factory`` takes ``max_steps=``: in its own signature, or, for a class whose
    ``__init__`` passes ``**kwargs`` on, in a base class's (a BabyAI level or ObstructedMaze takes
    ``**kwargs`` and hands ``max_steps`` to Minigrid's base class)."""
    targets = [klass.__init__ for klass in factory.__mro__] if inspect.isclass(factory) else [factory]
    for target in targets:
        try:
            params = inspect.signature(target).parameters
        except (TypeError, ValueError):  # builtins without a signature
            return False
        param = params.get("max_steps")
        if param is not None and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            return True
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return False
    return False


def _env_label(env: str | Callable[..., Any]) -> str:
    if isinstance(env, str):
        return env
    return f"{getattr(env, '__module__', '?')}:{getattr(env, '__qualname__', type(env).__name__)}"


# ---------------------------------------------------------------------------------------- labelers
def as_labeler(obj: Any, domain: str, where: str | None = None) -> Labeler:
    """A ``Labeler`` from a dict ``{"(atom)": predicate}``, a ``LabelTable`` or a ``Labeler``."""
    where = where or domain
    if isinstance(obj, Labeler):
        return obj
    table, monotone, reads = obj, (), "env"
    if isinstance(obj, LabelTable):
        table, monotone, reads, domain = obj.rows, obj.monotone, obj.reads, obj.domain
    elif not isinstance(obj, Mapping):
        raise LabelerTypeError("labeler", where, f"a {type(obj).__name__}; expected a dict "
                                                 "{'(atom)': predicate}, a LabelTable or an asg Labeler")
    if not table:
        raise LabelerTypeError("labeler", where, "the table declares no atom")
    for text, pred in table.items():
        if not isinstance(text, str):
            raise LabelerTypeError("labeler", where, f"key {text!r} is not ground atom text like '(has-key)'")
        if not callable(pred):
            raise LabelerTypeError("labeler", where, f"{text} maps to a {type(pred).__name__}, not a predicate")
        try:
            Atom.parse(text)
        except ValueError as exc:
            raise LabelerTypeError("labeler", where, str(exc)) from None
    try:
        return Labeler.from_table(domain, table, monotone, reads=reads)
    except ValueError as exc:
        raise LabelerTypeError("labeler", where, str(exc)) from None


# ---------------------------------------------------------------------------------------- the spec
def _resolve_model(model: str | Path) -> Path:
    try:
        return pddl_models.resolve(model)
    except AsgError:
        raise PluginError("model", model, "no such file or bundled model") from None


@dataclass(frozen=True, eq=False)
class PluginDomain:
    """A domain from outside asg; ``DomainSpec``-like (``make_env``, ``load_task``, ``model_path``)."""

    name: str
    env: str | Callable[..., gym.Env]
    """A registered Gymnasium id, or a callable returning an env (``max_steps=`` optional)."""
    labeler: Labeler
    model: str
    """PDDL file path or bundled model name."""
    max_episode_steps: int | None = None
    """Episode cap when ``make_env`` is called without ``max_steps``; None: the env's own
    (``episode_limit``), so a world keeps the time limit its authors gave it."""
    skill_max_steps: int = 700
    """Step budget of one skill (the config's ``learner.skill_max_steps``)."""
    description: str = ""
    fixed_seed: int | None = None
    """Reset every episode with this seed (one layout); None: the seeds the learner asks for."""
    observation: str = "state"
    """``state``: Markov observations for tabular learners; ``view``: Minigrid's egocentric view
    (deep skills); ``env``: the env's own (module docstring)."""
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    source: str = "python"
    """Where the domain came from (``python``, ``entry point X (package Y)``, ``parts``)."""
    solver: None = None  # no scripted solver: asg mvtr's solver route needs one
    complete_model: str = ""

    def __post_init__(self) -> None:
        where = f"domain {self.name!r}"
        for param in ("max_episode_steps", "skill_max_steps"):
            value = getattr(self, param)
            if param == "max_episode_steps" and value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise PluginError(param, value, f"{where}: expected an integer >= 1")
        if self.fixed_seed is not None and (not isinstance(self.fixed_seed, int) or self.fixed_seed < 0):
            raise PluginError("fixed_seed", self.fixed_seed, f"{where}: expected None or an integer >= 0")
        if self.observation not in OBSERVATIONS:
            raise PluginError("observation", self.observation, f"{where}: choose from {', '.join(OBSERVATIONS)}")

    @property
    def env_id(self) -> str:
        """The Gymnasium id, or ``module:callable`` of the factory."""
        return _env_label(self.env)

    def model_path(self) -> Path:
        """Path of the domain's PDDL model."""
        return _resolve_model(self.model)

    def complete_model_path(self) -> Path:
        """A plug-in has no complete model (``PluginError``)."""
        raise PluginError("domain", self.name, "a plug-in domain has no complete model")

    def make_env(self, max_steps: int | None = None, **kwargs: Any) -> gym.Env:
        """A fresh env, adapted as configured, whose episodes end at ``max_steps`` if given, else at
        ``max_episode_steps``, else where the env's own end (``DEFAULT_EPISODE_STEPS`` if never)."""
        steps = self.max_episode_steps if max_steps is None else int(max_steps)
        env = self._build(steps, {**self.env_kwargs, **kwargs})
        if steps is None and own_episode_limit(env) is None:
            env = TimeLimit(env, DEFAULT_EPISODE_STEPS)
        if self.fixed_seed is not None:
            env = FixedSeed(env, self.fixed_seed)
        if self.observation == "state" and _is_minigrid(env.unwrapped):
            env = StateObservation(env)
        elif self.observation == "view":
            if not _is_minigrid(env.unwrapped):
                raise PluginError("observation", "view", f"{self.env_id} is not a Minigrid env; "
                                                         "the egocentric view is Minigrid's")
            from minigrid.wrappers import ImgObsWrapper

            env = ImgObsWrapper(env)
        return env

    def _build(self, steps: int | None, kwargs: dict[str, Any]) -> gym.Env:
        """The env from its factory, capped at ``steps`` (None: as the factory makes it)."""
        env: Any
        if isinstance(self.env, str):
            spec = gym.spec(self.env)
            creator = spec.entry_point if callable(spec.entry_point) else load_env_creator(spec.entry_point)
            if steps is None:
                return gym.make(self.env, **kwargs)
            if _accepts_max_steps(creator):
                kwargs.setdefault("max_steps", steps)
            return gym.make(self.env, max_episode_steps=steps, **kwargs)
        capped = steps is not None and _accepts_max_steps(self.env)
        try:
            env = self.env(max_steps=steps, **kwargs) if capped else self.env(**kwargs)
        except Exception as exc:
            raise UnknownEnvError("env", self.env_id, f"the factory raised {type(exc).__name__}: {exc}") from None
        if not isinstance(env, gym.Env):
            raise UnknownEnvError("env", self.env_id, f"the factory returned a {type(env).__name__}, "
                                                      "not a gymnasium.Env")
        if steps is not None and not capped:
            env = TimeLimit(env, steps)
        return env

    def episode_limit(self) -> int:
        """Where an episode ends: ``max_episode_steps``, else the env's own limit (its Gymnasium
        ``TimeLimit`` or Minigrid's ``max_steps``), else ``DEFAULT_EPISODE_STEPS``."""
        if self.max_episode_steps is not None:
            return self.max_episode_steps
        return DEFAULT_EPISODE_STEPS if self._own_limit is None else self._own_limit

    @cached_property
    def _own_limit(self) -> int | None:
        """``own_episode_limit`` of the env as its factory makes it (built once per domain object)."""
        env = self._build(None, dict(self.env_kwargs))
        try:
            limit = own_episode_limit(env)
            if limit == 0:  # a BabyAI level sets max_steps at reset, from its layout; 0 until then
                env.reset(seed=0)
                limit = own_episode_limit(env)
            return limit
        finally:
            env.close()

    def load_task(self, path: str | Path | None = None) -> Task:
        """Ground the model (or ``path``); check the labeler knows its atoms and evaluates on a reset env."""
        source = Path(path) if path is not None else self.model_path()
        task = load_task(source)
        self.labeler.check_vocabulary(task.facts, source=str(source))
        self.check_env()
        return task

    def check_env(self) -> None:
        """Build and reset the env once: a discrete action space, and every predicate evaluates."""
        env = self.make_env(max_steps=10)
        try:
            if not isinstance(env.action_space, spaces.Discrete):
                raise UnknownEnvError("env", self.env_id, f"the action space is {env.action_space}; "
                                                          "the ASGRL learners need a Discrete one")
            env.reset(seed=0 if self.fixed_seed is None else self.fixed_seed)
            if self.labeler.reads == "state" and not hasattr(env.unwrapped, "hashable_state"):
                raise LabelerTypeError("labeler", self.labeler.domain,
                                       f"its predicates read hashable_state(), which the {self.env_id} env "
                                       "lacks; build it from a dict or a LabelTable (predicates get the env)")
            try:
                self.labeler(env)
            except LabelerEvaluationError as exc:
                raise LabelerEvaluationError(f"{exc} (first evaluation, on a reset {self.env_id} env)") from None
        finally:
            env.close()


def make_domain(name: str, *, env: str | Callable[..., gym.Env], labeler: Any, model: str | Path,
                max_episode_steps: int | None = None, skill_max_steps: int = 700, description: str = "",
                fixed_seed: int | None = None, observation: str = "state",
                env_kwargs: Mapping[str, Any] | None = None, source: str = "python") -> PluginDomain:
    """Build a ``PluginDomain`` (not registered); raises ``PluginError``s naming the argument."""
    if not isinstance(name, str) or not name.strip() or any(c.isspace() for c in name):
        raise PluginError("name", repr(name), "expected a domain name without spaces")
    _resolve_model(model)
    return PluginDomain(name, resolve_env(env), as_labeler(labeler, name), str(model), max_episode_steps,
                        skill_max_steps, description, fixed_seed, observation, dict(env_kwargs or {}), source)


# ---------------------------------------------------------------------------------------- registry
_REGISTERED: dict[str, Any] = {}
_FROM_ENTRY_POINTS: set[str] = set()
_RESERVED: set[str] = set()
_ENTRY_POINTS: dict[str, list[metadata.EntryPoint]] | None = None
_SPEC_METHODS = ("make_env", "load_task", "model_path")


def reserve(names: Iterable[str]) -> None:
    """Names no plug-in may take (``asg.envs.domains`` reserves its built-in domains)."""
    _RESERVED.update(names)


def _not_a_domain(obj: Any) -> str | None:
    """Why ``obj`` is not ``DomainSpec``-like, or None when it is."""
    missing = [m for m in _SPEC_METHODS if not callable(getattr(obj, m, None))]
    if not isinstance(getattr(obj, "name", None), str) or not callable(getattr(obj, "labeler", None)) or missing:
        return (f"a {type(obj).__name__} is not a domain (expected a PluginDomain from "
                "asg.envs.plugins.make_domain, or a zero-argument callable returning one)")
    return None


def add_domain(spec: Any, *, replace: bool = False) -> Any:
    """Register a ``PluginDomain`` (or ``DomainSpec``-like object) under ``spec.name``; returns it."""
    problem = _not_a_domain(spec)
    if problem:
        raise DomainRegistrationError(f"add_domain: {problem}")
    name = spec.name
    if name in _RESERVED:
        raise DomainRegistrationError(f"domain {name!r} is one of asg's own domains; choose another name")
    if name in _REGISTERED and not replace and _REGISTERED[name] is not spec:
        raise DomainRegistrationError(f"domain {name!r} is already registered "
                                      f"({getattr(_REGISTERED[name], 'source', 'python')}); pass replace=True")
    _REGISTERED[name] = spec
    _FROM_ENTRY_POINTS.discard(name)
    return spec


def register_domain(name: str, *, env: str | Callable[..., gym.Env], labeler: Any, model: str | Path,
                    max_episode_steps: int | None = None, skill_max_steps: int = 700, description: str = "",
                    fixed_seed: int | None = None, observation: str = "state",
                    env_kwargs: Mapping[str, Any] | None = None, replace: bool = False) -> PluginDomain:
    """Build and register a domain; ``asg train --domain NAME`` and ``bind_domain(NAME)`` then find it."""
    spec = make_domain(name, env=env, labeler=labeler, model=model, max_episode_steps=max_episode_steps,
                       skill_max_steps=skill_max_steps, description=description, fixed_seed=fixed_seed,
                       observation=observation, env_kwargs=env_kwargs)
    return add_domain(spec, replace=replace)


def unregister_domain(name: str) -> bool:
    """Forget a registered plug-in domain; False when none had that name."""
    _FROM_ENTRY_POINTS.discard(name)
    return _REGISTERED.pop(name, None) is not None


def discover(refresh: bool = False) -> dict[str, list[metadata.EntryPoint]]:
    """The ``asg.domains`` entry points by name (read once; ``refresh`` reads again, dropping loaded ones)."""
    global _ENTRY_POINTS
    if refresh:
        for name in _FROM_ENTRY_POINTS:
            _REGISTERED.pop(name, None)
        _FROM_ENTRY_POINTS.clear()
        _ENTRY_POINTS = None
    if _ENTRY_POINTS is None:
        found: dict[str, list[metadata.EntryPoint]] = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, []).append(ep)
        _ENTRY_POINTS = found
    return _ENTRY_POINTS


def plugin_names() -> list[str]:
    """Registered and entry-point domain names (built-in names excluded), sorted; loads nothing."""
    return sorted((set(_REGISTERED) | set(discover())) - _RESERVED)


def _package(ep: metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"package {dist.name}" if dist is not None else "an unknown package"


def _load_entry_point(name: str, eps: list[metadata.EntryPoint]) -> Any:
    if len(eps) > 1:
        where = " and ".join(f"{ep.value} ({_package(ep)})" for ep in eps)
        raise EntryPointError(f"domain {name!r} is declared by {len(eps)} {ENTRY_POINT_GROUP} entry points: {where}")
    ep = eps[0]
    where = f"entry point {ep.name} = {ep.value} ({_package(ep)}, group {ENTRY_POINT_GROUP})"
    try:
        obj = ep.load()
        if callable(obj) and not callable(getattr(obj, "make_env", None)):
            obj = obj()
    except AsgError as exc:
        raise EntryPointError(f"{where}: {exc}") from None
    except Exception as exc:
        raise EntryPointError(f"{where}: {type(exc).__name__}: {exc}") from None
    problem = _not_a_domain(obj)
    if problem:
        raise EntryPointError(f"{where}: {problem}")
    if obj.name != name:
        raise EntryPointError(f"{where}: gives domain {obj.name!r}; name the entry point after its domain")
    return obj


def find_domain(name: str) -> Any | None:
    """The plug-in domain called ``name`` (loading its entry point on first use), or None."""
    if name in _RESERVED:
        return None
    spec = _REGISTERED.get(name)
    if spec is not None:
        return spec
    eps = discover().get(name)
    if not eps:
        return None
    spec = _load_entry_point(name, eps)
    if isinstance(spec, PluginDomain) and spec.source == "python":
        spec = dataclasses.replace(spec, source=f"entry point {name} ({_package(eps[0])})")
    _REGISTERED[name] = spec
    _FROM_ENTRY_POINTS.add(name)
    return spec


# ---------------------------------------------------------------------------------------- parts
def _default_name(env: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "-" for c in env).strip("-") or "plugin"


def domain_from_parts(env: str, labeler: str, model: str | Path, *, name: str | None = None,
                      max_episode_steps: int | None = None, skill_max_steps: int = 700,
                      fixed_seed: int | None = None, observation: str = "state",
                      check: bool = True, folder: str | Path | None = None) -> PluginDomain:
    """The command line form: ``env`` an id or ``module:callable``, ``labeler`` ``module:NAME``, ``model`` a path.

    Imports and builds the domain (not registered; ``add_domain`` does that) and, with ``check``,
    grounds the model, checks the labeler's vocabulary against its atoms (one ``UnknownAtomError``
    naming every missing atom) and evaluates every predicate once on a reset env. ``folder``: where
    ``module:NAME`` paths are imported from besides ``sys.path`` (default: the current directory).
    """
    factory = resolve_env(env, folder)
    domain = name or _default_name(str(env))
    table = as_labeler(import_object(labeler, "labeler", folder), domain, where=labeler)
    spec = make_domain(domain, env=factory, labeler=table, model=model, max_episode_steps=max_episode_steps,
                       skill_max_steps=skill_max_steps, fixed_seed=fixed_seed, observation=observation,
                       source="parts")
    if check:
        spec.load_task()
    return spec
