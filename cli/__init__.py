"""asg.cli."""
