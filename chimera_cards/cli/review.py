"""CLI commands for review (filled in by its issue)."""

COMMANDS: list = []
