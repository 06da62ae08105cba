"""Write a file so that readers see the old content or the new, never half of it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``target``, then rename it over ``target``.

    The temp file is in the same directory so the rename stays on one filesystem; it is removed
    if anything (including Ctrl-C) stops the write.
    """
    target = Path(target)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
