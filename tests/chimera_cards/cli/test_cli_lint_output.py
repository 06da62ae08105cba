"""``lint`` output people read: one line per skill with its counts, the findings that matter below.

Warnings and errors are listed by default, info with ``-v`` (or ``--min-severity info``); the
per-skill counts always count everything, so nothing is hidden without a number saying so. URLs
in a licence file are the licence's own address, not a place the skill points an agent to: they
are not reported at all.
"""

from __future__ import annotations

import base64
import json

import pytest
from click.testing import CliRunner

from chimera_cards._cli.app import main

# A long base64 run in a text file: a warning (bytes = range(120), fixed, so the line is too).
BLOB = base64.b64encode(bytes(range(120)) * 3).decode()


def run(*args, code=None):
    r = CliRunner().invoke(main, [str(a) for a in args])
    if code is not None:
        assert r.exit_code == code, (r.stdout, r.stderr)
    return r


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "skills"
    one = root / "linked"
    one.mkdir(parents=True)
    (one / "SKILL.md").write_text(
        "---\nname: linked\ndescription: Links to https://example.com/docs for reference.\n---\n"
        "# Linked\n\nSee https://example.com/guide.\n"
    )
    (one / "LICENSE.txt").write_text(
        "Apache License\nhttp://www.apache.org/licenses/\nhttp://www.apache.org/licenses/LICENSE-2.0\n"
    )
    two = root / "wordy"
    two.mkdir()
    (two / "SKILL.md").write_text("---\nname: wordy\ndescription: Wordy.\n---\n# Wordy\n")
    (two / "notes.txt").write_text(f"data: {BLOB}\n")
    three = root / "three"
    three.mkdir()
    (three / "SKILL.md").write_text("---\nname: not-three\ndescription: Third.\n---\n# Three\n")
    return root


def test_one_line_per_skill_with_counts_and_warnings_and_errors_below(corpus):
    r = run("lint", "skills", code=1)
    lines = r.stdout.splitlines()
    assert lines[0] == "skills/linked: 0 errors, 0 warnings, 2 info"
    assert lines[1] == "skills/three: 1 error, 0 warnings, 0 info"
    assert lines[2].startswith("  skills/three/SKILL.md:2: error [name-dirname] ")
    assert lines[3] == "skills/wordy: 0 errors, 1 warning, 0 info"
    assert lines[4].startswith("  skills/wordy/notes.txt:1: warning [base64-blob] ")
    assert lines[5] == "3 skills: 1 error, 1 warning, 2 info (info not shown; -v shows it)"
    assert len(lines) == 6


def test_verbose_shows_info_and_licence_urls_are_never_reported(corpus):
    r = run("lint", "-v", "skills", code=1)
    assert "  skills/linked/SKILL.md:3: info [url] links to https://example.com/docs" in r.stdout
    assert "  skills/linked/SKILL.md:7: info [url] links to https://example.com/guide" in r.stdout
    assert "apache.org" not in r.stdout
    assert r.stdout.splitlines()[-1] == "3 skills: 1 error, 1 warning, 2 info"
    data = json.loads(run("lint", "--json", "skills").stdout)
    assert not [f for f in data["findings"] if "apache.org" in f["message"]]
    assert data["summary"]["infos"] == 2


def test_min_severity_picks_what_is_listed_and_json_follows_it(corpus):
    r = run("lint", "--min-severity", "error", "skills", code=1)
    assert "[base64-blob]" not in r.stdout and "[name-dirname]" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("3 skills: 1 error, 1 warning, 2 info")
    data = json.loads(run("lint", "--json", "--min-severity", "warning", "skills").stdout)
    assert {f["severity"] for f in data["findings"]} == {"error", "warning"}
    bad = run("lint", "--min-severity", "loud", "skills", code=2)
    assert "Traceback" not in bad.output


def test_a_clean_library_is_one_line_per_skill_and_a_total(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    card = tmp_path / "skills" / "tidy"
    card.mkdir(parents=True)
    (card / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy.\n---\n# Tidy\n")
    r = run("lint", "skills", code=0)
    assert (
        r.stdout
        == "skills/tidy: 0 errors, 0 warnings, 0 info\n1 skill: 0 errors, 0 warnings, 0 info\n"
    )
