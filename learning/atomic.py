"""Atomic file writes: a temp file beside the target, then ``os.replace`` (stdlib only, so the
CLI's planning commands can use it without loading numpy); and ``check_writable``, the check
before any work that a file or a folder can be written where asked."""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from asg.planning.errors import AsgError

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[BinaryIO]:
    """A binary handle on a temp file beside ``path``, moved onto ``path`` when the block ends
    cleanly (``os.replace``); on any exception the temp file is removed and ``path`` untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w+b") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_output`)."""
    with atomic_output(path) as handle:
        handle.write(data)


class UnwritableError(AsgError):
    """A place where a file or folder cannot be written; ``reason`` says why (the path is the caller's)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def check_writable(path: str | Path, kind: str = "file") -> Path:
    """``path`` if a ``kind`` ("file" or "dir") can be written there, else ``UnwritableError``: the
    parent folder exists, the place is writable (probed, so ``/proc`` and read-only mounts are caught
    even as root), a file is not meant where a folder stands or the other way round, and a device
    such as ``/dev/null`` is not taken for a file."""
    path = Path(path).expanduser()
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise UnwritableError(path, f"cannot use it ({err.strerror})") from None
    if info is None:
        if not path.parent.exists():
            raise UnwritableError(path, f"the folder {path.parent} does not exist")
        if not path.parent.is_dir():
            raise UnwritableError(path, f"{path.parent} is not a folder")
        _probe(path, path.parent)
    elif kind == "file":
        if stat.S_ISDIR(info.st_mode):
            raise UnwritableError(path, "is a folder; give a file name")
        if not stat.S_ISREG(info.st_mode):
            raise UnwritableError(path, "not a regular file (a device or pipe); give a file name")
        if not os.access(path, os.W_OK):
            raise UnwritableError(path, "the file is not writable")
        _probe(path, path.parent)
    else:
        if stat.S_ISREG(info.st_mode):
            raise UnwritableError(path, "is a file; give a folder")
        if not stat.S_ISDIR(info.st_mode):
            raise UnwritableError(path, "not a folder (a device or pipe)")
        _probe(path, path)
    return path


def _probe(path: Path, folder: Path) -> None:
    """Create and remove a file in ``folder``: the only test that also holds for root and /proc."""
    try:
        fd, name = tempfile.mkstemp(prefix=".asg-write-test-", dir=folder)
    except OSError as err:
        raise UnwritableError(path, f"cannot write in {folder} ({err.strerror or type(err).__name__})") from None
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(name)
