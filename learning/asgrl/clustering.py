"""K-means state abstraction for diversity counts in pixel state spaces (ASGRL Appendix D).

Terminal states of a landmark are mapped to one of ``n_clusters`` clusters (= the number of
skills) by Euclidean distance in pixel space. The M most recent terminal records are kept; the
clustering is refitted whenever a newly added state lies farther from its centroid than every
other state of that cluster, and then every record is relabelled. Plain numpy.

Tabular skills record a state id per distinct observation (a state seen again keeps its
cluster). Deep skills (``deep_skills.py``) see images that never repeat: every record gets a
fresh id, ``forget_evicted`` drops the features of records that left the buffer (so memory stays
at M), and ``assign`` maps any image to its nearest centroid (the cluster index of App. D).

``DiversityConfig.cluster_features`` (ours) chooses what the distance is measured on: the images as
the skills store them (App. D's pixel space), or ``cluster_feature``'s pooled image with every
colour channel standardised per image (``channel_standardize``).
"""
from __future__ import annotations

from collections import deque

import numpy as np

RGB = 3  # colour channels of the images ``channel_standardize`` reads (channels last)


def pool_image(obs: np.ndarray, factor: int) -> np.ndarray:
    """Average-pool an image by ``factor`` and flatten: (H, W, C) uint8 -> (H/f * W/f * C,) uint8."""
    obs = np.asarray(obs)
    if obs.ndim != 3:
        return obs.reshape(-1).astype(np.uint8)
    h, w, c = obs.shape
    hf, wf = h // factor, w // factor
    rows = obs[: hf * factor, : wf * factor].astype(np.float32).reshape(hf, factor, wf * factor * c).sum(axis=1)
    sums = rows.reshape(hf, wf, factor, c).sum(axis=2).astype(np.uint32)  # (hf, wf, c), exact
    area = factor * factor
    return ((sums + area // 2) // area).astype(np.uint8).reshape(-1)


def channel_standardize(images: np.ndarray) -> np.ndarray:
    """Each colour channel of each image to zero mean and unit variance, so a per-image gain,
    offset and per-channel tint cancel; (m, ..., 3) or flat (m, d) with channels last -> (m, d) float32."""
    x = np.asarray(images, dtype=np.float32).reshape(len(images), -1)
    if x.shape[1] % RGB:
        raise ValueError(f"channel-standardized k-means features need RGB images (channels last), got "
                         f"{x.shape[1]} values per image")
    x = x.reshape(len(x), -1, RGB)
    mean = x.mean(axis=1, keepdims=True)
    std = x.std(axis=1, keepdims=True)
    return ((x - mean) / (std + 1.0)).reshape(len(x), -1)  # + 1: a flat channel stays finite


def cluster_feature(obs: np.ndarray, pool: int) -> np.ndarray:
    """The ``channel-standardized`` k-means feature of one (H, W, 3) observation: pooled by ``pool``,
    then ``channel_standardize``; -> (H/pool * W/pool * 3,) float32."""
    obs = np.asarray(obs)
    if obs.ndim != 3:
        raise ValueError(f"channel-standardized k-means features need (H, W, 3) images, got shape {obs.shape}")
    return channel_standardize(pool_image(obs, pool)[None])[0]


def kmeans(points: np.ndarray, weights: np.ndarray, k: int, rng: np.random.Generator,
           iters: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Weighted Lloyd k-means with k-means++ seeding.

    points: (n, d); weights: (n,) > 0. Returns centroids (k', d) with k' = min(k, n) and
    labels (n,).
    """
    n = points.shape[0]
    k = min(k, n)
    centroids = np.empty((k, points.shape[1]))
    centroids[0] = points[rng.choice(n, p=weights / weights.sum())]
    d2 = ((points - centroids[0]) ** 2).sum(axis=1)
    for j in range(1, k):
        mass = d2 * weights
        pick = int(rng.choice(n, p=mass / mass.sum())) if mass.sum() > 0 else int(rng.integers(n))
        centroids[j] = points[pick]
        d2 = np.minimum(d2, ((points - centroids[j]) ** 2).sum(axis=1))
    labels = np.zeros(n, dtype=np.int64)
    for _ in range(iters):
        dist = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)  # (n, k)
        new = dist.argmin(axis=1)
        if _ and np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            member = labels == j
            if member.any():
                w = weights[member][:, None]
                centroids[j] = (points[member] * w).sum(axis=0) / w.sum()
    return centroids, labels


class KMeansAbstraction:
    """Cluster ids for terminal states, refitted as new terminal states appear (App. D)."""

    def __init__(self, n_clusters: int, buffer_size: int, rng: np.random.Generator,
                 forget_evicted: bool = False) -> None:
        self.n_clusters = n_clusters
        self.forget_evicted = forget_evicted  # ids are unique per record: forget evicted ones
        self.records: deque[tuple[int, int]] = deque(maxlen=buffer_size)  # (state id, skill z)
        self.features: dict[int, np.ndarray] = {}  # state id -> flattened pixels
        self.centroids: np.ndarray | None = None  # (k', d)
        self.cluster_of: dict[int, int] = {}  # state id -> cluster
        self.refits = 0
        self._rng = rng

    def _nearest(self, feature: np.ndarray) -> tuple[int, float]:
        assert self.centroids is not None
        dist = np.sqrt(((self.centroids - feature) ** 2).sum(axis=1))
        j = int(dist.argmin())
        return j, float(dist[j])

    def _needs_refit(self, state_id: int, feature: np.ndarray) -> bool:
        if self.centroids is None:
            return True
        if state_id in self.cluster_of:
            return False
        if len(self.centroids) < self.n_clusters:
            return True
        j, dist = self._nearest(feature)
        members = [sid for sid, c in self.cluster_of.items() if c == j]
        if not members:
            return True
        assert self.centroids is not None
        spread = max(float(np.sqrt(((self.features[m] - self.centroids[j]) ** 2).sum())) for m in members)
        return dist > spread

    def add(self, state_id: int, z: int, feature: np.ndarray) -> bool:
        """Record skill ``z`` ending in ``state_id``; returns True when the clusters changed."""
        feature = np.asarray(feature, dtype=np.float64).ravel()
        refit = self._needs_refit(state_id, feature)
        self.features.setdefault(state_id, feature)
        if self.forget_evicted and len(self.records) == self.records.maxlen:
            evicted = self.records[0][0]
            if evicted != state_id:
                self.features.pop(evicted, None)
                self.cluster_of.pop(evicted, None)
        self.records.append((state_id, z))
        if refit:
            self.refit()
        elif state_id not in self.cluster_of:
            self.cluster_of[state_id] = self._nearest(feature)[0]
        return refit

    def refit(self) -> None:
        """Re-cluster the distinct states of the buffer (weighted by how often they occur)."""
        ids = sorted({sid for sid, _ in self.records})
        live = set(ids)
        self.features = {sid: f for sid, f in self.features.items() if sid in live}
        weights = np.zeros(len(ids))
        pos = {sid: i for i, sid in enumerate(ids)}
        for sid, _ in self.records:
            weights[pos[sid]] += 1
        points = np.stack([self.features[sid] for sid in ids])
        self.centroids, labels = kmeans(points, weights, self.n_clusters, self._rng)
        self.cluster_of = {sid: int(c) for sid, c in zip(ids, labels)}
        self.refits += 1

    def assign(self, features: np.ndarray) -> np.ndarray:
        """The nearest centroid of each feature row; features (m, d) -> (m,) int64, -1 before any fit."""
        features = np.asarray(features, dtype=np.float64).reshape(len(features), -1)
        if self.centroids is None:
            return np.full(len(features), -1, dtype=np.int64)
        dist = ((features[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)  # (m, k')
        return dist.argmin(axis=1).astype(np.int64)

    def cluster(self, state_id: int) -> int:
        """The cluster of a recorded state id, or -1."""
        return self.cluster_of.get(state_id, -1)


class PrototypeIndex:
    """Table ids for images that never repeat: online DP-means (Kulis & Jordan 2012) over a feature.

    A feature within ``radius`` (Euclidean) of its nearest prototype gets that prototype's id, and
    while learning moves the prototype towards it (a running mean over its first ``mean_cap``
    members, then an average with weight 1/``mean_cap``); a feature farther from every prototype
    founds a new one. Ids are dense and stable (a prototype is never merged or dropped), so a Q
    table keyed on them is a table over a learned discretisation of the images. Same interface as
    ``tabular_q.StateIndex``: ``intern`` while learning, ``lookup`` (the nearest
    prototype, no change) for frozen evaluation. Plain numpy.
    """

    def __init__(self, radius: float, mean_cap: int) -> None:
        self.radius, self.mean_cap = float(radius), int(mean_cap)
        self.centroids = np.zeros((0, 0), dtype=np.float64)  # (capacity, d); rows < len(self) live
        self.members = np.zeros(0, dtype=np.int64)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def _nearest(self, feature: np.ndarray) -> tuple[int, float]:
        if self._n == 0:
            return -1, float("inf")
        diff = self.centroids[: self._n] - feature
        d2 = np.einsum("ij,ij->i", diff, diff)
        j = int(d2.argmin())
        return j, float(np.sqrt(d2[j]))

    def _checked(self, feature: np.ndarray) -> np.ndarray:
        feature = np.asarray(feature, dtype=np.float64).ravel()
        if self._n and feature.size != self.centroids.shape[1]:
            raise ValueError(f"a feature of {feature.size} values, the prototypes have {self.centroids.shape[1]}")
        return feature

    def intern(self, feature: np.ndarray) -> int:
        """The id of ``feature``'s prototype, moving it towards ``feature``, or a new prototype's id."""
        feature = self._checked(feature)
        j, dist = self._nearest(feature)
        if j >= 0 and dist <= self.radius:
            n = min(int(self.members[j]) + 1, self.mean_cap)
            self.members[j] = n
            self.centroids[j] += (feature - self.centroids[j]) / n
            return j
        if self._n == len(self.centroids):
            grown = np.zeros((max(64, 2 * self._n), feature.size))
            if self._n:
                grown[: self._n] = self.centroids[: self._n]
            members = np.zeros(len(grown), dtype=np.int64)
            members[: self._n] = self.members[: self._n]
            self.centroids, self.members = grown, members
        self.centroids[self._n], self.members[self._n] = feature, 1
        self._n += 1
        return self._n - 1

    def lookup(self, feature: np.ndarray) -> int:
        """The id of ``feature``'s nearest prototype at any distance (the frozen policy generalises to
        images it did not see), or -1 before the first prototype."""
        return self._nearest(self._checked(feature))[0]

    def state_dict(self) -> dict[str, np.ndarray]:
        """The live prototypes and their member counts."""
        return {"centroids": self.centroids[: self._n].copy(), "members": self.members[: self._n].copy()}

    def load_state_dict(self, data: dict[str, object]) -> None:
        """Restore from :meth:`state_dict` output; ``ValueError`` when the arrays do not fit."""
        if "centroids" not in data or "members" not in data:
            raise ValueError("expected image prototypes (centroids, members), got an exact observation index")
        centroids = np.asarray(data["centroids"], dtype=np.float64)
        members = np.asarray(data["members"], dtype=np.int64)
        if centroids.ndim != 2 or members.shape != (len(centroids),):
            raise ValueError(f"prototypes of shape {centroids.shape} with {members.shape} member counts")
        self.centroids, self.members, self._n = centroids.copy(), members.copy(), len(centroids)
