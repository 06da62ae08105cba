"""Forty skill folders on which ``lint``'s default (Agent Skills) profile must give the verdict the
reference validator (skills-ref's ``validate``, installed by the test extra) gives: the inputs of
skills-ref's own tests (validator, parser, prompt), written here as our cases.

Each case is (id, folder name or None for "nothing there", files). ``agreement()`` runs both
validators on every case and returns the ids where they differ;
``python tests/chimera_cards/scan/test_spec_agreement.py`` prints ``N/40 agree``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest

__all__ = ["CASES", "CHIMERA_KEY_CASES", "agreement", "ours_valid", "reference_valid"]


def _card(name: str, description: str = "A test skill", extra: str = "", body: str = "Body\n"):
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}"


# (id, folder, {relative path: text}); a folder of None means the path does not exist, a
# folder ending in ".txt" is a plain file.
CASES: list[tuple[str, str | None, dict[str, str]]] = [
    # the validator's cases
    ("valid", "my-skill", {"SKILL.md": _card("my-skill", body="# My Skill\n")}),
    ("nonexistent-path", None, {}),
    ("not-a-directory", "file.txt", {}),
    ("missing-skill-md", "my-skill", {}),
    ("uppercase-name", "MySkill", {"SKILL.md": _card("MySkill")}),
    ("name-too-long", "a" * 70, {"SKILL.md": _card("a" * 70)}),
    ("leading-hyphen", "-my-skill", {"SKILL.md": _card("-my-skill")}),
    ("consecutive-hyphens", "my--skill", {"SKILL.md": _card("my--skill")}),
    ("underscore", "my_skill", {"SKILL.md": _card("my_skill")}),
    ("dir-mismatch", "wrong-name", {"SKILL.md": _card("correct-name")}),
    (
        "unknown-field",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="unknown_field: should not be here\n")},
    ),
    (
        "all-fields",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="license: MIT\nmetadata:\n  author: Test\n")},
    ),
    (
        "allowed-tools",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="allowed-tools: Bash(jq:*) Bash(git:*)\n")},
    ),
    ("chinese-name", "技能", {"SKILL.md": _card("技能", "A skill with Chinese name")}),
    (
        "russian-hyphens",
        "мой-навык",
        {"SKILL.md": _card("мой-навык", "A skill with Russian name")},
    ),
    ("russian-lowercase", "навык", {"SKILL.md": _card("навык", "A Russian lowercase name")}),
    ("russian-uppercase", "НАВЫК", {"SKILL.md": _card("НАВЫК", "A Russian uppercase name")}),
    ("description-too-long", "my-skill", {"SKILL.md": _card("my-skill", "x" * 1100)}),
    (
        "compatibility",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="compatibility: Requires Python 3.11+\n")},
    ),
    (
        "compatibility-too-long",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra=f"compatibility: {'x' * 550}\n")},
    ),
    ("nfkc-name", "café", {"SKILL.md": _card("cafe\u0301")}),
    # the parser's cases, each as the skill folder holding that SKILL.md
    (
        "frontmatter",
        "my-skill",
        {"SKILL.md": _card("my-skill", body="# My Skill\n\nInstructions here.\n")},
    ),
    ("no-frontmatter", "my-skill", {"SKILL.md": "# No frontmatter here"}),
    (
        "unclosed-frontmatter",
        "my-skill",
        {"SKILL.md": "---\nname: my-skill\ndescription: A test skill\n"},
    ),
    (
        "invalid-yaml",
        "my-skill",
        {"SKILL.md": "---\nname: [invalid\ndescription: broken\n---\nBody here\n"},
    ),
    ("list-frontmatter", "my-skill", {"SKILL.md": "---\n- just\n- a\n- list\n---\nBody\n"}),
    (
        "license",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="license: MIT\n", body="# My Skill\n")},
    ),
    (
        "metadata",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="metadata:\n  author: Test Author\n  version: 1.0\n")},
    ),
    ("empty-folder", "my-skill", {}),
    ("missing-name", "my-skill", {"SKILL.md": "---\ndescription: A test skill\n---\nBody\n"}),
    ("missing-description", "my-skill", {"SKILL.md": "---\nname: my-skill\n---\nBody\n"}),
    ("both-cases", "my-skill", {"SKILL.md": "uppercase", "skill.md": "lowercase"}),
    ("lowercase-file-not-a-card", "my-skill", {"skill.md": "lowercase"}),
    ("no-file", "my-skill", {"notes.txt": "not a skill"}),
    (
        "lowercase-file",
        "my-skill",
        {"skill.md": _card("my-skill", body="# My Skill\n")},
    ),
    (
        "allowed-tools-parsed",
        "my-skill",
        {"SKILL.md": _card("my-skill", extra="allowed-tools: Bash(jq:*) Bash(git:*)\n")},
    ),
    # the prompt's cases
    ("prompt-empty", "skills", {}),
    ("prompt-single", "my-skill", {"SKILL.md": _card("my-skill", body="# My Skill\n")}),
    ("prompt-second", "skill-b", {"SKILL.md": _card("skill-b", "Second skill")}),
    (
        "prompt-escaped",
        "special-skill",
        {"SKILL.md": _card("special-skill", "Use <foo> & <bar> tags")},
    ),
]


# Chimera's own top-level keys, each alone on an otherwise valid card: skills-ref rejects every
# one (its allowed fields are the spec's six), so the spec profile must too.
CHIMERA_KEY_CASES: list[tuple[str, str | None, dict[str, str]]] = [
    (f"chimera-{key}", "my-skill", {"SKILL.md": _card("my-skill", extra=f"{key}: {value}\n")})
    for key, value in (
        ("version", "1.0.0"),
        ("triggers", "[when asked]"),
        ("provenance", "clean"),
        ("status", "active"),
        ("kind", "pattern"),
        ("stage", "build"),
        ("topic", "testing"),
        ("allowed_tools", "Read"),
    )
]


def _make(root: Path, folder: str | None, files: dict[str, str]) -> Path:
    if folder is None:
        return root / "nonexistent"
    path = root / folder
    if folder.endswith(".txt"):
        path.write_text("test", encoding="utf-8")
        return path
    path.mkdir()
    for rel, text in files.items():
        (path / rel).write_text(text, encoding="utf-8")
    return path


def reference_valid(path: Path) -> bool:
    """skills-ref's verdict: no errors from ``skills_ref.validator.validate``."""
    from skills_ref.validator import validate

    return not validate(path)


def ours_valid(path: Path) -> bool:
    """``chimera-cards lint``'s verdict in its default profile: exit 0 (no error finding, no
    usage error)."""
    from click.testing import CliRunner

    from chimera_cards._cli.app import main

    result = CliRunner().invoke(main, ["lint", str(path)])
    return result.exit_code == 0


def agreement() -> tuple[int, list[str]]:
    """(cases where both agree, ids of those where they differ)."""
    differ = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (case_id, folder, files) in enumerate(CASES + CHIMERA_KEY_CASES):
            root = Path(tmp) / str(index)
            root.mkdir()
            path = _make(root, folder, files)
            if reference_valid(path) != ours_valid(path):
                differ.append(case_id)
            shutil.rmtree(root)
    return len(CASES) + len(CHIMERA_KEY_CASES) - len(differ), differ


@pytest.mark.parametrize(("case_id", "folder", "files"), CASES, ids=[c[0] for c in CASES])
def test_lint_gives_the_reference_validators_verdict(tmp_path, case_id, folder, files):
    pytest.importorskip("skills_ref", reason="skills-ref is in the test extra")
    path = _make(tmp_path, folder, files)
    assert ours_valid(path) == reference_valid(path), case_id


@pytest.mark.parametrize(
    ("case_id", "folder", "files"), CHIMERA_KEY_CASES, ids=[c[0] for c in CHIMERA_KEY_CASES]
)
def test_a_chimera_key_at_the_top_fails_both_validators(tmp_path, case_id, folder, files):
    pytest.importorskip("skills_ref", reason="skills-ref is in the test extra")
    path = _make(tmp_path, folder, files)
    assert reference_valid(path) is False, case_id
    assert ours_valid(path) is False, case_id


def test_the_cases_are_the_forty_of_the_reference_validator():
    assert len(CASES) == 40 and len({c[0] for c in CASES}) == 40


if __name__ == "__main__":
    agreed, differ = agreement()
    print(
        f"{agreed}/{len(CASES) + len(CHIMERA_KEY_CASES)} agree"
        + (f"; differ: {', '.join(differ)}" if differ else "")
    )
    sys.exit(0 if not differ else 1)
