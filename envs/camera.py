"""A camera's view of a grid: sprite jitter, lighting and colour noise, a background texture.

Pixel-Mario (``asg.envs.mario.PixelMarioEnv``) draws its observations through this module when
``render_noise="camera"``: one grid state then gives many images, as frames of a real camera would,
so a learner keyed on image bytes sees nearly every observation for the first time. All randomness
comes from the ``np.random.Generator`` passed in (the env's ``np_random``), so ``reset(seed=)``
makes every image reproducible.

Two layers of noise:

* per episode (``draw_look``): a contrast gain, a brightness offset, a per-channel colour tint and
  a background texture (a coarse random pattern over the terrain, i.e. walls, floor, ladder, tube);
* per frame (``camera_image``): every sprite (agent, keys, door) is drawn as a square
  ``2 * jitter_px`` smaller than its cell and shifted by up to ``jitter_px`` pixels in each
  direction, and Gaussian noise is added to every pixel: a window of the episode's Gaussian noise
  field (``noise_margin`` pixels larger than the image each way) at a fresh random offset, so
  consecutive frames carry different noise (a fresh draw per pixel per frame would cost more than
  the rest of the env step on our 2 CPU cores).

Plain numpy; no image library. The lit terrain is cached per episode and ladder state.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RENDER_NOISES = ("camera", "none")


@dataclass(frozen=True)
class CameraConfig:
    """Noise levels of the camera render (pixel values in 0..255)."""

    jitter_px: int = 1  # sprite offset, up to this many pixels per axis ("a pixel or two")
    gain_range: tuple[float, float] = (0.8, 1.2)  # per-episode contrast gain
    bias_range: tuple[float, float] = (-20.0, 20.0)  # per-episode brightness offset
    tint_range: tuple[float, float] = (0.9, 1.1)  # per-episode gain of each colour channel
    texture_std: float = 12.0  # per-episode background texture amplitude
    texture_block: int = 2  # texture granularity in pixels
    noise_std: float = 6.0  # per-pixel Gaussian noise
    noise_margin: int = 16  # the noise field is this much larger than the image; offsets in [0, margin]

    def __post_init__(self) -> None:
        if self.jitter_px < 0 or self.texture_block < 1 or self.noise_std < 0 or self.texture_std < 0:
            raise ValueError(f"invalid camera config {self}")


@dataclass(frozen=True)
class CameraLook:
    """The per-episode part of the camera noise."""

    gain: float
    bias: float
    tint: np.ndarray  # (3,)
    texture: np.ndarray  # (H, W) float32, added to terrain pixels
    noise: np.ndarray  # (H + margin, W + margin, 3) float32 Gaussian noise field
    cache: dict  # lit terrain images of this episode, by terrain bytes


def draw_look(rng: np.random.Generator, shape: tuple[int, int], cfg: CameraConfig) -> CameraLook:
    """Draw one episode's lighting, tint and background texture; ``shape`` is the image (H, W)."""
    gain = float(rng.uniform(*cfg.gain_range))
    bias = float(rng.uniform(*cfg.bias_range))
    tint = rng.uniform(*cfg.tint_range, size=3).astype(np.float32)
    b = cfg.texture_block
    coarse = rng.normal(0.0, cfg.texture_std, size=(-(-shape[0] // b), -(-shape[1] // b)))
    texture = np.repeat(np.repeat(coarse, b, axis=0), b, axis=1)[: shape[0], : shape[1]]
    m = cfg.noise_margin
    noise = rng.standard_normal((shape[0] + m, shape[1] + m, 3), dtype=np.float32) * np.float32(cfg.noise_std)
    return CameraLook(gain, bias, tint, texture.astype(np.float32), noise, {})


def camera_image(terrain: np.ndarray, sprites: list[tuple[int, int, np.ndarray]], cell_px: int,
                 look: CameraLook, rng: np.random.Generator, cfg: CameraConfig) -> np.ndarray:
    """One noisy frame.

    terrain: (rows, cols, 3) uint8 colour of each cell's background; sprites: (row, col, rgb)
    drawn on top in order. Returns (rows*cell_px, cols*cell_px, 3) uint8.
    """
    scale = look.tint * np.float32(look.gain)  # (3,)
    key = terrain.tobytes()
    lit = look.cache.get(key)
    if lit is None:
        lit = np.repeat(np.repeat(terrain.astype(np.float32), cell_px, axis=0), cell_px, axis=1)
        lit += look.texture[:, :, None]
        lit = lit * scale + np.float32(look.bias)
        look.cache[key] = lit
    image = lit.copy()
    jitter = min(cfg.jitter_px, (cell_px - 1) // 2)
    size = cell_px - 2 * jitter
    draws = rng.integers(-jitter, jitter + 1, size=2 * len(sprites))
    for i, (row, col, rgb) in enumerate(sprites):
        top, left = row * cell_px + jitter + int(draws[2 * i]), col * cell_px + jitter + int(draws[2 * i + 1])
        image[top: top + size, left: left + size] = rgb * scale + np.float32(look.bias)
    if cfg.noise_std > 0:
        m = look.noise.shape[0] - image.shape[0]
        dy, dx = rng.integers(0, m + 1, size=2)
        image += look.noise[dy: dy + image.shape[0], dx: dx + image.shape[1]]
    np.clip(image, 0.0, 255.0, out=image)
    return image.astype(np.uint8)
