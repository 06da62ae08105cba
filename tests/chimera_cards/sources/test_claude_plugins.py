"""A marketplace's plugins mean what Claude Code makes of them: for each plugin of several local
marketplaces (anthropics/skills' shared ``./`` source, plugins in sub-folders with and without a
``skills/`` folder, plugin.json lists beside marketplace lists, a listed folder of skills, a
plugin that is itself a skill, a non-strict plugin with two manifests, paths that are files,
missing or leave the plugin), the real Claude Code CLI installs the plugin and says which skills
it exposes, and ``import --list`` must group exactly those skills under it, ``import --plugin``
bring exactly those in."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import git, make_git_repo

from chimera_cards._importer.pipeline import import_source
from chimera_cards._sources.find import list_source

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def claude(claude_cli) -> str:
    """The real Claude Code CLI's program (the test harness installs it)."""
    return str(claude_cli.program)


def _skill(root: Path, rel: str, name: str | None = None) -> None:
    folder = root / rel
    folder.mkdir(parents=True, exist_ok=True)
    name = name or folder.name
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill, for {name} work.\n---\n# {name}\n"
    )


def _market(root: Path, name: str, skills: list[str], plugins: list[dict], **extra) -> Path:
    for rel in skills:
        _skill(root, rel)
    for rel, doc in extra.get("plugin_json", {}).items():
        (root / rel / ".claude-plugin").mkdir(parents=True, exist_ok=True)
        (root / rel / ".claude-plugin" / "plugin.json").write_text(json.dumps(doc))
    for rel, text in extra.get("files", {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    doc = {"name": name, "owner": {"name": "test"}, "plugins": plugins}
    if "metadata" in extra:
        doc["metadata"] = extra["metadata"]
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps(doc))
    return make_git_repo(root)


# name -> (skill folders, plugins, extras): each a way a marketplace can be laid out.
LAYOUTS: dict[str, tuple[list[str], list[dict], dict]] = {
    # anthropics/skills: every plugin's source is the top, each lists its own skills.
    "shared-top": (
        [f"skills/{n}" for n in ("pdf", "docx", "xlsx", "pptx", "algo-art", "brand", "template")],
        [
            {
                "name": "document-skills",
                "source": "./",
                "strict": False,
                "skills": ["./skills/pdf", "./skills/docx", "./skills/xlsx", "./skills/pptx"],
            },
            {
                "name": "example-skills",
                "source": "./",
                "strict": False,
                "skills": ["./skills/algo-art", "./skills/brand"],
            },
            {"name": "both-pdf", "source": "./", "skills": ["./skills/pdf"]},
        ],
        {},
    ),
    # Plugins in sub-folders: skills/ always read, lists add to it.
    "sub-folders": (
        [
            "plugins/p/skills/a",
            "plugins/p/skills/b",
            "plugins/p/extra/c",
            "plugins/q/skills/d",
            "plugins/r/skills/e",
            "plugins/r/more/f",
            "plugins/s/kit/g",
            "plugins/s/kit/h",
            "plugins/s/skills/deep/i",
        ],
        [
            {"name": "p", "source": "./plugins/p", "skills": ["./extra/c"]},
            {"name": "q", "source": "./plugins/q"},
            {"name": "r", "source": "./plugins/r", "strict": False, "skills": "./more/f"},
            {"name": "s", "source": "./plugins/s", "skills": ["./kit"]},
        ],
        {},
    ),
    # plugin.json lists beside marketplace lists; a plugin that is one skill; a conflict.
    "manifests": (
        ["tools/skills/a", "tools/x/b", "tools/y/c", "single", "clash/skills/d", "clash/z/e"],
        [
            {"name": "tools", "source": "./tools", "skills": ["./x/b"]},
            {"name": "single", "source": "./single"},
            {"name": "clash", "source": "./clash", "strict": False, "skills": ["./z/e"]},
        ],
        {
            "plugin_json": {
                "tools": {"name": "tools", "skills": ["./y/c"]},
                "clash": {"name": "clash", "skills": ["./z/e"]},
            }
        },
    ),
    # The top's list naming skills/ itself keeps the whole folder; odd paths are skipped.
    "odd-paths": (
        ["skills/a", "skills/b", "other/c", "bits/d"],
        [
            {"name": "whole", "source": "./", "skills": ["./skills", "./other/c"]},
            {"name": "odd", "source": "./bits", "skills": ["./README.md", "./gone", "../other/c"]},
        ],
        {"files": {"bits/README.md": "not a skill\n"}},
    ),
    # A plugin.json at the top: its list adds to skills/, unless the entry lists its own.
    "top-manifest": (
        ["skills/a", "skills/b", "extra/c", "extra/d"],
        [
            {"name": "all", "source": "./"},
            {"name": "listed", "source": "./", "skills": ["./skills/a"]},
        ],
        {"plugin_json": {".": {"name": "all", "skills": ["./extra/c"]}}},
    ),
}


def _run_claude(claude: str, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(
        os.environ,
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    return subprocess.run(
        [claude, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=home,
        check=False,
    )


def _exposed_by_claude(claude: str, home: Path, market: str, plugin: str) -> list[str]:
    if _run_claude(claude, home, "plugin", "install", f"{plugin}@{market}").returncode != 0:
        return []  # Claude Code refuses the plugin: it exposes nothing
    shown = _run_claude(claude, home, "plugin", "details", f"{plugin}@{market}")
    m = re.search(r"^\s*Skills \((\d+)\)(.*)$", shown.stdout, re.MULTILINE)
    if m is None:
        return []  # the plugin did not load (Claude Code says why on its own)
    names = [n.strip() for n in m.group(2).split(",") if n.strip()]
    assert len(names) == int(m.group(1)), shown.stdout
    return sorted(names)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_each_plugin_brings_exactly_the_skills_claude_code_loads_for_it(claude, tmp_path, layout):
    skills, plugins, extra = LAYOUTS[layout]
    root = _market(tmp_path / layout, layout, skills, plugins, **extra)
    home = tmp_path / "home"
    home.mkdir()
    added = _run_claude(claude, home, "plugin", "marketplace", "add", str(root))
    assert added.returncode == 0, added.stdout + added.stderr
    entries = list_source(str(root))
    for plugin in plugins:
        theirs = _exposed_by_claude(claude, home, layout, plugin["name"])
        ours = sorted(Path(e.folder).name for e in entries if plugin["name"] in e.plugins)
        assert ours == theirs, f"{layout}/{plugin['name']}: ours {ours}, Claude Code {theirs}"


def test_import_plugin_takes_only_its_listed_skills_from_a_shared_top(store, tmp_path):
    skills, plugins, extra = LAYOUTS["shared-top"]
    root = _market(tmp_path / "shared", "shared", skills, plugins, **extra)
    results = import_source(store, str(root), plugin="example-skills")
    assert sorted(r.name for r in results) == ["algo-art", "brand"]
    assert {v.name for v in store.versions()} == {"algo-art", "brand"}
    assert {v.source["plugin"] for v in store.versions()} == {"example-skills"}
    results = import_source(store, str(root), plugin="document-skills")
    assert sorted(r.name for r in results) == ["docx", "pdf", "pptx", "xlsx"]
    assert "template" not in {v.name for v in store.versions()}


def test_list_shows_a_skill_under_every_plugin_that_exposes_it(tmp_path):
    from click.testing import CliRunner

    from chimera_cards._cli.app import main

    skills, plugins, extra = LAYOUTS["shared-top"]
    root = _market(tmp_path / "shared", "shared", skills, plugins, **extra)
    out = CliRunner().invoke(main, ["import", str(root), "--list"]).output.splitlines()
    heads = [i for i, line in enumerate(out) if line.startswith("plugin ")]
    assert [out[i] for i in heads] == [
        "plugin both-pdf: 1 skill(s)",
        "plugin document-skills: 4 skill(s)",
        "plugin example-skills: 2 skill(s)",
    ]
    assert out[heads[0] + 1].split()[0] == "pdf"
    assert [line.split()[0] for line in out[heads[1] + 1 : heads[2]]] == [
        "docx", "pdf", "pptx", "xlsx"
    ]  # fmt: skip
    assert not any(line.split()[0] == "template" for line in out if line.strip())
    git(root, "status")  # the marketplace is read, never written
