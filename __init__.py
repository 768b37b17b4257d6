"""asg: turn an approximate symbolic model into a working agent.

The distribution maps its folders to ``asg.planning``, ``asg.envs``, ``asg.learning``,
``asg.cli`` and ``asg.pddl_models`` (see ``setup.cfg``).
"""

__version__ = "0.1.0"
