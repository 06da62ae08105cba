"""Other scanners' results per version (the SARIF plug-ins), and their stored configurations."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from chimera_cards._store.audit import canonical_json
from chimera_cards._store.connection import utc_now
from chimera_cards._store.rows import Version
from chimera_cards._store.search import SearchMixin

# Store settings under this prefix each hold one scanner's configuration (JSON), by name.
SCANNER_SETTING_PREFIX = "scanner:"


def _unreadable(scanner: str) -> list[dict]:
    # Findings that cannot be read count as an error: a version must never look clean by accident.
    return [
        {
            "rule": f"{scanner}/unreadable-findings",
            "severity": "error",
            "message": f"stored findings of scanner {scanner} are not readable",
            "line": None,
            "path": None,
            "scanner": scanner,
        }
    ]


def _loads(text: str, scanner: str) -> list[dict]:
    try:
        value = json.loads(text)
    except ValueError:
        return _unreadable(scanner)
    if not isinstance(value, list) or not all(isinstance(f, dict) for f in value):
        return _unreadable(scanner)
    return value


class ScannersMixin(SearchMixin):
    """Rows of ``scanner_results`` and the scanner settings."""

    def put_scanner_result(self, conn: sqlite3.Connection, version: Version, run: Mapping) -> None:
        """Store one scanner's run on a version (replacing an earlier run of that scanner) and
        record it in the audit log (call inside transaction()).

        Args:
            conn: the transaction's connection.
            version: the version scanned.
            run: ``ScannerRun.to_dict()``: scanner, tool, tool_version, status, reason,
                findings (each with its id).
        """
        scanner = str(run["scanner"])
        findings = list(run.get("findings") or [])
        conn.execute(
            "INSERT OR REPLACE INTO scanner_results (version_id, scanner, tool, tool_version, "
            "status, reason, findings, scanned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                version.id,
                scanner,
                run.get("tool"),
                run.get("tool_version"),
                run["status"],
                str(run.get("reason") or ""),
                canonical_json(findings),
                utc_now(),
            ),
        )
        counts = {s: sum(f.get("severity") == s for f in findings) for s in ("error", "warning")}
        self.append_audit(
            conn,
            "scan",
            version.name,
            version.sha256,
            {
                "scanner": scanner,
                "tool": run.get("tool"),
                "tool_version": run.get("tool_version"),
                "status": run["status"],
                **({"reason": run["reason"]} if run.get("reason") else {}),
                "errors": counts["error"],
                "warnings": counts["warning"],
                # Ids of what holds or warns: the log says what a reviewer later accepted.
                "findings": [
                    f.get("id") for f in findings if f.get("severity") in ("error", "warning")
                ],
            },
        )

    def scanner_results(self, version_id: int) -> list[dict]:
        """Every scanner's run on a version, by scanner name: scanner, tool, tool_version,
        status, reason, findings (each with ``scanner``), scanned_at."""
        rows = self._conn.execute(
            "SELECT scanner, tool, tool_version, status, reason, findings, scanned_at "
            "FROM scanner_results WHERE version_id = ? ORDER BY scanner",
            (version_id,),
        ).fetchall()
        return [
            {
                "scanner": scanner,
                "tool": tool,
                "tool_version": tool_version,
                "status": status,
                "reason": reason,
                "findings": [{**f, "scanner": scanner} for f in _loads(text, scanner)],
                "scanned_at": scanned_at,
            }
            for scanner, tool, tool_version, status, reason, text, scanned_at in rows
        ]

    def all_scanner_results(self) -> list[tuple[str, str, str, str, list[dict]]]:
        """Every stored scanner run as (name, sha256, scanner, status, findings), for verify."""
        rows = self._conn.execute(
            "SELECT v.name, v.sha256, s.scanner, s.status, s.findings FROM scanner_results s "
            "JOIN versions v ON v.id = s.version_id ORDER BY v.id, s.scanner"
        ).fetchall()
        return [(n, sha, sc, st, _loads(text, sc)) for n, sha, sc, st, text in rows]

    def scanner_findings(self, version_id: int) -> list[dict]:
        """Every scanner's findings on a version, in one list (each with ``scanner``)."""
        return [f for run in self.scanner_results(version_id) for f in run["findings"]]

    def scanner_settings(self) -> dict[str, str]:
        """The scanners configured in this store: name -> settings (JSON text)."""
        rows = self._conn.execute(
            "SELECT key, value FROM review_settings WHERE key >= ? AND key < ? ORDER BY key",
            (SCANNER_SETTING_PREFIX, SCANNER_SETTING_PREFIX[:-1] + chr(ord(":") + 1)),
        ).fetchall()
        return {key[len(SCANNER_SETTING_PREFIX) :]: value for key, value in rows}

    def delete_setting(self, key: str) -> bool:
        """Forget a setting (call inside transaction()); False if it was not set."""
        return self._conn.execute("DELETE FROM review_settings WHERE key = ?", (key,)).rowcount > 0
