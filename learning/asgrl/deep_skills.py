"""Deep skills: one small Q-network for all of ASGRL's diverse skills, over images or category codes.

``HierarchicalConfig.skills = "deep"`` (ours; ``DeepQConfig``) replaces the Q table of every
skill by a head of one shared network, for observations that never repeat: Pixel-Mario's camera
render (``encoding = "pixels"``: average-pooled, standardised images) or a world whose layout is
drawn anew every episode, read through MiniGrid's egocentric view (``encoding = "categorical"``:
the (object, colour, state) code of every cell, one-hot, ``OneHot``; or ``encoding = "codes"``:
each code scaled by its count, ``ScaledCodes``). Everything else is the
tabular skills': the subgoal MDP of ``SubgoalWrapper`` (R_L = 1 and termination at the landmark,
failure on an out-of-turn subgoal or an env stop, bootstrap on the 700-step timeout), the
diversity reward α·clip(log p(z|s)) recomputed at replay time (§1.6) with p(z|s) counted over
k-means clusters of the M most recent landmark observations (App. D, ``clustering.py``),
ε-greedy per skill with App. G's schedule, a self-imitation buffer of successful segments, and
the tabular meta-controller over the history of chosen skills.

``epsilon_anneal_steps`` > 0 swaps App. G's ε decay per success for DQN's linear anneal over
each skill's own steps. ``recurrent`` > 0 puts a GRU cell between the torso and the heads: a memory
over an episode's skill runs (or one run), replayed in windows of one memory's consecutive steps
(``RunMemory``, ``ImageReplay.windows``, ``window_tensors``, ``sequence_td_loss``).

Pieces, in order: the features (``pool_image``, from ``clustering.py``; ``standardize``, ``encode``,
``OneHot``), the network (``QNetwork``: an MLP torso, one head of ``n_actions`` values per skill), the replay ring
(``ImageReplay``), the update step (``td_loss``, ``td_update``: DQN with a target network and
double-Q targets), the shared learner (``DeepQ``), the per-skill handle with ``TabularQ``'s
interface (``DeepSkill``) and ``build_skill_sets``. k-means reads the network's input, or with
``DiversityConfig.cluster_features = "channel-standardized"`` the stored pooled image with every colour
channel standardised per image (``clustering.channel_standardize``).

Torch is imported here only; ``hierarchical.py`` imports this module when ``skills == "deep"``.
Every torch call runs inside ``torch_state.torch_threads(1)``; the initial weights come from
``torch.manual_seed`` inside ``torch.random.fork_rng``, so the global torch state is untouched.
Weights, the optimiser and the buffers are saved as numpy arrays (``asg.learning.checkpoint``).
"""
from __future__ import annotations

import copy
import functools
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from asg.learning.asgrl.clustering import channel_standardize, pool_image
from asg.learning.asgrl.config import DeepQConfig, HierarchicalConfig, QConfig
from asg.learning.asgrl.diversity import SkillSet
from asg.learning.asgrl.elimination import random_action
from asg.learning.asgrl.subgoals import SubgoalSet
from asg.learning.asgrl.tabular_q import BonusFn, RingBuffer
from asg.learning.torch_state import torch_threads


# ---------------------------------------------------------------------------------- features
def standardize(pooled: np.ndarray) -> np.ndarray:
    """Per image zero mean and unit variance, so a global lighting gain cancels; (m, d) -> (m, d) float32."""
    x = np.asarray(pooled, dtype=np.float32).reshape(len(pooled), -1)
    mean = x.mean(axis=1, keepdims=True)
    std = x.std(axis=1, keepdims=True)
    return (x - mean) / (std + 1.0)


@functools.lru_cache(maxsize=16)
def code_counts(categories: tuple[int, ...], n: int) -> np.ndarray:
    """How many codes each of ``n`` positions has: ``categories`` repeated over the positions
    (read-only: one array per (categories, n), as every step of a run asks for it)."""
    counts = np.resize(np.asarray(categories, np.int64), n)
    counts.flags.writeable = False
    return counts


def encode(obs: Any, cfg: DeepQConfig) -> np.ndarray:
    """The stored form of an observation: the pooled image (``pixels``) or the flat category codes
    (``categorical``), (n_in,) uint8; a code at or above its position's count is a ``ValueError``."""
    if cfg.encoding == "pixels":
        return pool_image(obs, cfg.pool)
    codes = np.asarray(obs).reshape(-1)
    counts = code_counts(tuple(cfg.categories), codes.size)
    bad = (codes < 0) | (codes >= counts)
    if bad.any():
        i = int(bad.argmax())
        raise ValueError(f"observation value {codes[i]} at position {i} is not a code below {counts[i]} "
                         f"(deep.categories {list(cfg.categories)})")
    return codes.astype(np.uint8)


class ScaledCodes:
    """(m, n) category codes -> (m, n) float32, each code divided by its position's count (``encoding
    = "codes"``: one input per position, in [0, 1))."""

    def __init__(self, categories: Sequence[int], n: int) -> None:
        self.scale = (1.0 / code_counts(tuple(categories), n)).astype(np.float32)
        self.width = n

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        return np.asarray(codes).reshape(len(codes), -1).astype(np.float32) * self.scale


class OneHot:
    """(m, n) category codes -> (m, sum of counts) float32 one-hot rows, for observations of ``n``
    positions with ``code_counts(categories, n)`` codes each (the network input and k-means features)."""

    def __init__(self, categories: Sequence[int], n: int) -> None:
        counts = code_counts(tuple(categories), n)
        self.offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.width = int(counts.sum())

    def __call__(self, codes: np.ndarray) -> np.ndarray:
        hot = self.hot(codes)
        out = np.zeros((hot.shape[0], self.width), np.float32)
        out[np.arange(hot.shape[0])[:, None], hot] = 1.0
        return out

    def hot(self, codes: np.ndarray) -> np.ndarray:
        """(m, n) category codes -> (m, n) int64: the column of each position's 1 in the one-hot row
        (the network's update reads these, ``one_hot_linear``)."""
        return np.asarray(codes).reshape(len(codes), -1).astype(np.int64) + self.offsets


# ---------------------------------------------------------------------------------- network
class _OneHotLinear(torch.autograd.Function):
    """``nn.functional.linear`` of one-hot rows given by their hot columns: the forward pass sums the
    weight's hot columns (``embedding_bag``), n per row instead of a product over all of the one-hot
    width; the weight's gradient is the dense product with the one-hot rows, which on the CPU is
    faster than ``embedding_bag``'s scatter backward. The same function and gradients as the dense
    layer on the one-hot matrix, up to the order of float sums."""

    @staticmethod
    def forward(ctx: Any, hot: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                columns: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(hot)
        ctx.width = weight.shape[1]
        return nn.functional.embedding_bag(hot, columns, mode="sum") + bias

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[None, torch.Tensor | None, torch.Tensor | None, None]:
        (hot,) = ctx.saved_tensors
        grad_weight = grad_bias = None
        if ctx.needs_input_grad[1]:
            rows = torch.zeros(hot.shape[0], ctx.width, dtype=grad.dtype).scatter_(1, hot, 1.0)
            grad_weight = grad.t() @ rows
        if ctx.needs_input_grad[2]:
            grad_bias = grad.sum(0)
        return None, grad_weight, grad_bias, None


def one_hot_linear(hot: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                   columns: torch.Tensor | None = None) -> torch.Tensor:
    """hot (B, n) long, the hot column of each of n positions -> (B, out): a linear layer (weight
    (out, width), bias (out,)) on the one-hot rows, without building them in the forward pass;
    ``columns``: the weight's transpose, contiguous (made here when not given)."""
    if columns is None:
        columns = weight.detach().t().contiguous()
    return _OneHotLinear.apply(hot, weight, bias, columns)


class QNetwork(nn.Module):
    """An MLP torso over the network input (``network_input``) and one head of Q-values per skill;
    with ``recurrent`` > 0 a GRU cell of that width between them (``unroll``)."""

    def __init__(self, n_in: int, hidden: Sequence[int], n_heads: int, n_actions: int, recurrent: int = 0) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = n_in
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.torso = nn.Sequential(*layers)
        self._linears = [m for m in layers if isinstance(m, nn.Linear)]  # the torso's layers, each + ReLU
        self.heads = nn.Linear(recurrent or width, n_heads * n_actions)
        self.gru = nn.GRUCell(width, recurrent) if recurrent else None
        self.n_heads, self.n_actions = n_heads, n_actions
        self._columns: tuple[tuple[int, int], torch.Tensor] | None = None  # ``columns``' last copy

    def columns(self) -> torch.Tensor:
        """The first layer's weight transposed, (width, out) contiguous, for ``one_hot_linear``: copied
        again only after the weight changed (an optimiser step or a load writes it in place, which
        bumps its version counter; torch's fused Adam does not, so it is not used here)."""
        weight = self.torso[0].weight
        key = (weight._version, weight.data_ptr())
        if self._columns is None or self._columns[0] != key:
            self._columns = (key, weight.detach().t().contiguous())
        return self._columns[1]

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """The torso's output: x (B, n_in) float, or (B, n) long: the hot columns of one-hot rows
        (``OneHot.hot``), the same function without the one-hot matrix -> (B, width)."""
        for i, layer in enumerate(self._linears):  # layer by layer, without the modules' call overhead
            if i == 0 and x.dtype == torch.long:
                x = one_hot_linear(x, layer.weight, layer.bias, self.columns())
            else:
                x = nn.functional.linear(x, layer.weight, layer.bias)
            x = torch.relu(x)
        return x

    def head_values(self, x: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """The heads on x (B, width or recurrent): Q (B, n_actions) of each row's skill ``head`` (B,)."""
        out = nn.functional.linear(x, self.heads.weight, self.heads.bias).view(-1, self.n_heads, self.n_actions)
        return out[torch.arange(out.shape[0]), head]

    def forward(self, x: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """x (B, n_in) float or (B, n) long (``features``); head (B,) long -> Q (B, n_actions) of each
        row's skill (the feed-forward network)."""
        return self.head_values(self.features(x), head)

    def unroll(self, x: torch.Tensor, h0: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The GRU over W windows of T steps: x (W * T, ...) the windows' inputs one window after
        another (``features``), h0 (W, H) the memory before each window's first step, mask (W, T)
        bool: the steps that are the window's (a step outside it keeps the memory as it was) -> the
        memory after each step (W, T, H), which ``head_values`` reads."""
        assert self.gru is not None
        w, t = mask.shape
        f = self.features(x).view(w, t, -1)
        h, memories = h0, []
        for i in range(t):
            h = torch.where(mask[:, i, None], self.gru(f[:, i], h), h)
            memories.append(h)
        return torch.stack(memories, 1)

    def numpy_views(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(weight, bias) of every linear layer, the GRU's input and hidden maps among them, in the
        order of the pass (torso, GRU, heads), as numpy arrays sharing the parameters' memory
        (optimiser steps and ``load_state_dict`` write in place, so the views stay current)."""
        pairs = [(m.weight, m.bias) for m in self.torso if isinstance(m, nn.Linear)]
        if self.gru is not None:
            pairs += [(self.gru.weight_ih, self.gru.bias_ih), (self.gru.weight_hh, self.gru.bias_hh)]
        pairs.append((self.heads.weight, self.heads.bias))
        return [(w.detach().numpy(), b.detach().numpy()) for w, b in pairs]


def numpy_q(views: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray, head: int, n_actions: int) -> np.ndarray:
    """``QNetwork.forward`` of one input row in numpy (acting is one row: torch's call overhead would
    dominate); x (n_in,) float32 -> (n_actions,)."""
    for w, b in views[:-1]:
        x = np.maximum(w @ x + b, 0.0)
    w, b = views[-1]
    rows = slice(head * n_actions, (head + 1) * n_actions)
    return w[rows] @ x + b[rows]


def numpy_gru(ih: tuple[np.ndarray, np.ndarray], hh: tuple[np.ndarray, np.ndarray], x: np.ndarray,
              h: np.ndarray) -> np.ndarray:
    """``nn.GRUCell`` in numpy (gates r, z, n in torch's order): x (m, d), h (m, H) -> the next h (m, H)."""
    gi = x @ ih[0].T + ih[1]
    gh = h @ hh[0].T + hh[1]
    width = h.shape[1]
    r, z = (1.0 / (1.0 + np.exp(-(gi[:, :2 * width] + gh[:, :2 * width])))).reshape(-1, 2, width).transpose(1, 0, 2)
    n = np.tanh(gi[:, 2 * width:] + r * gh[:, 2 * width:])
    return ((1.0 - z) * n + z * h).astype(np.float32)


@dataclass
class RunMemory:
    """The recurrent memory of one skill run, or of every run of one episode (``deep.recurrent``,
    ``recurrent_scope``): ``h`` after the observations so far, ``h_prev`` before the last one (the
    state its transition is stored with), and the write number of its last replay row (-1: none
    yet), which the next row links back to."""

    h: np.ndarray
    h_prev: np.ndarray
    last_row: int = -1

    def advance(self, h: np.ndarray) -> None:
        """The memory after one more observation."""
        self.h_prev, self.h = self.h, h


# ---------------------------------------------------------------------------------- replay
_FIELDS = (("a", np.int16), ("r", np.float32), ("done", np.bool_), ("bonus", np.bool_), ("head", np.int16),
           ("ret", np.float32))


class ImageReplay(RingBuffer):
    """A ring of (s, a, r, s2, done, bonus, head, ret) with pooled uint8 images; grows by doubling.

    ``ret`` is the discounted return the skill actually got from s (SIL rows), -inf where unknown.
    With ``recurrent`` > 0 each row also keeps the memory the skill acted with (``h``, float16), its
    write number (``order``: the n-th row ever written sits in slot n mod the arrays' length) and
    that of its run's step before (``prev``, -1 at the run's start), which ``windows`` follows back
    while the slot still holds that row."""

    label = "image replay"

    def __init__(self, capacity: int, n_in: int, initial: int = 1024, recurrent: int = 0) -> None:
        images = [("s", np.uint8, (n_in,)), ("s2", np.uint8, (n_in,))]
        runs = [("h", np.float16, (recurrent,)), ("order", np.int64, ()), ("prev", np.int64, ())] if recurrent else []
        super().__init__(images + [(name, dtype, ()) for name, dtype in _FIELDS] + runs, capacity, initial)
        self.n_in = n_in

    def add(self, s: np.ndarray, a: int, r: float, s2: np.ndarray, done: bool, bonus: bool, head: int,
            ret: float = -np.inf, memory: RunMemory | None = None) -> int:
        """Append one transition (overwriting the oldest when full); its row. ``memory`` (recurrent
        rows): the run it belongs to, whose ``h_prev`` the skill acted with; the row links to the
        run's last one and becomes it."""
        if memory is not None:
            number = self.written()
        i, d = self._slot(), self.data
        d["s"][i], d["a"][i], d["r"][i], d["s2"][i] = s, a, r, s2
        d["done"][i], d["bonus"][i], d["head"][i], d["ret"][i] = done, bonus, head, ret
        if memory is not None:
            d["h"][i], d["order"][i], d["prev"][i] = memory.h_prev, number, memory.last_row
            memory.last_row = number
        return i

    def written(self) -> int:
        """How many rows were ever written (recurrent rows: the next one's write number)."""
        if not self.size:
            return 0
        order = self.data["order"]
        return int(order[(self._next - 1) % len(order)]) + 1

    def windows(self, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
        """``n`` windows of at most ``length`` consecutive steps of one run, each ending at a row drawn
        uniformly with replacement: (n, length) rows, right-aligned, -1 before a window that its
        run's start (or a row since overwritten) cut short."""
        order, prev = self.data["order"], self.data["prev"]
        rows = np.full((n, length), -1, np.int64)
        cur = rng.integers(0, self.size, n)
        rows[:, -1] = cur
        alive = np.ones(n, bool)
        for t in range(length - 2, -1, -1):
            number = prev[cur]
            back = number % len(order)
            alive &= (number >= 0) & (order[back] == number)  # the slot still holds that row
            cur = np.where(alive, back, cur)
            rows[alive, t] = cur[alive]
        return rows


# ---------------------------------------------------------------------------------- update step
def network_input(stored: np.ndarray, one_hot: OneHot | ScaledCodes | None) -> np.ndarray:
    """Stored observations (m, n_in) uint8 -> the network's (m, d) float32 input: ``one_hot`` codes
    (a linear layer on them is one learned vector per position and value), else standardised images."""
    return one_hot(stored) if one_hot is not None else standardize(stored)


def _tensors(batch: dict[str, np.ndarray], extra_reward: np.ndarray,
             one_hot: OneHot | ScaledCodes | None) -> dict[str, torch.Tensor]:
    n = len(batch["a"])
    stored = np.concatenate([batch["s"], batch["s2"]])
    # (2n, d): s, then s2; one-hot codes go as their hot columns (``QNetwork.forward``)
    both = torch.from_numpy(one_hot.hot(stored) if isinstance(one_hot, OneHot) else network_input(stored, one_hot))
    return {"s": both[:n], "s2": both[n:], "both": both,
            "a": torch.from_numpy(batch["a"].astype(np.int64)),
            "head": torch.from_numpy(batch["head"].astype(np.int64)),
            "r": torch.from_numpy((batch["r"] + extra_reward).astype(np.float32)),
            "done": torch.from_numpy(batch["done"].astype(np.float32)),
            "ret": torch.from_numpy(batch["ret"].astype(np.float32))}


def td_loss(net: QNetwork, target: QNetwork, t: dict[str, torch.Tensor], gamma: float,
            double_q: bool, action_gap: float = 0.0) -> torch.Tensor:
    """Huber loss of Q(s, a) against the target y.

    y = r + γ(1 − done)·Q_target(s2, a*), a* from the online net when ``double_q``;
    minus ``action_gap``·(max_b Q_target(s, b) − Q_target(s, a)) (advantage learning, Bellemare et
    al. 2016: the greedy policy is unchanged and the gap between the best action and the others
    grows by 1 / (1 − action_gap)); then max(y, ret), ``ret`` being the return a successful segment
    got from s (-inf elsewhere), a lower bound of the optimal value (self-imitation learning, Oh et
    al. 2018, as App. G's SIL buffer).
    """
    n = t["s"].shape[0]
    s_s2 = t["both"] if "both" in t else torch.cat([t["s"], t["s2"]])  # (2n, d) rows of s, then of s2
    q = net(t["s"], t["head"]).gather(1, t["a"][:, None])[:, 0]  # the only pass the gradient goes through
    with torch.no_grad():
        next_online = net(t["s2"], t["head"]) if double_q else None
        if action_gap:
            frozen = target(s_s2, torch.cat([t["head"], t["head"]]))
            here, next_target = frozen[:n], frozen[n:]
        else:
            here, next_target = None, target(t["s2"], t["head"])
        y = td_target(t, gamma, next_target, next_online, here, action_gap)
    return nn.functional.smooth_l1_loss(q, y)


def td_target(t: dict[str, torch.Tensor], gamma: float, next_target: torch.Tensor, next_online: torch.Tensor | None,
              here: torch.Tensor | None, action_gap: float) -> torch.Tensor:
    """``td_loss``'s y over any leading shape (actions on the last axis): r + γ(1 − done)·Q_target(s2,
    a*), a* the online net's best when ``next_online`` is given, else the target's; minus
    ``action_gap``·(max_b Q_target(s, b) − Q_target(s, a)) when ``here`` is given; then max(y, ret)
    when ``t`` holds the SIL returns."""
    if next_online is not None:
        next_v = next_target.gather(-1, next_online.argmax(dim=-1, keepdim=True))[..., 0]
    else:
        next_v = next_target.max(dim=-1).values
    y = t["r"] + gamma * (1.0 - t["done"]) * next_v
    if here is not None:
        y = y - action_gap * (here.max(dim=-1).values - here.gather(-1, t["a"][..., None])[..., 0])
    return torch.maximum(y, t["ret"]) if "ret" in t else y


def window_tensors(parts: Sequence[tuple[ImageReplay, np.ndarray]], extra_reward: Any,
                   one_hot: OneHot | ScaledCodes | None) -> dict[str, torch.Tensor]:
    """The tensors of replayed windows (``ImageReplay.windows``: (W, T) rows of each buffer) for
    ``sequence_td_loss``: the inputs of every window's T steps and its last step's s2, one window
    after another (W * (T + 1) rows), the memory before each window's first step (``h0``), which
    steps are the window's (``mask``, (W, T + 1): the last s2 always), and per step its skill
    (``head``), a, r (+ ``extra_reward(batch)``, the replay-time diversity term), done, ret and
    ``valid`` (W, T)."""
    fields: dict[str, list[np.ndarray]] = {}
    for buf, rows in parts:
        valid = rows >= 0
        safe = np.where(valid, rows, rows[:, -1:])
        first = safe[np.arange(len(rows)), valid.argmax(axis=1)]  # right-aligned: the first valid step
        d = buf.data
        for name, value in (("s", d["s"][safe]), ("s2", d["s2"][safe]), ("last", d["s2"][rows[:, -1]]),
                            ("h0", d["h"][first].astype(np.float32)), ("valid", valid),
                            *((name, d[name][safe]) for name in ("a", "r", "done", "bonus", "head", "ret"))):
            fields.setdefault(name, []).append(value)
    f = {name: np.concatenate(v) for name, v in fields.items()}
    w, t = f["valid"].shape
    steps = np.concatenate([f["s"], f["last"][:, None]], axis=1).reshape(w * (t + 1), -1)
    flat = {name: f[name].reshape(w * t, *f[name].shape[2:]) for name in ("s2", "bonus", "head", "a")}
    extra = extra_reward(flat).reshape(w, t)
    return {"x": torch.from_numpy(one_hot.hot(steps) if isinstance(one_hot, OneHot) else network_input(steps, one_hot)),
            "h0": torch.from_numpy(f["h0"]),
            "mask": torch.from_numpy(np.concatenate([f["valid"], np.ones((w, 1), bool)], axis=1)),
            "head": torch.from_numpy(f["head"].astype(np.int64)),
            "a": torch.from_numpy(f["a"].astype(np.int64)),
            "r": torch.from_numpy((f["r"] + extra).astype(np.float32)),
            "done": torch.from_numpy(f["done"].astype(np.float32)),
            "ret": torch.from_numpy(f["ret"].astype(np.float32)),
            "valid": torch.from_numpy(f["valid"].astype(np.float32))}


def sequence_td_loss(net: QNetwork, target: QNetwork, t: dict[str, torch.Tensor], gamma: float,
                     double_q: bool, action_gap: float = 0.0) -> torch.Tensor:
    """``td_loss`` over replayed windows (``window_tensors``), both networks unrolled over each window
    from its stored memory: step i's next state is step i + 1's input (the run's next observation,
    the window's last s2 after its last step), so its next values are the unroll's at i + 1, read
    by step i's skill (a window may span the skill runs of one episode, ``recurrent_scope``). The
    Huber loss is averaged over the windows' own steps."""
    head = t["head"].reshape(-1)

    def values(network: QNetwork) -> tuple[torch.Tensor, torch.Tensor]:  # Q at each step and after it, (W, T, A)
        memories = network.unroll(t["x"], t["h0"], t["mask"])
        w, steps, width = memories.shape
        here = network.head_values(memories[:, :-1].reshape(-1, width), head).view(w, steps - 1, -1)
        after = network.head_values(memories[:, 1:].reshape(-1, width), head).view(w, steps - 1, -1)
        return here, after

    q_here, q_after = values(net)
    q = q_here.gather(2, t["a"][..., None])[..., 0]
    with torch.no_grad():
        here, next_target = values(target)
        y = td_target(t, gamma, next_target, q_after if double_q else None, here if action_gap else None, action_gap)
    loss = nn.functional.smooth_l1_loss(q, y, reduction="none")
    return (loss * t["valid"]).sum() / t["valid"].sum()


def td_update(net: QNetwork, target: QNetwork, optimizer: torch.optim.Optimizer, t: dict[str, torch.Tensor],
              gamma: float, double_q: bool, grad_clip: float, action_gap: float = 0.0) -> float:
    """One gradient step on the TD loss (of windows when ``t`` holds them, ``window_tensors``);
    returns the loss before the step."""
    loss = (sequence_td_loss if "h0" in t else td_loss)(net, target, t, gamma, double_q, action_gap)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), grad_clip)
    optimizer.step()
    return float(loss.item())


def _to_numpy(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu().numpy().copy()
    if isinstance(obj, dict):
        return {k: _to_numpy(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_numpy(v) for v in obj)
    return obj


def _to_tensors(obj: Any, keys: tuple[str, ...] = ()) -> Any:
    if isinstance(obj, np.ndarray):
        return torch.from_numpy(np.array(obj))
    if isinstance(obj, dict):
        return {k: _to_tensors(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_to_tensors(v) for v in obj]
    return obj


# ---------------------------------------------------------------------------------- learner
class DeepQ:
    """The network shared by every skill, its target copy, optimiser and buffers (DQN)."""

    def __init__(self, cfg: DeepQConfig, gamma: float, n_heads: int, n_actions: int, seed: int) -> None:
        self.cfg, self.gamma = cfg, gamma
        self.n_heads, self.n_actions, self.seed = n_heads, n_actions, seed
        self.n_in: int | None = None  # set by the first image (``ensure``)
        self.one_hot: OneHot | ScaledCodes | None = None  # the codes' features: set with ``n_in`` (``ensure``)
        self.net: QNetwork | None = None
        self.target: QNetwork | None = None
        self.optimizer: torch.optim.Optimizer | None = None
        self.replay: ImageReplay | None = None
        self.sil: ImageReplay | None = None
        self.bonus_fns: list[BonusFn | None] = [None] * n_heads  # per head, set by build_skill_sets
        self.updates = 0
        self.steps = 0
        self.last_loss = 0.0
        self._views: list[tuple[np.ndarray, np.ndarray]] = []
        self._pool: ThreadPoolExecutor | None = None  # ``update_thread``: the one thread of the steps
        self._pending: Future[float] | None = None  # the gradient step in flight there

    def ensure(self, n_in: int) -> None:
        """Build the networks (seeded) and buffers for images of ``n_in`` pooled values."""
        if self.n_in is not None:
            if n_in != self.n_in:
                raise ValueError(f"image of {n_in} values, the network takes {self.n_in}")
            return
        with torch_threads(1), torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            if self.cfg.encoding == "categorical":
                self.one_hot = OneHot(self.cfg.categories, n_in)
            elif self.cfg.encoding == "codes":
                self.one_hot = ScaledCodes(self.cfg.categories, n_in)
            width = self.one_hot.width if self.one_hot is not None else n_in
            self.net = QNetwork(width, self.cfg.hidden, self.n_heads, self.n_actions, self.cfg.recurrent)
        self.target = copy.deepcopy(self.net)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=self.cfg.lr)
        self.replay = ImageReplay(self.cfg.replay_capacity, n_in, recurrent=self.cfg.recurrent)
        self.sil = ImageReplay(self.cfg.sil_capacity, n_in, recurrent=self.cfg.recurrent)
        self.n_in = n_in
        self._views = self._acting_views()

    def _acting_views(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The weights acting reads: the parameters' own memory, or with ``update_thread`` a copy
        that the step in flight does not write (refreshed by ``sync``)."""
        assert self.net is not None
        views = self.net.numpy_views()
        return [(w.copy(), b.copy()) for w, b in views] if self.cfg.update_thread else views

    def sync(self) -> None:
        """Wait for the gradient step in flight (``update_thread``), then act on its weights."""
        if self._pending is None:
            return
        pending, self._pending = self._pending, None
        self.last_loss = pending.result()  # an error in the step surfaces here
        self._refresh_views()

    def _refresh_views(self) -> None:
        if self.cfg.update_thread and self.net is not None:
            for (w, b), (w_new, b_new) in zip(self._views, self.net.numpy_views()):
                np.copyto(w, w_new)
                np.copyto(b, b_new)

    def run_memory(self, current: RunMemory | None) -> RunMemory | None:
        """The memory a skill run starts with (None without ``recurrent``): ``current``, the episode's
        so far, with ``recurrent_scope`` "episode" once there is one; else an empty one."""
        if not self.cfg.recurrent:
            return None
        if current is not None and self.cfg.recurrent_scope == "episode":
            return current
        empty = np.zeros(self.cfg.recurrent, np.float32)
        return RunMemory(empty, empty)

    def q_values(self, s: np.ndarray, head: int, memory: RunMemory | None = None) -> np.ndarray:
        """Q(s, ·) of one skill on the latest weights; s (n_in,) uint8 -> (n_actions,). With
        ``recurrent``, of the run whose ``memory`` it is, which takes s in."""
        self.sync()
        if memory is not None:
            return self.q_batch(s[None], np.array([head]), [memory])[0]
        return self._q_row(s, head)

    def _q_row(self, s: np.ndarray, head: int) -> np.ndarray:
        self.ensure(len(s))
        return numpy_q(self._views, network_input(s[None], self.one_hot)[0], head, self.n_actions)

    def q_batch(self, states: np.ndarray, heads: np.ndarray,
                memories: Sequence[RunMemory] | None = None) -> np.ndarray:
        """Q(s, ·) of each row's skill in one pass (the heads share the torso, so rows of any skills
        go together); states (m, n_in) uint8, heads (m,) -> (m, n_actions). One row is
        ``q_values``' numpy call, so a lockstep of one env acts as the serial loop does. With
        ``update_thread`` these are the weights before the step in flight (the lockstep's acting).
        With ``recurrent``, ``memories`` are the rows' runs (``RunMemory``), each taking its row in."""
        if self.cfg.recurrent:
            assert memories is not None and len(memories) == len(states)
            return self._recurrent_q(states, heads, memories)
        if len(states) == 1:
            return self._q_row(states[0], int(heads[0]))[None]
        self.ensure(states.shape[1])
        return self._head_rows(self._torso_rows(states, self._views[:-1]), heads)

    def _recurrent_q(self, states: np.ndarray, heads: np.ndarray, memories: Sequence[RunMemory]) -> np.ndarray:
        """``q_batch`` through the GRU: the torso, each row's memory advanced by it, the heads."""
        self.ensure(states.shape[1])
        ih, hh = self._views[-3:-1]
        h = numpy_gru(ih, hh, self._torso_rows(states, self._views[:-3]), np.stack([m.h for m in memories]))
        for memory, row in zip(memories, h):
            memory.advance(row)
        return self._head_rows(h, heads)

    def _torso_rows(self, states: np.ndarray, torso: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        """The torso's layers (``torso``: their numpy views) on stored observations (m, n_in) -> (m, width)."""
        x = network_input(states, self.one_hot)  # (m, d)
        for w, b in torso:
            x = np.maximum(x @ w.T + b, 0.0)
        return x

    def _head_rows(self, x: np.ndarray, heads: np.ndarray) -> np.ndarray:
        """Each row's own head on x (m, width): (m, n_actions)."""
        w, b = self._views[-1]
        rows = np.asarray(heads)[:, None] * self.n_actions + np.arange(self.n_actions)  # (m, n_actions)
        return np.einsum("mad,md->ma", w[rows], x) + b[rows]

    def learn(self, rng: np.random.Generator) -> None:
        """The per-step update: one gradient step on a replay batch plus a SIL batch."""
        self.learn_steps(1, rng)

    def learn_steps(self, n: int, rng: np.random.Generator) -> None:
        """The update after ``n`` env steps: the gradient steps the serial schedule has due in them
        (one every ``train_every`` steps, each on a replay batch plus a SIL batch) as one step on
        that many batches together, so each transition is replayed as often per env step as one
        step at a time; the target network copies after every ``target_update`` of those batches.
        ``n`` = 1 is the serial loop's per-step update.
        With ``update_thread`` the batch is drawn here and the step runs in a thread while the
        caller goes on; the next call (or ``sync``) waits for it first."""
        cfg = self.cfg
        before, self.steps = self.steps, self.steps + n
        due = self.steps // cfg.train_every - before // cfg.train_every
        if self.replay is None or len(self.replay) < cfg.learning_starts or not due:
            return
        assert self.sil is not None
        use_sil = cfg.sil_batch_size and len(self.sil) > cfg.sil_batch_size
        if cfg.recurrent:  # windows of as many steps in all as the feed-forward batch's rows
            length = cfg.sequence_length
            parts = [(self.replay, self.replay.windows(rng, max(1, due * cfg.batch_size // length), length))]
            if use_sil:
                parts.append((self.sil, self.sil.windows(rng, max(1, due * cfg.sil_batch_size // length), length)))
            t = window_tensors(parts, self._bonus, self.one_hot)
        else:
            batch = self.replay.sample(rng, due * cfg.batch_size)
            if use_sil:
                extra = self.sil.sample(rng, due * cfg.sil_batch_size)
                batch = {name: np.concatenate([batch[name], extra[name]]) for name in batch}
            t = _tensors(batch, self._bonus(batch), self.one_hot)
        copy_target = (self.updates + due) // cfg.target_update > self.updates // cfg.target_update
        self.updates += due
        self.sync()
        if not cfg.update_thread:
            self.last_loss = self._step(t, copy_target)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="asg-deep-update")
        self._pending = self._pool.submit(self._step, t, copy_target)

    def _step(self, t: dict[str, torch.Tensor], copy_target: bool) -> float:
        """One gradient step on the tensors ``t``, then the target copy when due; the loss."""
        assert self.net is not None and self.target is not None and self.optimizer is not None
        loss = td_update(self.net, self.target, self.optimizer, t, self.gamma, self.cfg.double_q,
                         self.cfg.grad_clip, self.cfg.action_gap)
        if copy_target:
            self.target.load_state_dict(self.net.state_dict())
        return loss

    def _bonus(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        """The replay-time diversity term of each row (0 where not a landmark state)."""
        extra = np.zeros(len(batch["a"]), np.float32)
        mask = batch["bonus"]
        if mask.any():
            for head in np.unique(batch["head"][mask]).tolist():
                fn = self.bonus_fns[head]
                rows = mask & (batch["head"] == head)
                if fn is not None:
                    extra[rows] = fn(batch["s2"][rows])
        return extra

    def state_dict(self) -> dict[str, Any]:
        """Weights, optimiser, buffers and counters, as numpy data (after the step in flight)."""
        self.sync()
        built = self.net is not None
        return {"n_in": self.n_in, "n_heads": self.n_heads, "n_actions": self.n_actions,
                "net": _to_numpy(self.net.state_dict()) if built else None,
                "target": _to_numpy(self.target.state_dict()) if built else None,  # type: ignore[union-attr]
                "optimizer": _to_numpy(self.optimizer.state_dict()) if built else None,  # type: ignore[union-attr]
                "replay": self.replay.state_dict() if built else None,  # type: ignore[union-attr]
                "sil": self.sil.state_dict() if built else None,  # type: ignore[union-attr]
                "updates": self.updates, "steps": self.steps, "last_loss": self.last_loss}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output; ``ValueError`` when it does not fit."""
        if int(data["n_heads"]) != self.n_heads or int(data["n_actions"]) != self.n_actions:
            raise ValueError(f"deep skills with {data['n_heads']} heads x {data['n_actions']} actions, expected "
                             f"{self.n_heads} x {self.n_actions}")
        self.sync()
        if data["n_in"] is not None:
            self.ensure(int(data["n_in"]))
            assert self.net is not None and self.target is not None and self.optimizer is not None
            assert self.replay is not None and self.sil is not None
            try:
                self.net.load_state_dict(_to_tensors(data["net"]))
                self.target.load_state_dict(_to_tensors(data["target"]))
                self.optimizer.load_state_dict(_to_tensors(data["optimizer"]))
            except (RuntimeError, KeyError, TypeError) as exc:
                raise ValueError(f"deep skill network does not fit the config: {exc}") from None
            self._refresh_views()
            self.replay.load_state_dict(data["replay"])
            self.sil.load_state_dict(data["sil"])
        self.updates, self.steps, self.last_loss = int(data["updates"]), int(data["steps"]), float(data["last_loss"])


class DeepSkill:
    """Skill z of one subgoal: a head of the shared ``DeepQ`` with its own ε (``TabularQ``'s interface)."""

    def __init__(self, deep: DeepQ, head: int, cfg: QConfig) -> None:
        self.deep, self.head, self.cfg = deep, head, cfg
        self.epsilon = cfg.epsilon_start
        self.successes = 0
        self.steps = 0  # training transitions of this skill (the linear ε schedule's clock)
        self.recent_runs: deque[bool] = deque(maxlen=max(1, deep.cfg.epsilon_success_window))  # outcomes
        self._recent_successes = 0  # how many of ``recent_runs`` reached the landmark
        self._segment: list[tuple[Any, ...]] = []  # (s, a, r, s2, done, bonus[, memory]) of the run so far
        self.memory: RunMemory | None = None  # the serial loop's run of this skill (``deep.recurrent``)

    def begin_run(self, memory: RunMemory | None = None) -> None:
        """A run of this skill starts in the serial loop (or an evaluation) with ``memory``
        (``DeepQ.run_memory``; the lockstep passes each env's to ``DeepQ.q_batch`` itself)."""
        self.memory = memory

    def act(self, s: np.ndarray, rng: np.random.Generator, allowed: np.ndarray | None = None) -> int:
        """ε-greedy (ε = 1 until ``learning_starts`` transitions are stored); a recurrent skill takes
        s into its memory whichever way it acts."""
        a = self.explore(rng, allowed)
        if a is not None and not self.deep.cfg.recurrent:
            return a
        q = self.deep.q_values(s, self.head, self._run_memory())
        return a if a is not None else int(q.argmax())

    def _run_memory(self) -> RunMemory | None:
        """The memory of the run in progress (None for a feed-forward network)."""
        assert self.memory is not None or not self.deep.cfg.recurrent, "a recurrent skill's run starts with begin_run"
        return self.memory

    def explore(self, rng: np.random.Generator, allowed: np.ndarray | None = None) -> int | None:
        """The ε part of ``act``: a random action with probability ε (drawn among ``allowed`` when given,
        ``eliminate_undoing``), else None (act greedily)."""
        deep = self.deep
        stored = len(deep.replay) if deep.replay is not None else 0
        eps = self.epsilon if stored >= deep.cfg.learning_starts else 1.0
        if rng.random() < eps:
            return random_action(rng, deep.n_actions, allowed)
        return None

    def use_segment(self, rows: list[tuple[np.ndarray, int, float, np.ndarray, bool, bool]]) -> None:
        """Collect the running segment in ``rows`` (``observe`` appends, ``end_segment`` closes it):
        in lockstep several envs run one skill at once, each with its own segment."""
        self._segment = rows

    def greedy(self, s: np.ndarray) -> int:
        """The frozen greedy action (first maximum)."""
        return int(self.deep.q_values(s, self.head, self._run_memory()).argmax())

    def observe(self, s: np.ndarray, a: int, s2: np.ndarray, r: float, done: bool, bonus: bool = False,
                memory: RunMemory | None = None) -> None:
        """Store a transition in the shared replay and in this skill's segment (for SIL); with
        ``deep.recurrent``, as a step of the run whose ``memory`` acted (the lockstep's env's; by
        default this skill's own run)."""
        self.deep.ensure(len(s))
        assert self.deep.replay is not None
        memory = memory or self.memory
        self.deep.replay.add(s, a, r, s2, done, bonus, self.head, memory=memory)
        row = (s, a, r, s2, done, bonus)
        self._segment.append(row if memory is None else (*row, memory.h_prev))
        self.steps += 1
        if self.deep.cfg.epsilon_anneal_steps:
            self._anneal()

    def _anneal(self) -> None:
        """The linear schedule: ε falls over this skill's first ``epsilon_anneal_steps`` training
        steps; with ``epsilon_success_decay`` it is also at most App. G's ε after as many successes
        (start x decay^successes), whichever clock has gone further."""
        cfg, start, end = self.deep.cfg, self.cfg.epsilon_start, self.cfg.epsilon_min
        eps = start - (start - end) * self.steps / cfg.epsilon_anneal_steps
        if cfg.epsilon_success_decay:
            eps = min(eps, start * self.cfg.epsilon_decay ** self.successes)
        if cfg.epsilon_success_window and len(self.recent_runs) == cfg.epsilon_success_window:
            eps = min(eps, 1.0 - self._recent_successes / cfg.epsilon_success_window)
        self.epsilon = max(end, eps)

    def record_run(self, reached: bool) -> None:
        """A run of this skill ended (``reached``: at its landmark); with ``epsilon_success_window``
        ε is capped anew by the success rate of the last runs."""
        if self.deep.cfg.epsilon_success_window:
            runs = self.recent_runs
            if len(runs) == runs.maxlen:
                self._recent_successes -= runs[0]  # the run the window lets go of
            runs.append(bool(reached))
            self._recent_successes += bool(reached)
            self._anneal()

    def learn(self, rng: np.random.Generator, bonus_fn: BonusFn | None = None) -> None:
        """One step of the shared network's schedule (the diversity terms come from ``DeepQ.bonus_fns``)."""
        self.deep.learn(rng)

    def end_segment(self, keep: bool) -> None:
        """Close the current segment; ``keep`` copies it into the SIL buffer with each step's
        discounted return (the diversity term of the final state as estimated now)."""
        if keep and self._segment:
            deep = self.deep
            assert deep.sil is not None
            last = self._segment[-1]
            fn = deep.bonus_fns[self.head]
            tail = float(fn(last[3][None])[0]) if fn is not None and last[5] else 0.0
            returns, g = [], 0.0
            for i, row in enumerate(reversed(self._segment)):
                g = row[2] + (tail if i == 0 else deep.gamma * g)  # the last row is the landmark step
                returns.append(g)
            copy_of: RunMemory | None = None  # recurrent rows: the run again, linked row to row in the SIL ring
            for row, ret in zip(self._segment, reversed(returns)):
                if len(row) > 6:  # the memory the skill acted with
                    copy_of = copy_of or RunMemory(row[6], row[6])
                    copy_of.h_prev = row[6]
                deep.sil.add(*row[:6], self.head, ret, memory=copy_of)
        self._segment = []

    def decay_epsilon(self) -> None:
        """ε *= decay, floored (App. G); under the linear schedule (``epsilon_anneal_steps``) only its
        success clock moves, with ``epsilon_success_decay``."""
        if not self.deep.cfg.epsilon_anneal_steps:
            self.epsilon = max(self.cfg.epsilon_min, self.epsilon * self.cfg.epsilon_decay)
        elif self.deep.cfg.epsilon_success_decay:
            self._anneal()

    def state_dict(self) -> dict[str, Any]:
        """ε and counters (segments are empty between episodes, where checkpoints happen)."""
        return {"epsilon": self.epsilon, "successes": self.successes, "steps": self.steps,
                "recent_runs": list(self.recent_runs), "segment": list(self._segment)}

    def load_state_dict(self, data: dict[str, Any]) -> None:
        """Restore from :meth:`state_dict` output."""
        self.epsilon, self.successes = float(data["epsilon"]), int(data["successes"])
        self.steps = int(data.get("steps", 0))  # absent in checkpoints before the linear schedule
        self.recent_runs.clear()
        self.recent_runs.extend(bool(r) for r in data.get("recent_runs", []))  # absent before the window
        self._recent_successes = sum(self.recent_runs)
        self._segment = [tuple(row) for row in data["segment"]]  # type: ignore[misc]


def build_skill_sets(cfg: HierarchicalConfig, subgoals: SubgoalSet, n_actions: int, seed: int,
                     rngs: Sequence[np.random.Generator]) -> tuple[DeepQ, list[SkillSet]]:
    """The shared network and one ``SkillSet`` of ``DeepSkill`` heads per subgoal (``rngs``: one each)."""
    ks = [cfg.diversity.k_for(sg.name) for sg in subgoals.subgoals]
    deep = DeepQ(cfg.deep, cfg.deep.gamma, sum(ks), n_actions, seed)
    by_channel = cfg.diversity.cluster_features == "channel-standardized"  # pooled by deep.pool = cluster_pool

    stack = cfg.deep.frame_stack

    @functools.lru_cache(maxsize=1)
    def last_view_input(width: int) -> OneHot | ScaledCodes:  # built once the view's width is known
        return type(deep.one_hot)(cfg.deep.categories, width)

    def featurize(stored: np.ndarray) -> np.ndarray:
        deep.ensure(stored.shape[-1])
        if stack > 1:  # an end state is the skill's last view, not the views before it (App. D: end images)
            last = stored[..., -(stored.shape[-1] // stack):]
            return network_input(last, last_view_input(last.shape[-1]))
        return channel_standardize(stored) if by_channel else network_input(stored, deep.one_hot)
    skill_sets, head = [], 0
    for sg, k, rng in zip(subgoals.subgoals, ks, rngs):
        skills = [DeepSkill(deep, head + z, cfg.q) for z in range(k)]
        skill_sets.append(SkillSet(sg.name, k, cfg.q, cfg.diversity, n_actions, rng, skills=skills,
                                   featurize=featurize))
        head += k
    for skill_set in skill_sets:
        for z, skill in enumerate(skill_set.skills):
            deep.bonus_fns[skill.head] = skill_set.bonus_fn(z)
    return deep, skill_sets
