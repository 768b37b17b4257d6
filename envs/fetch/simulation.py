"""The MuJoCo side of the Fetch block world: model loading, control, observations, state I/O.

Kept apart from the Gymnasium class so the hot path (``apply_action``, ``step``,
``observe``) is a few numpy operations over cached indices. gymnasium-robotics' joint helpers
are never called: on mujoco >= 3.12 they compare a numpy int with a pybind11 enum and fail,
so every joint is addressed through ``jnt_qposadr`` / ``jnt_dofadr`` and joint and equality
types are compared as ``int``. MuJoCo is imported here only, and only when a
:class:`Simulation` is built.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from asg.envs.fetch.layout import FINGER_TOUCH, N_BLOCKS, OBS_DIM

ASSET = Path(__file__).with_name("assets") / "fetch_blocks.xml"
N_SUBSTEPS = 20  # FetchPickAndPlace: 20 x 0.002 s = one 0.04 s env step
HOME_SLIDES = {"robot0:slide0": 0.405, "robot0:slide1": 0.48, "robot0:slide2": 0.0}
HOME_OFFSET = np.array([-0.498, 0.005, -0.431 + 0.2])  # PickAndPlace, gripper_extra_height 0.2
GRIPPER_QUAT = np.array([1.0, 0.0, 1.0, 0.0])
FINGER_JOINTS = ("robot0:r_gripper_finger_joint", "robot0:l_gripper_finger_joint")


class AssetError(RuntimeError):
    """gymnasium-robotics' Fetch meshes or XML could not be found."""


@dataclass(frozen=True)
class SimState:
    """Everything needed to put the simulation back exactly where it was.

    MuJoCo's full integration state (``mj_getState`` with ``mjSTATE_INTEGRATION``): time,
    qpos, qvel, controls, mocap poses and the solver's warm start, so a restored run repeats
    bit for bit.
    """

    values: np.ndarray

    @property
    def size(self) -> int:
        return int(self.values.shape[0])


def fetch_assets_dir() -> Path:
    """The installed gymnasium-robotics Fetch asset folder (found without importing the package)."""
    spec = importlib.util.find_spec("gymnasium_robotics")
    if spec is None or spec.origin is None:
        raise AssetError("gymnasium-robotics is not installed; the Fetch world uses its robot model")
    folder = Path(spec.origin).parent / "envs" / "assets" / "fetch"
    if not (folder / "robot.xml").is_file():
        raise AssetError(f"no Fetch robot.xml under {folder}")
    return folder


@lru_cache(maxsize=1)
def scene_xml() -> str:
    """The scene text with the gymnasium-robotics asset folder filled in."""
    return ASSET.read_text().replace("FETCH_ASSETS", str(fetch_assets_dir()))


def quat_to_euler(quat: np.ndarray) -> np.ndarray:
    """xyz (roll, pitch, yaw) angles of unit quaternions (..., 4) in MuJoCo's (w, x, y, z) order."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=float), -1, 0)
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)


class Simulation:
    """One MjModel/MjData pair of the block world with cached indices."""

    def __init__(self) -> None:
        import mujoco

        self.mj = mujoco
        self.model = mujoco.MjModel.from_xml_string(scene_xml())
        self.data = mujoco.MjData(self.model)
        m = self.model
        self.dt = N_SUBSTEPS * float(m.opt.timestep)
        self.grip_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "robot0:grip")
        self.gripper_body = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "robot0:gripper_link")
        self.block_bodies = np.array([self._id(mujoco.mjtObj.mjOBJ_BODY, f"object{i}")
                                      for i in range(N_BLOCKS)])
        joints = [self._id(mujoco.mjtObj.mjOBJ_JOINT, f"object{i}:joint") for i in range(N_BLOCKS)]
        free = int(mujoco.mjtJoint.mjJNT_FREE)
        if any(int(m.jnt_type[j]) != free for j in joints):
            raise AssetError("block joints must be free joints")
        self.block_qpos = np.array([int(m.jnt_qposadr[j]) for j in joints])
        self.block_dof = np.array([int(m.jnt_dofadr[j]) for j in joints])
        fingers = [self._id(mujoco.mjtObj.mjOBJ_JOINT, name) for name in FINGER_JOINTS]
        self.finger_qpos = np.array([int(m.jnt_qposadr[j]) for j in fingers])
        self.finger_dof = np.array([int(m.jnt_dofadr[j]) for j in fingers])
        # Each position actuator drives one finger: ctrl = qpos(finger) + gripper command.
        self.actuator_qpos = np.array([int(m.jnt_qposadr[m.actuator_trnid[i, 0]]) for i in range(m.nu)])
        self.target_sites = np.array([self._id(mujoco.mjtObj.mjOBJ_SITE, f"target{i}")
                                      for i in range(N_BLOCKS)])
        self._blocks_idx = (self.block_qpos[:, None] + np.arange(3)).ravel()
        self._state_spec = int(mujoco.mjtState.mjSTATE_INTEGRATION)
        self._state_size = int(mujoco.mj_stateSize(m, self._state_spec))
        self._home = self._go_home()
        self.home_grip = self.data.site_xpos[self.grip_site].copy()
        self._mocap_offset = self.data.mocap_pos[0] - self.home_grip
        self._velp = np.zeros(6)

    def _id(self, kind, name: str) -> int:
        idx = self.mj.mj_name2id(self.model, kind, name)
        if idx < 0:
            raise AssetError(f"the scene has no {name!r}")
        return int(idx)

    def _go_home(self) -> SimState:
        """FetchPickAndPlace's ``_env_setup``, done with integer joint addressing."""
        m, d, mj = self.model, self.data, self.mj
        for name, value in HOME_SLIDES.items():
            d.qpos[m.jnt_qposadr[self._id(mj.mjtObj.mjOBJ_JOINT, name)]] = value
        weld = int(mj.mjtEq.mjEQ_WELD)
        for i in range(m.neq):
            if int(m.eq_type[i]) == weld:
                m.eq_data[i, :7] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
        mj.mj_forward(m, d)
        d.mocap_pos[0] = HOME_OFFSET + d.site_xpos[self.grip_site]
        d.mocap_quat[0] = GRIPPER_QUAT
        for _ in range(10):
            mj.mj_step(m, d, nstep=N_SUBSTEPS)
        return self.get_state()

    # -- state -----------------------------------------------------------------------------
    def get_state(self) -> SimState:
        """A copy of the full simulation state."""
        values = np.empty(self._state_size)
        self.mj.mj_getState(self.model, self.data, values, self._state_spec)
        return SimState(values)

    def set_state(self, state: SimState) -> None:
        """Restore a state from :meth:`get_state` (and recompute derived quantities)."""
        if state.size != self._state_size:
            raise ValueError(f"a state of {state.size} values does not fit this model ({self._state_size})")
        self.mj.mj_resetData(self.model, self.data)
        self.mj.mj_setState(self.model, self.data, state.values, self._state_spec)
        self.mj.mj_forward(self.model, self.data)

    def reset_home(self) -> None:
        """The arm at its home pose, fingers closed, blocks parked on the floor."""
        self.set_state(self._home)

    def move_gripper(self, target: np.ndarray, steps: int) -> None:
        """Drive the grip site towards ``target`` through the mocap weld for ``steps`` env steps."""
        self.data.mocap_pos[0] = np.asarray(target) + self._mocap_offset
        for _ in range(steps):
            self.mj.mj_step(self.model, self.data, nstep=N_SUBSTEPS)

    def place_blocks(self, positions: np.ndarray, held: int | None = None) -> None:
        """Put the blocks at ``positions`` (4, 3), upright and still; close the fingers on ``held``."""
        d = self.data
        for b in range(N_BLOCKS):
            a = self.block_qpos[b]
            d.qpos[a:a + 3] = positions[b]
            d.qpos[a + 3:a + 7] = (1.0, 0.0, 0.0, 0.0)
            d.qvel[self.block_dof[b]:self.block_dof[b] + 6] = 0.0
        if held is not None:
            d.qpos[self.finger_qpos] = FINGER_TOUCH - 0.0005
            d.qvel[self.finger_dof] = 0.0
            d.ctrl[:] = 0.0  # position targets at 0: the fingers squeeze the block
        self.mj.mj_forward(self.model, d)

    def settle(self, steps: int) -> None:
        """Let the world come to rest for ``steps`` env steps without moving the mocap.

        Ends with ``mj_forward`` so positions are those of the final state, exactly as after
        :meth:`set_state` (after ``mj_step`` they lag one substep behind).
        """
        for _ in range(steps):
            self.mj.mj_step(self.model, self.data, nstep=N_SUBSTEPS)
        self.mj.mj_forward(self.model, self.data)

    # -- control and observation -----------------------------------------------------------
    def apply_action(self, action: np.ndarray) -> None:
        """Fetch's control: mocap displaced by 0.05 * (dx, dy, dz), fingers by the 4th value."""
        d = self.data
        d.ctrl[:] = d.qpos[self.actuator_qpos] + action[3]
        d.mocap_pos[0] = d.xpos[self.gripper_body] + 0.05 * action[:3]
        d.mocap_quat[0] = d.xquat[self.gripper_body] + GRIPPER_QUAT
        self.mj.mj_step(self.model, d, nstep=N_SUBSTEPS)

    def blocks(self) -> np.ndarray:
        """Block positions (4, 3), a copy."""
        return self.data.qpos[self._blocks_idx].reshape(N_BLOCKS, 3)

    def observe(self) -> np.ndarray:
        """The 70-d state vector (layout in ``layout.py``)."""
        m, d, dt = self.model, self.data, self.dt
        blocks = self.blocks()
        grip = d.site_xpos[self.grip_site]
        self.mj.mj_objectVelocity(m, d, self.mj.mjtObj.mjOBJ_SITE, self.grip_site, self._velp, 0)
        grip_vel = self._velp[3:] * dt
        quats = d.qpos[(self.block_qpos[:, None] + np.arange(3, 7)).ravel()].reshape(N_BLOCKS, 4)
        vel = d.qvel[(self.block_dof[:, None] + np.arange(6)).ravel()].reshape(N_BLOCKS, 6) * dt
        obs = np.empty(OBS_DIM)
        obs[0:12] = blocks.ravel()
        obs[12:15] = grip
        obs[15:17] = d.qpos[self.finger_qpos]
        obs[17:20] = grip_vel
        obs[20:22] = d.qvel[self.finger_dof] * dt
        obs[22:34] = (blocks - grip).ravel()
        obs[34:46] = quat_to_euler(quats).ravel()
        obs[46:58] = (vel[:, :3] - grip_vel).ravel()
        obs[58:70] = vel[:, 3:].ravel()
        return obs

    def show_goal(self, goal: np.ndarray) -> None:
        """Move the four goal markers (rendering only)."""
        self.model.site_pos[self.target_sites] = np.asarray(goal).reshape(N_BLOCKS, 3)
        self.mj.mj_forward(self.model, self.data)
