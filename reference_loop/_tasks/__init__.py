"""Tasks: loading a task folder and the sample tasks that ship with the loop."""
