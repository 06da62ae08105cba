"""Row types the table families share: ``Version`` and its columns."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from chimera_cards._store.connection import _loads_or_raw
from chimera_cards._store.schema import _TEXT_FIELDS
from chimera_cards._util.integrity import digest_keys

STATUSES = ("active", "pending", "rejected", "retired")
# The status a previously active version keeps as history when another one becomes active.
SUPERSEDED = "retired"
PROVENANCES = ("clean", "tainted")


@dataclass
class Version:
    """One stored version of a card: its bytes, origin, status and findings."""

    id: int
    name: str
    sha256: str
    origin: str
    final_url: str | None
    imported_at: str
    provenance: str
    status: str
    reason: str
    findings: list[dict] = field(default_factory=list)
    digest: str = ""  # the bundle digest (see bundle.py); equals sha256 unless stored pre-bundles
    skill_sha256: str = ""  # SHA-256 of the SKILL.md bytes
    source: dict = field(default_factory=dict)  # how it was fetched: kind, ref, commit, path

    def to_dict(self) -> dict:
        return digest_keys(asdict(self))

    @classmethod
    def from_row(cls, row: Sequence) -> Version:
        return cls(
            id=row[0],
            name=row[1],
            sha256=row[2],
            origin=row[3],
            final_url=row[4],
            imported_at=row[5],
            provenance=row[6],
            status=row[7],
            reason=row[8],
            findings=_findings(row[9]),
            digest=row[10] or row[2],
            skill_sha256=row[11] or row[2],
            source=_loads_or_raw(row[12]) if row[12] else {},
        )


def _checked_version(row: Sequence) -> Version:
    """Version.from_row for a row that may have been written by hand: every text column must
    hold text (SQLite lets any column hold a BLOB or a number)."""
    version = Version.from_row(row)
    for name in _TEXT_FIELDS:
        if type(getattr(version, name)) is not str:
            raise ValueError(f"{name} is not text")
    if version.final_url is not None and type(version.final_url) is not str:
        raise ValueError("final_url is not text")
    return version


def _findings(text: str | None) -> list[dict]:
    # Unreadable findings count as an error finding: a version must never look clean by accident.
    try:
        value = json.loads(text or "[]")
    except ValueError:
        value = None
    if isinstance(value, list):
        return value
    return [
        {
            "rule": "unreadable-findings",
            "severity": "error",
            "message": "stored lint findings are not readable",
        }
    ]


_VERSION_COLUMNS = (
    "id, name, sha256, origin, final_url, imported_at, provenance, status, reason, findings, "
    "digest, skill_sha256, source"
)
# The same, with empty findings and source: parsing them is most of the cost of a row.
_VERSION_COLUMNS_BARE = (
    "id, name, sha256, origin, final_url, imported_at, provenance, status, reason, '[]', "
    "digest, skill_sha256, '{}'"
)
