"""Importing: fetch, lint and store a source's skills; import hooks, lockfile and updates."""
