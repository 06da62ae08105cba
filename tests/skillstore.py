"""A real store with skills in every state, for the run-time tests (MCP server, hook, provider, prompt).

``SkillWorld(tmp_path)`` makes a home, a store and a reviewer key ``alice`` (trusted), all through
the real CLI. ``world.add(name, files, approve=...)`` writes a multi-file skill, imports it held
for review (``--taint``) and, unless ``approve=False``, signs an approval with alice's key: the
version is active only through that signature, so removing alice from the trust list revokes it.
``world.env`` is the environment for subprocesses (``chimera-cards serve``, ``hook claude``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path

from click.testing import CliRunner, Result
from conftest import make_skill

from chimera_cards.cli import main


class SkillWorld:
    """A home, a store, a trusted reviewer key, and helpers that drive the real CLI."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = Path(tmp_path)
        self.home = self.root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.cc = self.root / "cc"
        self.store = self.cc / "cards.db"
        self.src = self.root / "src"
        self.project = self.root / "project"
        self.project.mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "CHIMERA_CARDS_HOME": str(self.cc),
            "XDG_CONFIG_HOME": "",
            "XDG_DATA_HOME": "",
            "CLAUDE_CONFIG_DIR": "",
            "CODEX_HOME": "",
        }
        self.cli("keys", "generate", "alice")
        self.key = self.cc / "keys" / "alice.key"

    def cli(self, *args: object, ok: bool = True) -> Result:
        """Run ``chimera-cards ARGS`` in this process, in this world's environment."""
        result = CliRunner().invoke(main, [str(a) for a in args], env=self.env)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        if ok:
            assert result.exit_code == 0, (args, result.output)
        return result

    def add(
        self,
        name: str,
        files: dict | None = None,
        *,
        approve: bool = True,
        taint: bool = True,
    ) -> str:
        """Write skill ``name`` (SKILL.md plus ``files``), import it, approve it; its digest."""
        folder = make_skill(self.src, name, files)
        args = ["import", folder, "--json"] + (["--taint"] if taint else [])
        data = json.loads(self.cli(*args).stdout)
        if approve:
            self.cli("approve", name, "--key", self.key, "--sha256", data["sha256"])
        return data["digest"]

    def files_of(self, name: str) -> dict[str, bytes]:
        """The authored files of skill ``name`` (path -> bytes), as written into ``src``."""
        folder = self.src / name
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }

    def tamper_file(self, name: str, path: str, new: bytes) -> None:
        """Overwrite the stored bytes of one file of ``name``, as an attacker with the file would."""
        sha = hashlib.sha256((self.src / name / path).read_bytes()).hexdigest()
        conn = sqlite3.connect(self.store)
        try:
            conn.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (new, sha))
            conn.commit()
        finally:
            conn.close()

    def install(self, *names: str, to: Path | None = None) -> Path:
        """``chimera-cards install NAMES --to DIR`` (default: the project's .claude/skills)."""
        target = to or self.project / ".claude" / "skills"
        self.cli("install", *names, "--to", target)
        return target
