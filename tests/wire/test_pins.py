"""One version per agent CLI: the one the wire tests install is the one the presets and the docs
name as tested."""

from __future__ import annotations

from pathlib import Path

import pytest
from wire.agents import PINNED

from reference_loop._attempters.presets import PRESETS

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_preset_names_the_version_the_wire_tests_run(name: str) -> None:
    package, version = PINNED[name]
    assert (PRESETS[name].package, PRESETS[name].tested) == (package, version)


@pytest.mark.parametrize("page", ["bench.md", "loop.md"])
def test_the_docs_name_the_tested_versions(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    for _, version in PINNED.values():
        assert version in text
