"""The one typed config reader: JSON-like dicts to frozen config dataclasses and back.

``read_config(cls, data, where)`` builds a (nested) frozen dataclass from a dict, driven by the
dataclass's type hints; ``to_dict(cfg)`` is its inverse (JSON-safe; ``read_config`` of it gives
back an equal config). ``deep_merge`` and ``override`` put a partial dict on top of a resolved
config, ``override_file`` the one in a JSON file (a ``--config`` file). Every failure is a
``ConfigError`` whose message starts with the key path (or the file), e.g.
``config.learner.q.gamma: expected a number in (0, 1], got 1.5``.

Types are checked here, ranges in each dataclass's ``__post_init__`` through a ``Checker``,
whose ``FieldError`` names the field; the reader prefixes the path it was reading. The rules:

- ``bool`` takes only ``true`` / ``false``; ``int`` takes integers but not booleans; ``float``
  takes integers and floats, never NaN or ±Infinity (JSON's ``1e400`` reads as Infinity).
- ``str``, ``Literal[...]`` (the value itself, of the same type), ``X | None`` (``null``),
  enums (by value), nested dataclasses (an object), a union of dataclasses that share a
  one-value ``Literal`` field (the tag, e.g. ``kind``), ``tuple[X, ...]`` / ``tuple[X, Y]`` /
  ``list[X]`` (a list), ``dict[str, X]`` (an object).
- A tuple of ``(str, X)`` pairs also takes an object, read in its order (``{"(has-key)": 4}``).
- Unknown keys are refused (with the closest known key); missing keys take the defaults.
"""
from __future__ import annotations

import dataclasses
import difflib
import enum
import functools
import json
import math
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from asg.learning.errors import ConfigError

T = TypeVar("T")
_UNIONS = (Union, types.UnionType)


class FieldError(ConfigError):
    """A bad value of one field; ``field`` is its path inside the dataclass that raised it."""

    def __init__(self, field: str, detail: str, label: str = "") -> None:
        self.field, self.detail = field, detail
        super().__init__(f"{label}.{field}: {detail}" if label else f"{field}: {detail}")


def show(value: Any) -> str:
    """A value as a config file spells it (``true``, ``null``, ``"s"``, ``NaN``), containers by kind."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (bool, int, float, str)):
        text = json.dumps(value)
        return text if len(text) <= 60 else text[:57] + "..."
    return f"a {type(value).__name__}"


def did_you_mean(name: Any, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``known``, else the list of known names."""
    known = list(known)
    close = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (known: {', '.join(known)})" if known else ""


# -- range checks for __post_init__ --------------------------------------------------------------
def _num(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def _bounds(gt: float | None, ge: float | None, lt: float | None, le: float | None) -> str:
    low = f"({_num(gt)}" if gt is not None else f"[{_num(ge)}" if ge is not None else ""
    high = f"{_num(lt)})" if lt is not None else f"{_num(le)}]" if le is not None else ""
    if low and high:
        return f" in {low}, {high}"
    if low:
        return f" > {_num(gt)}" if gt is not None else f" >= {_num(ge)}"
    if high:
        return f" < {_num(lt)}" if lt is not None else f" <= {_num(le)}"
    return ""


def _within(x: float, gt: float | None, ge: float | None, lt: float | None, le: float | None) -> bool:
    return ((gt is None or x > gt) and (ge is None or x >= ge)
            and (lt is None or x < lt) and (le is None or x <= le))


class Checker:
    """Checks of one config dataclass's fields, for its ``__post_init__``; failures raise
    ``FieldError`` naming the field (``label`` prefixes it when the dataclass is built directly)."""

    def __init__(self, obj: Any, label: str = "") -> None:
        self.obj, self.label = obj, label

    def fail(self, field: str, detail: str) -> None:
        """Raise the ``FieldError`` of ``field``."""
        raise FieldError(field, detail, self.label)

    def require(self, cond: bool, field: str, detail: str) -> None:
        """``detail`` about ``field`` unless ``cond`` (cross-field checks)."""
        if not cond:
            self.fail(field, detail)

    def integer(self, field: str, *, ge: int | None = None, le: int | None = None,
                optional: bool = False) -> None:
        """An int (not a bool) in ``[ge, le]``; ``None`` too when ``optional``."""
        value = getattr(self.obj, field)
        if value is None and optional:
            return
        want = f"an int{_bounds(None, ge, None, le)}" + (" or null" if optional else "")
        if isinstance(value, bool) or not isinstance(value, int) or not _within(value, None, ge, None, le):
            self.fail(field, f"expected {want}, got {show(value)}")

    def number(self, field: str, *, gt: float | None = None, ge: float | None = None, lt: float | None = None,
               le: float | None = None, optional: bool = False) -> None:
        """A finite number (int or float, not a bool) within the bounds; ``None`` too when ``optional``."""
        value = getattr(self.obj, field)
        if value is None and optional:
            return
        want = f"a number{_bounds(gt, ge, lt, le)}" + (" or null" if optional else "")
        if (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
                or not _within(value, gt, ge, lt, le)):
            self.fail(field, f"expected {want}, got {show(value)}")

    def flag(self, field: str) -> None:
        """A bool."""
        value = getattr(self.obj, field)
        if not isinstance(value, bool):
            self.fail(field, f"expected true or false, got {show(value)}")

    def choice(self, field: str, options: Iterable[Any]) -> None:
        """One of ``options``."""
        value, options = getattr(self.obj, field), tuple(options)
        if not any(type(value) is type(o) and value == o for o in options):
            hint = did_you_mean(value, [str(o) for o in options]) if isinstance(value, str) else ""
            self.fail(field, f"expected one of {', '.join(show(o) for o in options)}, got {show(value)}{hint}")

    def literal(self, field: str) -> None:
        """One of the options of the field's ``Literal[...]`` type hint."""
        self.choice(field, get_args(_hints(type(self.obj))[field]))

    def text(self, field: str, *, optional: bool = False) -> None:
        """A non-empty string; ``None`` too when ``optional``."""
        value = getattr(self.obj, field)
        if value is None and optional:
            return
        if not isinstance(value, str) or not value:
            self.fail(field, f"expected a non-empty string{' or null' if optional else ''}, got {show(value)}")

    def names(self, field: str) -> None:
        """A tuple of distinct non-empty strings."""
        value = getattr(self.obj, field)
        if not isinstance(value, tuple) or not all(isinstance(v, str) and v for v in value):
            self.fail(field, f"expected a list of non-empty strings, got {show(value)}")
        if len(set(value)) != len(value):
            twice = sorted({v for v in value if value.count(v) > 1})
            self.fail(field, f"expected distinct names, got {twice[0]!r} more than once")


# -- reading ------------------------------------------------------------------------------------
@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def read_config(cls: type[T], data: Any, where: str = "config") -> T:
    """The dataclass ``cls`` built from the JSON-like ``data``; a ``ConfigError`` names the key path."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"read_config needs a dataclass type, got {cls!r}")
    return _read_dataclass(cls, data, where)


def _read_dataclass(cls: type, data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected an object, got {show(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for key in data:
        if key not in fields:
            raise ConfigError(f"{where}: unknown field {key!r}{did_you_mean(key, fields)}")
    hints, kwargs = _hints(cls), {}
    for name, f in fields.items():
        if name in data:
            kwargs[name] = _read_value(hints[name], data[name], f"{where}.{name}")
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise ConfigError(f"{where}: missing required field {name!r}")
    try:
        return cls(**kwargs)
    except FieldError as err:
        raise ConfigError(f"{where}.{err.field}: {err.detail}") from None
    except (ConfigError, TypeError, ValueError) as err:
        raise ConfigError(f"{where}: {err}") from None


def _describe(tp: Any) -> str:
    origin = get_origin(tp)
    if tp is type(None):
        return "null"
    if origin is Literal:
        return "one of " + ", ".join(show(o) for o in get_args(tp))
    if origin in _UNIONS:
        return " or ".join(_describe(a) for a in get_args(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp) or origin is dict or tp is dict:
        return "an object"
    if origin in (tuple, list) or tp in (tuple, list):
        return "a list"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "one of " + ", ".join(show(m.value) for m in tp)
    return {bool: "true or false", int: "an int", float: "a number", str: "a string"}.get(tp, repr(tp))


def _read_value(tp: Any, value: Any, where: str) -> Any:
    origin = get_origin(tp)
    if tp is Any:
        return value
    if tp is type(None):
        if value is not None:
            raise ConfigError(f"{where}: expected null, got {show(value)}")
        return None
    if origin is Literal:
        for option in get_args(tp):
            if type(value) is type(option) and value == option:
                return option
        hint = did_you_mean(value, [str(o) for o in get_args(tp)]) if isinstance(value, str) else ""
        raise ConfigError(f"{where}: expected {_describe(tp)}, got {show(value)}{hint}")
    if origin in _UNIONS:
        return _read_union(tp, value, where)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _read_dataclass(tp, value, where)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if type(value) is type(member.value) and value == member.value:
                return member
        raise ConfigError(f"{where}: expected {_describe(tp)}, got {show(value)}")
    if tp in (bool, int, float, str):
        return _read_scalar(tp, value, where)
    if origin is tuple or origin is list:
        return _read_sequence(tp, value, where)
    if origin is dict:
        key_type, value_type = get_args(tp)
        if key_type is not str:
            raise TypeError(f"read_config: only str keys are supported, not {tp!r}")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected an object, got {show(value)}")
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ConfigError(f"{where}: expected string keys, got {show(key)}")
            out[key] = _read_value(value_type, item, f"{where}[{json.dumps(key)}]")
        return out
    raise TypeError(f"read_config: unsupported field type {tp!r} at {where}")


def _read_scalar(tp: type, value: Any, where: str) -> Any:
    ok = isinstance(value, tp) and (tp is bool or not isinstance(value, bool))
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise ConfigError(f"{where}: expected {_describe(tp)}, got {show(value)}")
    if tp is float:
        try:
            value = float(value)
        except OverflowError:
            raise ConfigError(f"{where}: expected a finite number, got an int too large for a float") from None
        if not math.isfinite(value):
            raise ConfigError(f"{where}: expected a finite number, got {show(value)}")
    return value


def _is_pairs(args: tuple[Any, ...]) -> bool:
    """``tuple[tuple[str, X], ...]``: a tuple of named pairs, which an object may spell."""
    return (len(args) == 2 and args[1] is Ellipsis and get_origin(args[0]) is tuple
            and len(get_args(args[0])) == 2 and get_args(args[0])[0] is str)


def _read_sequence(tp: Any, value: Any, where: str) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if origin is tuple and _is_pairs(args) and isinstance(value, dict):
        value = [[k, v] for k, v in value.items()]
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{where}: expected a list, got {show(value)}")
    if origin is list:
        return [_read_value(args[0], item, f"{where}[{i}]") for i, item in enumerate(value)]
    if len(args) == 2 and args[1] is Ellipsis:
        return tuple(_read_value(args[0], item, f"{where}[{i}]") for i, item in enumerate(value))
    if len(value) != len(args):
        raise ConfigError(f"{where}: expected a list of {len(args)} items, got {len(value)}")
    return tuple(_read_value(a, item, f"{where}[{i}]") for i, (a, item) in enumerate(zip(args, value, strict=True)))


def _tag(members: tuple[type, ...]) -> str | None:
    """The field that tells the dataclasses of a union apart: a one-value ``Literal`` in each."""
    common = set.intersection(*(set(_hints(m)) for m in members))
    for name in sorted(common):
        tps = [_hints(m)[name] for m in members]
        if all(get_origin(t) is Literal and len(get_args(t)) == 1 for t in tps):
            values = [get_args(t)[0] for t in tps]
            if len(set(values)) == len(values):
                return name
    return None


def _read_union(tp: Any, value: Any, where: str) -> Any:
    args = get_args(tp)
    if value is None and type(None) in args:
        return None
    members = tuple(a for a in args if a is not type(None))
    if len(members) == 1:
        return _read_value(members[0], value, where)
    if all(isinstance(m, type) and dataclasses.is_dataclass(m) for m in members):
        tag = _tag(members)
        if tag is None:
            raise TypeError(f"read_config: the dataclasses of {tp!r} share no tag field")
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected an object, got {show(value)}")
        options = {get_args(_hints(m)[tag])[0]: m for m in members}
        if tag not in value:
            raise ConfigError(f"{where}: missing field {tag!r} (one of {', '.join(show(o) for o in options)})")
        for option, member in options.items():
            if type(value[tag]) is type(option) and value[tag] == option:
                return _read_dataclass(member, value, where)
        raise ConfigError(f"{where}.{tag}: expected one of {', '.join(show(o) for o in options)}, "
                          f"got {show(value[tag])}")
    for member in members:
        try:
            return _read_value(member, value, where)
        except ConfigError:
            continue
    raise ConfigError(f"{where}: expected {_describe(tp)}, got {show(value)}")


# -- writing and merging ------------------------------------------------------------------------
def to_dict(cfg: Any) -> dict[str, Any]:
    """The JSON-safe dict of a config dataclass (tuples become lists); ``read_config`` inverts it."""
    if isinstance(cfg, type) or not dataclasses.is_dataclass(cfg):
        raise TypeError(f"to_dict needs a dataclass instance, got {cfg!r}")
    return _plain(cfg, "config")


def _plain(value: Any, where: str) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name), f"{where}.{f.name}")
                for f in dataclasses.fields(value) if f.init}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{where}: only string keys can be written, got {sorted(map(repr, value))}")
        return {k: _plain(v, f"{where}[{json.dumps(k)}]") for k, v in value.items()}
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: expected a finite number, got {show(value)}")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ConfigError(f"{where}: a {type(value).__name__} cannot be written to a config file")


def deep_merge(base: dict[str, Any], extra: Any, where: str = "config") -> dict[str, Any]:
    """``base`` (a config as a dict) with the fields of the partial dict ``extra`` on top, nested
    objects merged key by key; a key that ``base`` lacks is a ``ConfigError`` naming its path."""
    if not isinstance(extra, dict):
        raise ConfigError(f"{where}: expected an object, got {show(extra)}")
    out = dict(base)
    for key, value in extra.items():
        if key not in base:
            raise ConfigError(f"{where}: unknown field {key!r}{did_you_mean(key, base)}")
        out[key] = deep_merge(base[key], value, f"{where}.{key}") if isinstance(base[key], dict) else value
    return out


def override(cfg: T, extra: Any, where: str = "config") -> T:
    """``cfg`` with the partial dict ``extra`` (nested like ``to_dict(cfg)``) on top, re-checked."""
    return read_config(type(cfg), deep_merge(to_dict(cfg), extra, where), where)


def override_file(cfg: T, path: str | Path | None) -> T:
    """``cfg`` with the nested fields of the JSON file ``path`` on top (a whole saved ``config.json``,
    ``{"config": {...}, ...}``, works too), every value checked; errors name the file and key path.
    ``cfg`` itself when ``path`` is None."""
    if path is None:
        return cfg
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ConfigError(f"{path}: not a JSON config ({type(err).__name__})") from None
    if isinstance(data, dict) and isinstance(data.get("config"), dict):
        data = data["config"]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must hold a JSON object")
    try:
        return override(cfg, data, "config")
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
