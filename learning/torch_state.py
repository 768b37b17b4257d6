"""Global torch state, changed only inside a block and restored after it.

Library code never leaves torch's thread count changed; seeded initialisation forks the global
RNG (``torch.random.fork_rng``) instead of reseeding it.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """``torch.set_num_threads(n)`` inside the block; the previous count is restored after it."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
