"""Running mean / standard deviation of inputs, with clipping; mergeable across workers.

Statistics are kept as float64 sums (count, sum, sum of squares), so the statistics of two
workers' data merge exactly into those of the union (:meth:`Normalizer.merge`). As in
openai/baselines, the standard deviation has a floor ``eps`` and normalised values are clipped
to ±``clip``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NormStats:
    """Frozen mean and std for normalising (what the rollout workers receive)."""

    mean: np.ndarray  # (d,) float32
    std: np.ndarray  # (d,) float32
    clip: float

    def normalize(self, x: np.ndarray) -> np.ndarray:
        """(x - mean) / std clipped to ±clip, float32."""
        return np.clip((np.asarray(x, dtype=np.float32) - self.mean) / self.std, -self.clip, self.clip)


class Normalizer:
    """Running statistics of d-dimensional inputs."""

    def __init__(self, size: int, eps: float = 0.01, clip: float = 5.0) -> None:
        if size < 1 or eps <= 0 or clip <= 0:
            raise ValueError("size must be >= 1 and eps, clip > 0")
        self.size, self.eps, self.clip = size, float(eps), float(clip)
        self.count = 0.0
        self.sum = np.zeros(size)
        self.sumsq = np.zeros(size)

    def update(self, x: np.ndarray) -> None:
        """Add samples x (..., d)."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, self.size)
        self.count += x.shape[0]
        self.sum += x.sum(axis=0)
        self.sumsq += np.square(x).sum(axis=0)

    def merge(self, other: Normalizer) -> None:
        """Add another normaliser's samples (e.g. a worker's) to these statistics."""
        if other.size != self.size:
            raise ValueError(f"cannot merge a normaliser of size {other.size} into one of size {self.size}")
        self.count += other.count
        self.sum += other.sum
        self.sumsq += other.sumsq

    @property
    def mean(self) -> np.ndarray:
        return self.sum / max(self.count, 1.0)

    @property
    def std(self) -> np.ndarray:
        var = self.sumsq / max(self.count, 1.0) - np.square(self.mean)
        return np.sqrt(np.maximum(self.eps ** 2, var))

    def stats(self) -> NormStats:
        """The current mean and std, frozen."""
        return NormStats(self.mean.astype(np.float32), self.std.astype(np.float32), self.clip)

    def normalize(self, x: np.ndarray) -> np.ndarray:
        """Normalise and clip with the current statistics (float32)."""
        return self.stats().normalize(x)

    def state_dict(self) -> dict:
        return {"size": self.size, "eps": self.eps, "clip": self.clip, "count": self.count,
                "sum": self.sum.copy(), "sumsq": self.sumsq.copy()}

    @classmethod
    def from_state_dict(cls, data: dict) -> Normalizer:
        norm = cls(int(data["size"]), float(data["eps"]), float(data["clip"]))
        norm.count = float(data["count"])
        norm.sum = np.asarray(data["sum"], dtype=np.float64).copy()
        norm.sumsq = np.asarray(data["sumsq"], dtype=np.float64).copy()
        return norm
