"""Environments of asg: the ASGRL grid domains and the Fetch block world.

Importing this package registers every Gymnasium id in the ``asg/`` namespace.
MuJoCo is imported lazily (entry points are strings), so grid work needs no MuJoCo.
"""
from asg.envs.registration import register_envs

register_envs()
