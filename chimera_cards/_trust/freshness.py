"""Time in review statements: when an approval expires, and how two approvals are ordered.

An approval may carry ``expires`` (signed, so only the reviewer can vouch for how long it holds:
a channel that keeps serving old bytes cannot keep them usable past that moment) and a per-name
``sequence`` (signed, so the channel cannot reorder approvals). Two approvals are ordered by
``(sequence, signed time)``: a statement made before sequences existed has sequence 0 and is
ordered by the time it signed, so every sequenced approval is newer than every older one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from chimera_cards.errors import UsageError

# JSON numbers above this lose precision in some readers; no name gets that many approvals.
MAX_SEQUENCE = 2**53 - 1
# A pattern, compiled on first use (re keeps it): check loads this module and reads no duration.
_DURATION = r"\s*(\d{1,6})\s*([smhdw])\s*"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
# A hundred years: anything longer is a typo, not a policy.
_MAX_SECONDS = 100 * 365 * 86400

# (sequence, microseconds since the epoch of the signed time): compared as a tuple.
Rank = tuple[int, int]


def parse_duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s`` or ``2w`` as a duration.

    Args:
        text: a whole number and one unit letter.
    Returns:
        The duration (above zero, at most a hundred years).
    Raises:
        UsageError: anything else.
    """
    match = re.fullmatch(_DURATION, text or "")
    if match is None:
        raise UsageError(
            f"{text!r} is not a duration: give a whole number and s, m, h, d or w (e.g. 90d)"
        )
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if not 0 < seconds <= _MAX_SECONDS:
        raise UsageError(f"{text!r}: a duration must be above zero and at most 100 years")
    return timedelta(seconds=seconds)


def parse_time(text: object) -> datetime | None:
    """An ISO 8601 UTC time as written in a statement (``2026-12-01T19:33:35Z``, with or without
    fractions of a second), or None when it is not one (a statement holding it does not count).
    """
    if not isinstance(text, str) or not text.endswith("Z") or len(text) > 40:
        return None
    try:
        value = datetime.fromisoformat(text[:-1])
    except ValueError:
        return None
    if value.tzinfo is not None:
        return None  # "...+00:00Z" is not a form anyone writes
    return value.replace(tzinfo=UTC)


def format_time(value: datetime) -> str:
    """``value`` in UTC as ``YYYY-MM-DDTHH:MM:SSZ`` (whole seconds)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def expiry_after(duration: timedelta, now: datetime | None = None) -> str:
    """The expiry to sign for an approval that holds for ``duration`` from ``now``."""
    return format_time((now or datetime.now(UTC)) + duration)


def rank_of(sequence: int, signed_at: str) -> Rank:
    """How an approval orders against others of the same name: by sequence, then signed time."""
    when = parse_time(signed_at)
    micros = 0 if when is None else int(when.timestamp() * 1_000_000)
    return (sequence, micros)


def kth_rank(ranks: Iterable[Rank], k: int) -> Rank | None:
    """The rank at which at least ``k`` distinct approvals agree: the k-th highest of one rank
    per reviewer, or None with fewer than ``k``. With a threshold of two, one reviewer alone
    cannot move a name forward or back."""
    ordered = sorted(ranks, reverse=True)
    if k < 1 or len(ordered) < k:
        return None
    return ordered[k - 1]
