"""The one checkpoint format of asg: a JSON tree plus arrays in an ``.npz``, SHA-256 checked.

Every saved stage uses it: the ASGRL trainer (``checkpoint.npz`` of a run folder), the goal
policy's trainer state and policy file, the behaviour model and its data, the meta-controller.

A checkpoint file is a plain zip (``np.load(path, allow_pickle=False)`` opens it) holding

    meta.json     {"format": "asg-checkpoint", "version": 1, "kind": ..., "meta": {...}}
    tree.json     the payload as a JSON tree; arrays are references {"$array": i}
    a<i>.npy      array i (numpy's own format; loaded with allow_pickle=False)

and ends in the zip comment ``asg-sha256:<64 hex digits>``: the SHA-256 of every byte of the file
before the digest. Loading checks the digest first, so a flipped byte anywhere, a truncated copy or
a foreign file (a pickle, another zip) is a :class:`CheckpointError` naming the file, never a
traceback and never a silent load; nothing is written while loading.

Why this and not torch files or safetensors: the ASGRL half is numpy-only and should not import
torch to save a Q-table; safetensors is not a dependency and holds flat tensors only, while
checkpoints are trees (lists of rows, deques, dicts with tuple keys, generator states). Nothing
in this format can run code: JSON is data, arrays are read with ``allow_pickle=False``, and tags
rebuild only the handful of types listed below.

Tree encoding (``encode`` / ``decode``): ``None``, bools, ints, strings and finite floats are
JSON (floats round-trip exactly); lists are lists and dicts with string keys are objects. Tagged
objects: ``{"$tuple": [...]}``, ``{"$dict": [[k, v], ...]}`` (non-string keys, or keys starting
with ``$``), ``{"$bytes": base64}``, ``{"$float": "nan"|"inf"|"-inf"}``, ``{"$deque": [...],
"maxlen": n}``, ``{"$set": [...]}``, ``{"$frozenset": [...]}``, ``{"$array": i}`` (numpy arrays),
``{"$scalar": dtype, "value": v}`` (numpy scalars, exact type), ``{"$tensor": i}`` (torch tensors, via numpy), and
``{"$rng": state}`` (a ``np.random.Generator``: its bit generator, one of ``BIT_GENERATORS``,
and state). Writes are atomic (temp file in the same folder, then ``os.replace``).
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import sys
import zipfile
from collections import deque
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from asg.learning.atomic import atomic_output
from asg.learning.errors import CheckpointError

FORMAT, VERSION = "asg-checkpoint", 1
META, TREE = "meta.json", "tree.json"
_SEAL = b"asg-sha256:"
_DIGEST_LEN = 64  # hex digits of a SHA-256
_COMMENT_LEN = len(_SEAL) + _DIGEST_LEN
_EOCD = b"PK\x05\x06"  # zip end-of-central-directory signature; the comment follows its 22 bytes
BIT_GENERATORS = {name: getattr(np.random, name) for name in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")}
_SCALAR_KINDS = "biuf"  # numpy scalars kept with their exact type: bool, int, uint, float


# -- the tree -------------------------------------------------------------------------------------
def _torch_tensor_type() -> type | None:
    torch = sys.modules.get("torch")  # no tensor can exist unless torch was imported
    return None if torch is None else torch.Tensor


def encode(obj: Any, arrays: list[np.ndarray]) -> Any:
    """``obj`` as a JSON-ready tree; arrays are appended to ``arrays`` and referenced by index.

    Raises ``TypeError`` for anything else (a programming error: state dicts hold data only).
    """
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int) and not isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, float) and not isinstance(obj, np.floating):
        return obj if math.isfinite(obj) else {"$float": repr(obj)}
    if isinstance(obj, np.generic) and obj.dtype.kind in _SCALAR_KINDS:
        return {"$scalar": obj.dtype.str, "value": encode(obj.item(), arrays)}
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            raise TypeError("object arrays cannot be checkpointed")
        arrays.append(obj)
        return {"$array": len(arrays) - 1}
    tensor = _torch_tensor_type()
    if tensor is not None and isinstance(obj, tensor):
        arrays.append(obj.detach().cpu().numpy().copy())
        return {"$tensor": len(arrays) - 1}
    if isinstance(obj, np.random.Generator):
        return {"$rng": encode(obj.bit_generator.state, arrays)}
    if isinstance(obj, (bytes, bytearray)):
        return {"$bytes": base64.b64encode(bytes(obj)).decode("ascii")}
    if isinstance(obj, tuple):
        return {"$tuple": [encode(x, arrays) for x in obj]}
    if isinstance(obj, list):
        return [encode(x, arrays) for x in obj]
    if isinstance(obj, deque):
        return {"$deque": [encode(x, arrays) for x in obj], "maxlen": obj.maxlen}
    if isinstance(obj, (set, frozenset)):
        tag = "$frozenset" if isinstance(obj, frozenset) else "$set"
        return {tag: [encode(x, arrays) for x in obj]}
    if isinstance(obj, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in obj):
            return {k: encode(v, arrays) for k, v in obj.items()}
        return {"$dict": [[encode(k, arrays), encode(v, arrays)] for k, v in obj.items()]}
    raise TypeError(f"cannot checkpoint a {type(obj).__name__}")


def decode(tree: Any, arrays: dict[int, np.ndarray]) -> Any:
    """The object ``encode`` was given; raises ``ValueError`` on a malformed tree."""
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    if isinstance(tree, list):
        return [decode(x, arrays) for x in tree]
    if not isinstance(tree, dict):
        raise ValueError(f"unexpected {type(tree).__name__} in the tree")
    tags = [k for k in tree if k.startswith("$")]
    if not tags:
        return {k: decode(v, arrays) for k, v in tree.items()}
    tag, value = tags[0], tree[tags[0]]
    if tag == "$array":
        return arrays[int(value)]
    if tag == "$scalar":
        dtype = np.dtype(value)
        if dtype.kind not in _SCALAR_KINDS:
            raise ValueError(f"bad scalar type {value!r}")
        return dtype.type(decode(tree["value"], arrays))
    if tag == "$tensor":
        import torch

        return torch.from_numpy(arrays[int(value)])
    if tag == "$tuple":
        return tuple(decode(x, arrays) for x in value)
    if tag == "$dict":
        return {_hashable(decode(k, arrays)): decode(v, arrays) for k, v in value}
    if tag == "$bytes":
        return base64.b64decode(value.encode("ascii"), validate=True)
    if tag == "$float":
        if value not in ("nan", "inf", "-inf"):
            raise ValueError(f"bad float {value!r}")
        return float(value)
    if tag == "$deque":
        maxlen = tree.get("maxlen")
        return deque((decode(x, arrays) for x in value), maxlen=None if maxlen is None else int(maxlen))
    if tag in ("$set", "$frozenset"):
        items = (_hashable(decode(x, arrays)) for x in value)
        return frozenset(items) if tag == "$frozenset" else set(items)
    if tag == "$rng":
        state = decode(value, arrays)
        cls = BIT_GENERATORS.get(state.get("bit_generator")) if isinstance(state, dict) else None
        if cls is None:
            raise ValueError("unknown bit generator")
        bit_generator = cls()
        bit_generator.state = state
        return np.random.Generator(bit_generator)
    raise ValueError(f"unknown tag {tag!r}")


def _hashable(key: Any) -> Any:
    hash(key)  # a TypeError (unhashable) is reported as a malformed checkpoint
    return key


# -- files ----------------------------------------------------------------------------------------
def save(path: str | Path, kind: str, tree: Any, meta: dict[str, Any] | None = None,
         compress: bool = False) -> str:
    """Write ``tree`` (see the module docstring) as checkpoint ``kind`` atomically; its SHA-256."""
    arrays: list[np.ndarray] = []
    body = json.dumps(encode(tree, arrays), separators=(",", ":"), allow_nan=False).encode()
    head = json.dumps(encode({"format": FORMAT, "version": VERSION, "kind": kind, "meta": meta or {}}, []),
                      indent=1, sort_keys=True, allow_nan=False).encode()
    mode = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with atomic_output(path) as handle:
        with zipfile.ZipFile(handle, "w", mode, allowZip64=True) as zf:
            zf.writestr(META, head)
            zf.writestr(TREE, body)
            for i, arr in enumerate(arrays):
                with zf.open(f"a{i}.npy", "w", force_zip64=arr.nbytes > 2**30) as member:
                    np.lib.format.write_array(member, np.ascontiguousarray(arr), allow_pickle=False)
            zf.comment = _SEAL + b"0" * _DIGEST_LEN
        end = handle.tell()
        digest = _hash_prefix(handle, end - _DIGEST_LEN)
        handle.seek(end - _DIGEST_LEN)
        handle.write(digest.encode())
    return digest


def _hash_prefix(handle: BinaryIO, n: int) -> str:
    handle.seek(0)
    sha = hashlib.sha256()
    left = n
    while left > 0:
        chunk = handle.read(min(left, 1 << 22))
        if not chunk:
            break
        sha.update(chunk)
        left -= len(chunk)
    return sha.hexdigest()


def _verified(path: Path) -> tuple[str, zipfile.ZipFile]:
    """The file's digest and an open zip of it, after checking the seal; ``CheckpointError`` else."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise CheckpointError(f"{path}: missing") from None
    except OSError as err:
        raise CheckpointError(f"{path}: unreadable ({err.strerror or type(err).__name__})") from None
    try:
        size = os.fstat(handle.fileno()).st_size
        if size < 22 + _COMMENT_LEN:
            raise CheckpointError(f"{path}: corrupt checkpoint (only {size} bytes: truncated or foreign)")
        handle.seek(size - 22 - _COMMENT_LEN)
        tail = handle.read(22 + _COMMENT_LEN)
        if (tail[:4] != _EOCD or int.from_bytes(tail[20:22], "little") != _COMMENT_LEN
                or tail[22:22 + len(_SEAL)] != _SEAL):
            raise CheckpointError(f"{path}: corrupt checkpoint (no {_SEAL.decode()} seal: truncated, foreign "
                                  "or written in an older format)")
        recorded = tail[-_DIGEST_LEN:].decode("ascii", "replace")
        actual = _hash_prefix(handle, size - _DIGEST_LEN)
        if actual != recorded:
            raise CheckpointError(f"{path}: corrupt checkpoint (SHA-256 {actual[:12]}… differs from the "
                                  f"recorded {recorded[:12]}…)")
        handle.seek(0)
        return actual, zipfile.ZipFile(handle)
    except CheckpointError:
        handle.close()
        raise
    except (OSError, zipfile.BadZipFile, ValueError) as err:
        handle.close()
        raise CheckpointError(f"{path}: corrupt checkpoint ({type(err).__name__})") from None


class Checkpoint:
    """A loaded, verified checkpoint: ``kind``, ``meta`` (dict), ``tree`` and the file's ``sha256``."""

    def __init__(self, path: Path, kind: str, meta: dict[str, Any], tree: Any, sha256: str) -> None:
        self.path, self.kind, self.meta, self.tree, self.sha256 = path, kind, meta, tree, sha256


def _header(path: Path, zf: zipfile.ZipFile, kinds: tuple[str, ...]) -> dict[str, Any]:
    head = json.loads(zf.read(META))
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        raise CheckpointError(f"{path}: corrupt checkpoint (not of format {FORMAT!r})")
    if head.get("version") != VERSION:
        raise CheckpointError(f"{path}: unsupported checkpoint version {head.get('version')!r} "
                              f"(this asg reads version {VERSION})")
    if kinds and head.get("kind") not in kinds:
        raise CheckpointError(f"{path}: holds a {head.get('kind')!r} checkpoint, expected "
                              f"{' or '.join(repr(k) for k in kinds)}")
    if not isinstance(head.get("meta"), dict):
        raise CheckpointError(f"{path}: corrupt checkpoint (no meta)")
    return head


def load(path: str | Path, kind: str | tuple[str, ...] = ()) -> Checkpoint:
    """Verify and read a checkpoint of ``kind`` (any kind when empty); ``CheckpointError`` if it
    is missing, corrupt, truncated, foreign, of another version or of another kind."""
    path = Path(path)
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    sha, zf = _verified(path)
    try:
        with zf:
            head = _header(path, zf, kinds)
            names = set(zf.namelist())
            arrays: dict[int, np.ndarray] = {}
            for name in names - {META, TREE}:
                if not (name.startswith("a") and name.endswith(".npy") and name[1:-4].isdigit()):
                    raise CheckpointError(f"{path}: corrupt checkpoint (unexpected member {name!r})")
                with zf.open(name) as member:
                    arrays[int(name[1:-4])] = np.lib.format.read_array(member, allow_pickle=False)
            tree = decode(json.loads(zf.read(TREE)), arrays)
            meta = decode(head["meta"], {})
    except CheckpointError:
        raise
    except (KeyError, ValueError, TypeError, OSError, zipfile.BadZipFile, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path}: corrupt checkpoint ({type(err).__name__})") from None
    return Checkpoint(path, head["kind"], meta, tree, sha)


def read_meta(path: str | Path, kind: str | tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``meta`` of a checkpoint, verified like ``load`` but without reading its arrays."""
    path = Path(path)
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)
    _, zf = _verified(path)
    try:
        with zf:
            return decode(_header(path, zf, kinds)["meta"], {})
    except CheckpointError:
        raise
    except (KeyError, ValueError, TypeError, OSError, zipfile.BadZipFile, UnicodeDecodeError) as err:
        raise CheckpointError(f"{path}: corrupt checkpoint ({type(err).__name__})") from None


def read_json(path: Path | str, what: str = "") -> Any:
    """The JSON value in ``path``; a missing, unreadable or non-JSON file is a ``CheckpointError``,
    as is one that is not an object when ``what`` (e.g. "a goal-policy run config") is given."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: missing") from None
    except (OSError, ValueError) as err:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise CheckpointError(f"{path}: unreadable ({type(err).__name__})") from None
    if what and not isinstance(value, dict):
        raise CheckpointError(f"{path}: not {what}")
    return value


def check_agrees(config_file: Path | str, config: dict[str, Any], checkpoint_file: Path | str,
                 recorded: dict[str, Any], keys: tuple[str, ...]) -> None:
    """``CheckpointError`` naming both values when ``config[key] != recorded[key]`` for a key."""
    for key in keys:
        if config.get(key) != recorded.get(key):
            raise CheckpointError(f"{config_file}: {key} is {config.get(key)!r}, but {checkpoint_file} was "
                                  f"written with {key} {recorded.get(key)!r}; restore the run's own config.json")


def require(cond: bool, path: Path | str, what: str) -> None:
    """``CheckpointError`` ``"{path}: corrupt checkpoint ({what})"`` unless ``cond``."""
    if not cond:
        raise CheckpointError(f"{path}: corrupt checkpoint ({what})")


def reason(err: CheckpointError) -> str:
    """The message of ``err`` without its leading ``"<file>: "`` (to re-word it for one file kind)."""
    text = str(err)
    head, sep, tail = text.partition(": ")
    return tail if sep else text


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a whole file (hex)."""
    sha = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            sha.update(chunk)
    return sha.hexdigest()
