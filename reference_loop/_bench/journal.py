"""A bench's journal: one JSON line per finished cell, so a re-run resumes where it stopped.

``bench --out results.json`` appends every finished cell (task x arm x seed) to
``results.json.cells.jsonl`` the moment it ends, flushed to disk, with the digest of the bench's
settings, the code digest and the slice: the same things ``bench merge`` checks. Re-running the
same command with the same ``--out`` reads the journal and runs only the cells it lacks; the
result summarises the journal's cells and the new ones exactly as one uninterrupted run would.

A journal made with other settings, other code or another slice is refused (its numbers are not
comparable); a torn last line (the process was killed mid-write) is dropped, anything else that
does not parse is refused. A cell that an error no retry changes stopped (no API key, ...) is not
journaled: fixing the cause and re-running runs it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from reference_loop._bench.shard import Shard
from reference_loop.errors import LoopUsageError

Cell = tuple[str, str, int]  # (task, arm, seed)


class JournalRefused(LoopUsageError):
    """A journal that cannot be resumed: other settings, code or slice, or a corrupt line."""


def journal_path(out_path: Path) -> Path:
    """Where the journal of the bench writing ``out_path`` lives."""
    return out_path.with_name(out_path.name + ".cells.jsonl")


def settings_digest(settings: Mapping[str, Any]) -> str:
    """A digest of a bench's settings (``runner.bench_settings``), canonical JSON."""
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Journal:
    """The cells a bench already finished, and the open file new ones are appended to."""

    path: Path
    settings: str  # settings_digest of the bench
    code_version: str
    shard: str  # "K/N" or "" for the whole grid
    finished: dict[Cell, dict[str, Any]] = field(default_factory=dict)  # RunOutcome dicts
    _file: IO[str] | None = None

    @classmethod
    def open(
        cls, path: Path, settings: Mapping[str, Any], code_version: str, shard: Shard | None
    ) -> Journal:
        """Read ``path`` (when it exists) and open it for appending.

        Raises:
            JournalRefused: the journal belongs to another bench or a line is corrupt.
        """
        journal = cls(path, settings_digest(settings), code_version, str(shard or ""))
        keep = journal._read()
        try:
            if path.exists() and keep < path.stat().st_size:
                os.truncate(path, keep)  # a torn last line: appending after it would corrupt
            journal._file = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise LoopUsageError(f"cannot write {path}: {exc.strerror or exc}") from None
        return journal

    def _read(self) -> int:
        """Load the finished cells; returns the byte length of the whole lines read."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise LoopUsageError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        whole = data.rfind(b"\n") + 1  # bytes after the last newline: a torn write, dropped
        for number, raw in enumerate(data[:whole].splitlines(), start=1):
            where = f"{self.path} line {number}"
            try:
                line = json.loads(raw)
                run = line["run"]
                cell = (str(run["task"]), str(run["arm"]), int(run["seed"]))
                mine = (line["settings"], line["code_version"], line["shard"])
            except (ValueError, KeyError, TypeError) as exc:
                raise JournalRefused(f"refusing to resume from {where}: not a cell ({exc})") from (
                    None
                )
            if mine[0] != self.settings:
                raise JournalRefused(
                    f"refusing to resume from {self.path}: it was made with other settings "
                    "(remove it or choose another --out)"
                )
            if mine[1] != self.code_version:
                raise JournalRefused(
                    f"refusing to resume from {self.path}: it was made by other code "
                    f"({mine[1]}, this is {self.code_version}); remove it or choose another --out"
                )
            if mine[2] != self.shard:
                raise JournalRefused(
                    f"refusing to resume from {self.path}: it holds slice {mine[2] or 'all'}, "
                    f"this run is slice {self.shard or 'all'}"
                )
            self.finished[cell] = run
        return whole

    def append(self, run: Mapping[str, Any]) -> None:
        """Record a finished cell (a ``RunOutcome.to_dict()``), on disk before this returns."""
        if run.get("stopped_by") or self._file is None:
            return
        line = {
            "settings": self.settings,
            "code_version": self.code_version,
            "shard": self.shard,
            "run": dict(run),
        }
        self._file.write(json.dumps(line, separators=(",", ":")) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.finished[(str(run["task"]), str(run["arm"]), int(run["seed"]))] = dict(run)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
