"""What a look refuses to read of an attempt's files: one too large or sparse, too many bytes
changed in all, too many new files.

A look hashes every file an attempt added or changed. ``truncate -s 64G`` makes a file that costs
nothing to write and minutes to read (zeros all the way); a million new files fill the private
index. Such files are refused from their ``lstat`` alone, never opened: the look removes a new
one and writes a changed one back from the snapshot (the attempt's revert would undo both
anyway), and reports each (``records.Refused``). The first snapshot (the user's own tree) is never
refused, nor a file the attempt did not touch.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

GIB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """How much of an attempt's change a look reads."""

    file_bytes: int = GIB  # one file larger than this
    # A file at least this large with under 1/sparse_share of it allocated (a hole).
    sparse_from_bytes: int = 256 << 20
    sparse_share: int = 16
    changed_bytes: int = 8 * GIB  # every added or changed file, in path order
    new_files: int = 1_000_000


def refuse(
    found: Sequence[tuple[bytes, os.stat_result, bool]], limits: Limits
) -> list[tuple[bytes, str]]:
    """The files of ``found`` (path, its ``lstat``, whether the snapshot lacks it; files and
    symlinks, in path order) a look must not read, each with why."""
    out: list[tuple[bytes, str]] = []
    total = new = 0
    for path, st, is_new in found:
        size = st.st_size
        if is_new:
            new += 1
            if new > limits.new_files:
                out.append((path, f"one of more than {limits.new_files:,} new files"))
                continue
        if not stat.S_ISREG(st.st_mode):
            continue  # a link's size is its target's name
        if size > limits.file_bytes:
            out.append((path, f"{size:,} bytes: over the {limits.file_bytes:,} a look reads"))
            continue
        allocated = st.st_blocks * 512
        if size >= limits.sparse_from_bytes and allocated * limits.sparse_share < size:
            out.append((path, f"sparse: {size:,} bytes with {allocated:,} written"))
            continue
        total += size
        if total > limits.changed_bytes:
            out.append((path, f"over the {limits.changed_bytes:,} bytes a look reads in all"))
            total -= size
    return out
