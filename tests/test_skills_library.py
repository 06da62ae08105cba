"""The project's own card library (`skills/`) must pass `lint --strict` with no errors or warnings."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from chimera_cards.card import CARD_SECTIONS, find_card_files, load_card
from chimera_cards.cli import main
from chimera_cards.lint import lint_card

SKILLS = Path(__file__).resolve().parent.parent / "skills"
CARD_FILES = find_card_files(SKILLS)


def test_library_has_the_cards_this_project_is_about():
    names = {path.parent.name for path in CARD_FILES}
    assert {"carry-the-failure-forward", "review-cards-like-dependencies"} <= names


@pytest.mark.parametrize("path", CARD_FILES, ids=lambda p: p.parent.name)
def test_every_library_card_is_strict_clean_with_full_chimera_frontmatter(path):
    card = load_card(path)
    problems = [f for f in lint_card(card, strict=True) if f.severity in ("error", "warning")]
    assert problems == []
    assert [s.title for s in card.sections] == list(CARD_SECTIONS)
    assert card.frontmatter["provenance"] == "clean"
    assert card.frontmatter["status"] == "active"
    assert len(card.triggers) >= 3


def test_lint_command_on_skills_exits_0():
    result = CliRunner().invoke(main, ["lint", "--strict", str(SKILLS)])
    assert result.exit_code == 0, result.output
    assert "0 error(s), 0 warning(s)" in result.output


def test_carry_card_check_section_names_its_two_binary_checks():
    check = load_card(SKILLS / "carry-the-failure-forward").section("Check").text
    assert "third attempt" in check and "injection counter" in check
