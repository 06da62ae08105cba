"""Running processes: process groups, sandbox, stopping, printable text."""
