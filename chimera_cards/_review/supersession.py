"""Supersession as signed data: which version of a name is newer, decided by what reviewers
signed, never by the order in which bytes reached this store.

Every approval carries a per-name ``sequence`` (one more than any this store has seen for the
name) and names the digest it ``supersedes`` (the name's active version when it was signed);
an approval that moves a name back says so (``downgrade``). A version's **rank** is the
(sequence, signed time) at which ``threshold`` distinct trusted reviewers approved it (statements
made before sequences existed rank by their signed time, below every sequenced one). A name's
**floor** is the highest rank any other version of it reached while in use (active, or retired
after use), and the highest rank ever activated here, which the store keeps (``name_floor``) so
that removing a key, letting an approval expire or retiring a version never lowers it.

A version is **older** — a downgrade — when its rank is not above the floor, or when an approval
of a version in use, newer than it, names it as superseded. An older version is never activated
by an import, an update, a trust change or a shipped ``approvals.jsonl``, whatever the channel:
it is held pending, and only fresh approvals that say so (``approve --allow-downgrade``, by as
many reviewers as the threshold) move the name back. This is TUF's rollback rule, with the
name's signed history standing in for the client's remembered version numbers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chimera_cards._store.facade import Store
from chimera_cards._store.rows import Version
from chimera_cards._trust.freshness import Rank, kth_rank, rank_of
from chimera_cards._trust.policy import TrustedKey, Verdict, evaluate_remembered
from chimera_cards.errors import ChimeraError


class DowngradeError(ChimeraError):
    """Approving this version would move its name back to an older one, and the reviewer did
    not say so (``approve --allow-downgrade``); nothing was signed."""


# Versions that were in use: their ranks make the floor. A pending version (never in use, or
# lint-blocked) or a rejected one does not hold a name up.
HISTORY_STATUSES = ("active", "retired")


@dataclass(frozen=True)
class Standing:
    """Where one version stands in its name's signed history."""

    name: str
    sha256: str
    rank: Rank | None  # the rank its own trusted approvals reach (None: fewer than threshold)
    floor: Rank | None  # the highest rank of another version in use (or remembered)
    floor_sha256: str | None  # which version holds the floor
    superseded_by: str | None  # a newer version in use whose approval names this one

    @property
    def older(self) -> bool:
        """A downgrade: not newer than what the name has already been."""
        if self.superseded_by is not None:
            return True
        return self.rank is not None and self.floor is not None and self.rank <= self.floor

    def reason(self) -> str:
        """Why it is a downgrade, in a line (empty when it is not one)."""
        if not self.older:
            return ""
        if self.superseded_by is not None:
            return (
                f"downgrade: {self.name} {self.sha256[:12]} is superseded by "
                f"{self.superseded_by[:12]} (a signed approval says so); moving back takes "
                "approve --allow-downgrade"
            )
        assert self.rank is not None and self.floor is not None and self.floor_sha256
        return (
            f"downgrade: {self.name} {self.sha256[:12]} was approved at sequence {self.rank[0]}, "
            f"not after {self.floor_sha256[:12]} (sequence {self.floor[0]}); moving back "
            "takes approve --allow-downgrade"
        )

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "sha256": self.sha256,
            "rank": list(self.rank) if self.rank else None,
            "floor": list(self.floor) if self.floor else None,
            "floor_sha256": self.floor_sha256,
            "superseded_by": self.superseded_by,
            "older": self.older,
            "reason": self.reason(),
        }


def name_verdicts(
    store: Store, name: str, trusted: Sequence[TrustedKey], threshold: int
) -> dict[str, Verdict]:
    """The verdict on every version of ``name`` that has statements, by SHA-256 (through the
    store's memo, so a name's history costs no signature check it already made)."""
    signed = store.statements_of_name(name)
    items = [(name, sha, envelopes) for sha, envelopes in signed.items()]
    # Read through the memo, not written to it: the caller may hold only a read snapshot.
    verdicts, _ = evaluate_remembered(store, items, trusted, threshold)
    return {sha: v for (_, sha, _), v in zip(items, verdicts, strict=True)}


def version_rank(verdict: Verdict | None, threshold: int) -> Rank | None:
    """The rank ``threshold`` distinct trusted approvals of one version agree on."""
    if verdict is None:
        return None
    return kth_rank((rank_of(a["sequence"], a["time"]) for a in verdict.approvals), threshold)


def standing(
    store: Store,
    version: Version,
    trusted: Sequence[TrustedKey],
    threshold: int,
    *,
    verdicts: Mapping[str, Verdict] | None = None,
) -> Standing:
    """Where ``version`` stands against every other version of its name.

    Args:
        store: the open store (inside the caller's snapshot or transaction).
        version: the version to place.
        trusted: the trust list; threshold: approvals needed (both as the caller read them).
        verdicts: ``name_verdicts`` of the name, when the caller has them.
    Returns:
        Its Standing; ``older`` says whether activating it would move the name back.
    """
    name, sha = version.name, version.sha256
    verdicts = name_verdicts(store, name, trusted, threshold) if verdicts is None else verdicts
    statuses = {v.sha256: v.status for v in store.versions(name=name)}
    own = version_rank(verdicts.get(sha), threshold)
    floor: Rank | None = None
    floor_sha: str | None = None
    remembered = store.name_floor(name)
    if remembered is not None and remembered[2] != sha:
        floor, floor_sha = (remembered[0], remembered[1]), remembered[2]
    superseded_by = None
    for other, verdict in verdicts.items():
        if other == sha or statuses.get(other) not in HISTORY_STATUSES:
            continue
        rank = version_rank(verdict, threshold)
        if rank is not None and (floor is None or rank > floor):
            floor, floor_sha = rank, other
        for approval in verdict.approvals:
            if approval.get("supersedes") != sha:
                continue
            if own is None or rank_of(approval["sequence"], approval["time"]) > own:
                superseded_by = other
    return Standing(name, sha, own, floor, floor_sha, superseded_by)


def next_sequence(store: Store, name: str, verdicts: Mapping[str, Verdict]) -> int:
    """The sequence a new approval of ``name`` signs: one more than any trusted approval of any
    of its versions, and than the floor the store remembers (so a new approval is always the
    newest, and a sequence inflated by a trusted key costs nothing but larger numbers)."""
    highest = 0
    remembered = store.name_floor(name)
    if remembered is not None:
        highest = remembered[0]
    for verdict in verdicts.values():
        for approval in verdict.approvals:
            highest = max(highest, approval["sequence"])
    return highest + 1


def raise_floor(
    store: Store, conn: sqlite3.Connection, name: str, sha256: str, rank: Rank | None
) -> None:
    """Remember that ``name`` reached ``rank`` with ``sha256`` active (only ever raised)."""
    if rank is not None:
        store.raise_name_floor(conn, name, rank[0], rank[1], sha256)


def hold_if_older(
    store: Store,
    conn: sqlite3.Connection,
    version: Version,
    trusted: Sequence[TrustedKey],
    threshold: int,
) -> Version | None:
    """After an import made ``version`` active (a clean path import supersedes the active
    version), undo that when the signed history says it is older: it is held pending as a
    downgrade and the version it superseded is active again.

    Returns:
        The version as it is now when it was held; None when nothing changed.
    """
    if version.status != "active":
        return None
    superseded = store.last_retired(version.name, reason=f"superseded by {version.sha256[:12]}")
    if superseded is None:
        return None
    place = standing(store, version, trusted, threshold)
    if not place.older:
        return None
    store.set_status(conn, version.name, version.sha256, "pending", place.reason())
    store.set_status(
        conn,
        version.name,
        superseded.sha256,
        "active",
        f"restored: {version.sha256[:12]} is older and was held as a downgrade",
    )
    return store.version(version.name, version.sha256)
