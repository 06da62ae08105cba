"""Lint findings on real cards (tests/fixtures/lint-corpus, Apache-2.0, copied byte for byte from
../shared/corpus) are pinned: a faster parser or scan must not change one byte of them.

Regenerate expected-findings.json only for a deliberate change of findings, and say so in the
commit: ``python tests/chimera_cards/scan/test_lint_corpus.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import TESTS_DIR

from chimera_cards._scan.findings import PROFILES
from chimera_cards._scan.lint import lint_paths

CORPUS = TESTS_DIR / "fixtures" / "lint-corpus"
EXPECTED = CORPUS / "expected-findings.json"
CORPORA = ("chimera-skills", "agent-skills")


def current_findings() -> dict[str, list[dict]]:
    out = {}
    for corpus in CORPORA:
        for profile in PROFILES:
            report = lint_paths([CORPUS / corpus], profile=profile)
            findings = []
            for finding in report.findings:
                entry = finding.to_dict()
                entry["path"] = Path(entry["path"]).relative_to(CORPUS).as_posix()
                findings.append(entry)
            out[f"{corpus} {profile}"] = findings
    return out


def test_corpus_has_the_cards_and_their_licences():
    assert len(list((CORPUS / "chimera-skills").glob("*/SKILL.md"))) == 23
    assert (CORPUS / "chimera-skills" / "LICENSE").is_file()
    skills = list((CORPUS / "agent-skills").glob("*/SKILL.md"))
    assert len(skills) == 12
    assert all((skill.parent / "LICENSE.txt").is_file() for skill in skills)


@pytest.mark.parametrize("key", [f"{c} {p}" for c in CORPORA for p in PROFILES])
def test_lint_findings_on_the_real_corpora_are_byte_identical_to_the_pinned_ones(key):
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))[key]
    got = current_findings()[key]
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    EXPECTED.write_text(json.dumps(current_findings(), indent=1, sort_keys=True) + "\n")
