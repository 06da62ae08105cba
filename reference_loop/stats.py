"""Moved to ``reference_loop.bench.stats``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.bench.stats import (
    PairedComparison,
    mcnemar_exact_p,
    newcombe_paired_interval,
    paired_compare,
    wilson_interval,
)

__all__ = [
    "PairedComparison",
    "mcnemar_exact_p",
    "newcombe_paired_interval",
    "paired_compare",
    "wilson_interval",
]
