"""Row types the table families share: ``Version`` and its columns."""

from __future__ import annotations

import json
from collections.abc import Sequence

from chimera_cards._store.connection import _loads_or_raw
from chimera_cards._store.schema import _TEXT_FIELDS
from chimera_cards._util.integrity import digest_keys
from chimera_cards._util.records import asdict, field, record

STATUSES = ("active", "pending", "rejected", "retired")
# The status a previously active version keeps as history when another one becomes active.
SUPERSEDED = "retired"
PROVENANCES = ("clean", "tainted")


@record
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
        # SQLite lets any column hold any type: a row edited by hand is read as text (and
        # ``verify`` reports it), so no command fails on it.
        sha = _text(row[2])
        return cls(
            id=row[0],
            name=_text(row[1]),
            sha256=sha,
            origin=_text(row[3]),
            final_url=None if row[4] is None else _text(row[4]),
            imported_at=_text(row[5]),
            provenance=_text(row[6]),
            status=_text(row[7]),
            reason=_text(row[8]),
            findings=_findings(row[9]),
            digest=_text(row[10]) or sha,
            skill_sha256=_text(row[11]) or sha,
            source=_source(row[12]),
        )


def _text(value: object) -> str:
    if type(value) is str:
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def _source(value: object) -> dict:
    if not value:
        return {}
    if not isinstance(value, (str, bytes)):
        return {"value": value}
    return _loads_or_raw(value)  # type: ignore[arg-type]


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


_UNREADABLE = {
    "rule": "unreadable-findings",
    "severity": "error",
    "message": "stored lint findings are not readable",
}


def _findings(text: object) -> list[dict]:
    # Unreadable findings count as an error finding: a version must never look clean by accident.
    try:
        value = json.loads(text or "[]") if isinstance(text, (str, bytes, type(None))) else None
    except (ValueError, TypeError):
        value = None
    if not isinstance(value, list):
        return [dict(_UNREADABLE)]
    if all(_is_finding(item) for item in value):
        return value
    # Any item that is no finding (a number, null, a field of the wrong type) is unreadable.
    return [item if _is_finding(item) else dict(_UNREADABLE) for item in value]


def _is_finding(item: object) -> bool:
    if not isinstance(item, dict):
        return False
    if not all(isinstance(item.get(k), str) for k in ("rule", "severity", "message")):
        return False
    line, path = item.get("line"), item.get("path")
    line_ok = line is None or (isinstance(line, int) and not isinstance(line, bool))
    return line_ok and (path is None or isinstance(path, str))


_VERSION_COLUMNS = (
    "id, name, sha256, origin, final_url, imported_at, provenance, status, reason, findings, "
    "digest, skill_sha256, source"
)
# The same, with empty findings and source: parsing them is most of the cost of a row.
_VERSION_COLUMNS_BARE = (
    "id, name, sha256, origin, final_url, imported_at, provenance, status, reason, '[]', "
    "digest, skill_sha256, '{}'"
)
