"""asg.learning."""
