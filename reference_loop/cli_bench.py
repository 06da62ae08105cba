"""Moved to ``reference_loop.cli.bench``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.cli.bench import (
    bench_cmd,
    check_writable_dir,
    default_jobs,
    owned_stream,
    write_json_file,
)

__all__ = [
    "bench_cmd",
    "check_writable_dir",
    "default_jobs",
    "owned_stream",
    "write_json_file",
]
