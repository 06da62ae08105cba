"""Helpers every layer may use: atomic writes, path checks, URLs, worker pools, integrity."""
