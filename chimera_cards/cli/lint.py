"""CLI commands for lint (filled in by its issue)."""

COMMANDS: list = []
