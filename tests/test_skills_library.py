"""The project's own card library (`skills/`) must lint clean in both profiles (no errors or
warnings) and pass the Agent Skills reference validator, skills-ref."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO_ROOT

from chimera_cards._cards.card import CARD_SECTIONS, find_card_files, load_card
from chimera_cards._cli.app import main
from chimera_cards._scan.lint import lint_card

SKILLS = REPO_ROOT / "skills"
CARD_FILES = find_card_files(SKILLS)


def test_library_has_the_cards_this_project_is_about():
    names = {path.parent.name for path in CARD_FILES}
    assert {"carry-the-failure-forward", "review-cards-like-dependencies"} <= names


@pytest.mark.parametrize("path", CARD_FILES, ids=lambda p: p.parent.name)
def test_every_library_card_is_clean_in_both_profiles_with_full_chimera_frontmatter(path):
    card = load_card(path)
    for profile in ("agent-skills", "chimera"):
        problems = [
            f for f in lint_card(card, profile=profile) if f.severity in ("error", "warning")
        ]
        assert problems == [], profile
    assert [s.title for s in card.sections] == list(CARD_SECTIONS)
    # Chimera's fields live under metadata, where the spec keeps extra fields.
    assert set(card.frontmatter) <= {"name", "description", "license", "metadata"}
    assert card.chimera_field("provenance") == "clean"
    assert card.chimera_field("status") == "active"
    assert len(card.triggers) >= 3


@pytest.mark.parametrize("profile", ["agent-skills", "chimera"])
def test_lint_command_on_skills_exits_0(profile):
    result = CliRunner().invoke(main, ["lint", "--profile", profile, str(SKILLS)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1].startswith("2 skills: 0 errors, 0 warnings")


def _skills_ref() -> str:
    # skills-ref (the test extra) installs its command as `agentskills`.
    pytest.importorskip("skills_ref", reason="skills-ref is not installed (pip install '.[test]')")
    found = shutil.which("agentskills", path=str(Path(sys.executable).parent)) or shutil.which(
        "agentskills"
    )
    if found is None:
        pytest.skip("skills-ref is installed but its `agentskills` command is not on PATH")
    return found


@pytest.mark.parametrize("path", CARD_FILES, ids=lambda p: p.parent.name)
def test_skills_ref_validate_accepts_every_library_card(path):
    result = subprocess.run(
        [_skills_ref(), "validate", str(path.parent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Valid skill" in result.stdout


def test_skills_ref_validate_refuses_a_card_with_chimera_fields_at_the_top_level(tmp_path):
    # The check above can fail: the old layout (Chimera fields beside name) is refused.
    card = tmp_path / "old-layout"
    card.mkdir()
    (card / "SKILL.md").write_text("---\nname: old-layout\ndescription: d\nkind: pattern\n---\n")
    result = subprocess.run(
        [_skills_ref(), "validate", str(card)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode != 0


def test_carry_card_check_section_names_its_two_binary_checks():
    check = load_card(SKILLS / "carry-the-failure-forward").section("Check").text
    assert "third attempt" in check and "injection counter" in check


@pytest.mark.parametrize(
    "folder",
    [SKILLS, REPO_ROOT / "tests" / "fixtures" / "lint-corpus" / "chimera-skills"],
    ids=["skills", "chimera-cards"],
)
def test_the_library_and_the_chimera_cards_import_active_by_path(tmp_path, folder):
    # The spec profile refuses unknown top-level keys; Chimera-shaped cards are read by the
    # Chimera profile, so every one of them still goes straight to active.
    from chimera_cards._importer.pipeline import import_source
    from chimera_cards._store.facade import Store

    with Store(tmp_path / "cards.db") as store:
        results = import_source(store, str(folder))
        assert results and all(r.outcome == "imported" for r in results), [
            (r.name, r.error or r.reason) for r in results if r.outcome != "imported"
        ]
        assert {v.status for v in store.versions()} == {"active"}
