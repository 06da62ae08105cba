"""CLI commands for demo (filled in by its issue)."""

COMMANDS: list = []
