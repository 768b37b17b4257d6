"""The AlphaNPI network (AlphaNPI-X B.2, Figure 6) and its BPTT loss.

Five modules: a state encoder f_enc (state -> 128 -> 128, ReLU then tanh), an embedding table
M_prog with one row per non-atomic program, an LSTM core (input: encoding ++ embedding), a
policy head and a value head (128 -> 64 -> out). Sizes are Table 5's.

Training runs the LSTM over whole traces from a zero state (back-propagation through time, the
paper's change over AlphaNPI, which stored hidden states per transition). The loss is Eq. (1):
policy cross-entropy against the search's tree policy plus the value's squared error to the
trace's return. The policy is a softmax over the actions legal at each step (the same mask the
search applies), so the network never spends capacity on illegal calls.

The search calls the network one state at a time; :class:`NetSnapshot` is a numpy copy of the
weights for that (no autograd, about 20x faster than a torch call on one sample), and is what
self-play workers receive.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from asg.learning.errors import ConfigError
from asg.learning.npi.config import NetConfig


class AlphaNPINet(nn.Module):
    """π(·|s, i, h), V(s, i, h) and the next LSTM state."""

    def __init__(self, state_dim: int, n_actions: int, n_tasks: int, config: NetConfig = NetConfig(),
                 state_mean: np.ndarray | None = None, state_std: np.ndarray | None = None,
                 inputs: np.ndarray | None = None) -> None:
        super().__init__()
        self.config = config
        self.state_dim, self.n_actions, self.n_tasks = state_dim, n_actions, n_tasks
        # The state dimensions f_enc reads (``state_inputs``; all of them by default).
        self.inputs = np.arange(state_dim) if inputs is None else np.asarray(inputs, dtype=np.int64)
        self._inputs = torch.as_tensor(self.inputs)
        c = config
        self.encoder = nn.Sequential(nn.Linear(len(self.inputs), c.obs_hidden), nn.ReLU(),
                                     nn.Linear(c.obs_hidden, c.obs_encoding), nn.Tanh())
        self.embedding = nn.Embedding(n_tasks, c.program_embedding)
        self.core = nn.LSTMCell(c.obs_encoding + c.program_embedding, c.lstm_hidden)
        self.policy = nn.Sequential(nn.Linear(c.lstm_hidden, c.head_hidden), nn.ReLU(),
                                    nn.Linear(c.head_hidden, n_actions))
        self.value = nn.Sequential(nn.Linear(c.lstm_hidden, c.head_hidden), nn.ReLU(),
                                   nn.Linear(c.head_hidden, 1), nn.Tanh())
        for module in (self.encoder, self.core, self.policy, self.value):
            for param in module.parameters():
                nn.init.uniform_(param, -c.init_range, c.init_range)  # §2.2; the embedding keeps its default
        mean = np.zeros(state_dim) if state_mean is None else np.asarray(state_mean, dtype=float)
        std = np.ones(state_dim) if state_std is None else np.maximum(np.asarray(state_std, dtype=float), 1e-2)
        self.register_buffer("state_mean", torch.as_tensor(mean, dtype=torch.float32))
        self.register_buffer("state_std", torch.as_tensor(std, dtype=torch.float32))

    def forward(self, states: torch.Tensor, tasks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits (B, T, A) and values (B, T) of traces: states (B, T, D), task rows (B,)."""
        batch, steps, _ = states.shape
        x = (states - self.state_mean) / self.state_std
        encoded = self.encoder(x.index_select(-1, self._inputs))  # (B, T, S)
        program = self.embedding(tasks)  # (B, P)
        h = states.new_zeros(batch, self.config.lstm_hidden)
        c = states.new_zeros(batch, self.config.lstm_hidden)
        hidden = []
        for t in range(steps):
            h, c = self.core(torch.cat([encoded[:, t], program], dim=-1), (h, c))
            hidden.append(h)
        out = torch.stack(hidden, dim=1)  # (B, T, H)
        return self.policy(out), self.value(out).squeeze(-1)

    def snapshot(self) -> NetSnapshot:
        """A numpy copy of the current weights for the search."""
        def arr(t: torch.Tensor) -> np.ndarray:
            return t.detach().cpu().numpy().astype(np.float64)

        enc0, enc1 = self.encoder[0], self.encoder[2]
        pol0, pol1 = self.policy[0], self.policy[2]
        val0, val1 = self.value[0], self.value[2]
        s = self.config.obs_encoding
        w_ih = arr(self.core.weight_ih)
        bias = arr(self.core.bias_ih) + arr(self.core.bias_hh)
        # The embedding's contribution to the LSTM gates is constant per task: fold it in.
        task_gates = arr(self.embedding.weight) @ w_ih[:, s:].T + bias  # (n_tasks, 4H)
        return NetSnapshot(
            inputs=self.inputs, mean=arr(self.state_mean)[self.inputs], std=arr(self.state_std)[self.inputs],
            enc=((arr(enc0.weight), arr(enc0.bias)), (arr(enc1.weight), arr(enc1.bias))),
            w_state=w_ih[:, :s], w_hh=arr(self.core.weight_hh), task_gates=task_gates,
            policy=((arr(pol0.weight), arr(pol0.bias)), (arr(pol1.weight), arr(pol1.bias))),
            value=((arr(val0.weight), arr(val0.bias)), (arr(val1.weight), arr(val1.bias))),
            hidden=self.config.lstm_hidden)


@dataclass(frozen=True, eq=False)
class NetSnapshot:
    """The network's weights as numpy arrays; :meth:`evaluate` is one LSTM step."""

    inputs: np.ndarray  # the state dimensions f_enc reads
    mean: np.ndarray  # their normaliser
    std: np.ndarray
    enc: tuple
    w_state: np.ndarray  # (4H, S)
    w_hh: np.ndarray  # (4H, H)
    task_gates: np.ndarray  # (n_tasks, 4H): embedding @ W_ih + biases
    policy: tuple
    value: tuple
    hidden: int

    def initial_hidden(self) -> tuple[np.ndarray, np.ndarray]:
        """The zero LSTM state a program starts from."""
        return np.zeros(self.hidden), np.zeros(self.hidden)

    def evaluate(self, state: np.ndarray, task: int, h: np.ndarray, c: np.ndarray
                 ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray]:
        """Logits (A,), value, and the next (h, c) for ``state`` while running task row ``task``."""
        (w0, b0), (w1, b1) = self.enc
        x = (np.asarray(state, dtype=np.float64)[self.inputs] - self.mean) / self.std
        x = np.tanh(w1 @ np.maximum(w0 @ x + b0, 0.0) + b1)
        gates = self.w_state @ x + self.w_hh @ h + self.task_gates[task]
        n = self.hidden
        c = _sigmoid(gates[n:2 * n]) * c + _sigmoid(gates[:n]) * np.tanh(gates[2 * n:3 * n])
        h = _sigmoid(gates[3 * n:]) * np.tanh(c)
        (p0, pb0), (p1, pb1) = self.policy
        logits = p1 @ np.maximum(p0 @ h + pb0, 0.0) + pb1
        (v0, vb0), (v1, vb1) = self.value
        value = float(np.tanh(v1 @ np.maximum(v0 @ h + vb0, 0.0) + vb1)[0])
        return logits, value, h, c


def state_inputs(model: Any, config: NetConfig) -> np.ndarray:
    """The state dimensions f_enc reads under ``config.state_view``: every one for "full", else the
    model's view of that name (``model.state_views``); ``ConfigError`` if the model has none."""
    dim = int(model.state_dim)
    if config.state_view == "full":
        return np.arange(dim)
    views = getattr(model, "state_views", {})
    if config.state_view not in views:
        raise ConfigError(f"net.state_view: the {getattr(model, 'name', type(model).__name__)} model has no "
                          f"{config.state_view!r} view; choose from {', '.join(['full', *views])}")
    return np.asarray(views[config.state_view], dtype=np.int64)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass(frozen=True)
class TraceBatch:
    """Padded traces: states (B, T, D), legal (B, T, A), policy targets (B, T, A), returns (B,)."""

    states: torch.Tensor
    legal: torch.Tensor
    policies: torch.Tensor
    tasks: torch.Tensor
    returns: torch.Tensor
    valid: torch.Tensor  # (B, T) bool: step t exists in trace b


def make_batch(samples: list, state_dim: int, n_actions: int) -> TraceBatch:
    """Pad training samples (objects with states, legal, policies, task_row, value) into a batch."""
    steps = max(len(s.states) for s in samples)
    b = len(samples)
    states = np.zeros((b, steps, state_dim), dtype=np.float32)
    legal = np.ones((b, steps, n_actions), dtype=bool)
    policies = np.zeros((b, steps, n_actions), dtype=np.float32)
    valid = np.zeros((b, steps), dtype=bool)
    for k, s in enumerate(samples):
        n = len(s.states)
        states[k, :n] = s.states
        legal[k, :n] = s.legal
        policies[k, :n] = s.policies
        valid[k, :n] = True
    return TraceBatch(torch.from_numpy(states), torch.from_numpy(legal), torch.from_numpy(policies),
                      torch.tensor([s.task_row for s in samples]),
                      torch.tensor([s.value for s in samples], dtype=torch.float32), torch.from_numpy(valid))


def trace_loss(net: AlphaNPINet, batch: TraceBatch) -> tuple[torch.Tensor, dict[str, float]]:
    """Eq. (1) averaged over the valid steps: masked policy cross-entropy + value MSE."""
    logits, values = net(batch.states, batch.tasks)
    logits = logits.masked_fill(~batch.legal, -1e9)
    log_p = torch.log_softmax(logits, dim=-1)
    valid = batch.valid.float()
    count = valid.sum()
    policy_loss = -((batch.policies * log_p).sum(-1) * valid).sum() / count
    value_loss = (((values - batch.returns[:, None]) ** 2) * valid).sum() / count
    loss = policy_loss + value_loss
    return loss, {"policy_loss": float(policy_loss.detach()), "value_loss": float(value_loss.detach())}
