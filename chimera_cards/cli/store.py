"""CLI commands for store (filled in by its issue)."""

COMMANDS: list = []
