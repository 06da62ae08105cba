"""Finding skills: a local folder's skills can be left unread and read one at a time, with the
same bundles and refusals as reading them up front."""

from __future__ import annotations

import os

from conftest import make_card

from chimera_cards._sources.find import find_skills, pick, read_skill


def test_skills_left_unread_read_to_the_same_bundles_and_refusals(tmp_path):
    for name in ("alpha", "beta"):
        make_card(tmp_path / "cards", name)
    outside = make_card(tmp_path / "elsewhere", "gamma")
    os.symlink(outside, tmp_path / "cards" / "gamma")  # linked out of the folder: refused
    eager = find_skills(str(tmp_path / "cards"))
    lazy = find_skills(str(tmp_path / "cards"), read=False)
    assert [s.label for s in lazy] == [s.label for s in eager]
    assert all(s.bundle is None and s.error is None for s in lazy)
    for skill in lazy:
        assert read_skill(skill) is skill
        assert read_skill(skill) is skill  # a second read is a no-op
    assert [s.bundle.digest if s.bundle else None for s in lazy] == [
        s.bundle.digest if s.bundle else None for s in eager
    ]
    assert [type(s.error).__name__ for s in lazy] == [type(s.error).__name__ for s in eager]
    assert lazy[-1].error is not None and lazy[0].error is None


def test_picking_by_name_reads_the_unread_skills_it_needs(tmp_path):
    make_card(tmp_path / "cards", "named-inside", dirname="folder-one")
    make_card(tmp_path / "cards", "other")
    lazy = find_skills(str(tmp_path / "cards"), read=False)
    [chosen] = pick(lazy, "named-inside", source="cards")
    assert chosen.folder == "folder-one" and chosen.bundle is not None
