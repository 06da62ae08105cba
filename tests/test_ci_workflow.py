"""The GitHub Actions workflow in docs/install.md: every ``run:`` line, in order, as the runner runs
it (``bash --noprofile --norc -eo pipefail``), in a repository laid out as the team workflow
leaves it (exported bundles, trust file, lockfile, installed skills) and a fresh virtualenv that
the workflow's own ``pip install`` line fills from this checkout. Green as committed; red, with
the drifted file in the SARIF log, once an installed file is edited."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import SkillWorld

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "install.md"

pytestmark = pytest.mark.slow


def workflow() -> dict:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text("utf-8"), re.S)
    (text,) = [b for b in blocks if b.startswith("name: skills\n")]
    return yaml.safe_load(text)


def run_lines(flow: dict) -> list[str]:
    (job,) = flow["jobs"].values()
    return [step["run"] for step in job["steps"] if "run" in step]


def bash(line: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.fixture
def repo(tmp_path):
    """Reviewer A's store exports what the repository keeps; the skills are installed from it."""
    world = SkillWorld(tmp_path / "a")
    world.add("pdf-tools", {"scripts/run.sh": ("#!/bin/sh\necho run\n", True)})
    world.add("release-notes", {"references/style.md": "Short lines.\n"})
    repo = tmp_path / "repo"
    world.cli("export", "pdf-tools", "-o", repo / "skills")
    world.cli("export", "release-notes", "-o", repo / "skills")
    world.cli("trust", "export", repo / "team.trust")
    world.cli("lock", "-o", repo / "skills.lock")
    world.install("pdf-tools", "release-notes", to=repo / ".claude" / "skills")
    return repo


def test_the_documented_workflow_passes_and_then_catches_an_edit(repo, tmp_path):
    flow = workflow()
    lines = run_lines(flow)
    assert lines[0] == 'pip install "$CHIMERA_CARDS"'
    assert any("--format sarif > skills.sarif" in line for line in lines)
    venv = tmp_path / "runner-python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin",
        "HOME": str(tmp_path / "runner-home"),
        **{k: str(v) for k, v in flow["env"].items()},
        "CHIMERA_CARDS": str(ROOT),  # this checkout stands for the published package
    }

    def run_all(skip_install: bool) -> list[subprocess.CompletedProcess]:
        temp = tmp_path / f"runner-temp-{len(list(tmp_path.glob('runner-temp-*')))}"
        temp.mkdir()
        done = []
        for line in lines:
            if skip_install and line.startswith("pip install"):
                continue
            result = bash(line, repo, {**env, "RUNNER_TEMP": str(temp)})
            done.append(result)
            if result.returncode != 0:
                break
        return done

    green = run_all(skip_install=False)
    assert [r.returncode for r in green] == [0] * len(lines), green[-1].stderr
    assert json.loads((repo / "skills.sarif").read_text())["runs"][0]["results"] == []

    (repo / ".claude" / "skills" / "pdf-tools" / "scripts" / "run.sh").write_bytes(b"echo x\n")
    red = run_all(skip_install=True)
    assert [r.returncode for r in red] == [0, 0, 1]
    results = json.loads((repo / "skills.sarif").read_text())["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results] == [
        ".claude/skills/pdf-tools/scripts/run.sh"
    ]
