"""The patch review's rule set: every family of rules the loop reads an attempt's patch with.

A family lives in a module of its own (``reach``: code that reaches into the verifier;
``cheats``: code that finds out what a test expects instead of computing it) and is added here;
a caller that wants another set passes its own to ``review_patch`` (or
``LoopOptions.review_rules``).
"""

from __future__ import annotations

from reference_loop._verdict import cheats, reach
from reference_loop._verdict.patchreview import Rule


def default_rules() -> tuple[Rule, ...]:
    """The rules every patch is read with."""
    return (*reach.RULES, *cheats.RULES)
