"""A run directory: resolved config, metrics CSV, learning curve, checkpoint, result.

Layout of ``runs/<domain>-<method>-seed<N>/``::

    config.json          the resolved TrainConfig (config_to_dict) plus subgoals and versions
    metrics.csv          one row per evaluation point (rewritten atomically at each point)
    learning_curve.png   greedy success rate against env steps
    checkpoint.pkl       pickled learner + trainer state (atomic: temp file + os.replace)
    checkpoint.json      what the checkpoint holds (env steps, format version)
    result.json          {"domain", "method", "seed", "success_rate", "eval_episodes",
                          "env_steps", "wall_seconds", ...}

Checkpoints are pickles: load only run directories you wrote yourself.
"""
from __future__ import annotations

import csv
import io
import json
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Sequence

from asg.learning.config import TrainConfig, config_from_dict, config_to_dict
from asg.learning.errors import CheckpointError, ConfigError

CHECKPOINT_VERSION = 1
_UMASK = os.umask(0)
os.umask(_UMASK)
CONFIG, METRICS, CURVE = "config.json", "metrics.csv", "learning_curve.png"
CHECKPOINT, CHECKPOINT_META, RESULT = "checkpoint.pkl", "checkpoint.json", "result.json"


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    """JSON with sorted keys, written atomically."""
    atomic_write(path, (json.dumps(obj, indent=2, sort_keys=True) + "\n").encode())


def default_run_path(root: str | Path, domain: str, method: str, seed: int) -> Path:
    """``root/<domain>-<method>-seed<N>``, suffixed ``-2``, ``-3`` … when taken."""
    base = Path(root) / f"{domain}-{method}-seed{seed}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


class RunDir:
    """One run's folder (see the module docstring for its files)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def create(cls, path: str | Path, cfg: TrainConfig, extra: dict[str, Any] | None = None) -> "RunDir":
        """A new run folder holding ``config.json``; refuses one that already holds a run."""
        run = cls(path)
        if (run.path / CHECKPOINT).exists() or (run.path / RESULT).exists():
            raise ConfigError(f"{run.path}: already holds a run; use --resume {run.path} or another --out")
        payload = {"config": config_to_dict(cfg), **(extra or {})}
        atomic_write_json(run.path / CONFIG, payload)
        return run

    @classmethod
    def open(cls, path: str | Path) -> "RunDir":
        """An existing run folder; raises ``CheckpointError`` when it is not one."""
        run = cls(path)
        if not (run.path / CONFIG).is_file():
            raise CheckpointError(f"{run.path}: not a run directory (no {CONFIG})")
        return run

    def _read_json(self, name: str) -> Any:
        file = self.path / name
        try:
            return json.loads(file.read_text())
        except FileNotFoundError:
            raise CheckpointError(f"{file}: missing") from None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise CheckpointError(f"{file}: unreadable ({type(err).__name__})") from None

    def config(self) -> TrainConfig:
        """The saved, resolved config."""
        data = self._read_json(CONFIG)
        try:
            return config_from_dict(data.get("config") if isinstance(data, dict) else None,
                                    str(self.path / CONFIG))
        except ConfigError as err:
            raise CheckpointError(str(err)) from None

    def write_metrics(self, rows: Sequence[dict[str, Any]]) -> None:
        """Rewrite ``metrics.csv`` from all rows so far."""
        if not rows:
            return
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        atomic_write(self.path / METRICS, buf.getvalue().encode())

    def read_metrics(self) -> list[dict[str, str]]:
        """The rows of ``metrics.csv`` (strings), [] when absent."""
        file = self.path / METRICS
        if not file.is_file():
            return []
        with file.open(newline="") as handle:
            return list(csv.DictReader(handle))

    def save_checkpoint(self, payload: dict[str, Any], env_steps: int) -> None:
        """Pickle ``payload`` atomically, then its description."""
        atomic_write(self.path / CHECKPOINT, pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))
        atomic_write_json(self.path / CHECKPOINT_META, {"version": CHECKPOINT_VERSION, "env_steps": env_steps})

    def checkpoint_steps(self) -> int:
        """Env steps of the saved checkpoint (0 when there is none or it is unreadable)."""
        try:
            meta = json.loads((self.path / CHECKPOINT_META).read_text())
            return int(meta.get("env_steps", 0))
        except (OSError, ValueError, AttributeError, TypeError):
            return 0

    def load_checkpoint(self) -> dict[str, Any]:
        """The checkpoint payload; raises ``CheckpointError`` if missing, corrupt or foreign."""
        file = self.path / CHECKPOINT
        if not file.is_file():
            raise CheckpointError(f"{file}: missing (nothing to resume or evaluate)")
        meta = self._read_json(CHECKPOINT_META)
        if not isinstance(meta, dict) or meta.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"{self.path / CHECKPOINT_META}: unsupported checkpoint version")
        try:
            payload = pickle.loads(file.read_bytes())
        except Exception as err:  # any unpickling failure means a corrupt file
            raise CheckpointError(f"{file}: corrupt checkpoint ({type(err).__name__})") from None
        if not isinstance(payload, dict) or "learner" not in payload or "state" not in payload:
            raise CheckpointError(f"{file}: corrupt checkpoint (unexpected content)")
        return payload

    def write_result(self, result: dict[str, Any]) -> None:
        """Write ``result.json``."""
        atomic_write_json(self.path / RESULT, result)

    def read_result(self) -> dict[str, Any]:
        """Read ``result.json``."""
        return self._read_json(RESULT)

    def plot_curve(self, rows: Sequence[dict[str, Any]], title: str) -> Path:
        """Draw ``learning_curve.png`` (greedy success vs env steps)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.5))
        steps = [float(r["env_steps"]) for r in rows]
        rate = [float(r["success_rate"]) for r in rows]
        ax.step(steps, rate, where="post", marker="o", markersize=3)
        ax.set_xlabel("environment steps")
        ax.set_ylabel("greedy success rate")
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
        atomic_write(self.path / CURVE, buf.getvalue())
        return self.path / CURVE
