"""Progressive disclosure: level 1 is the index entry, level 2 adds the body."""

from __future__ import annotations

import pytest

from chimera_cards._cards.card import parse_card
from chimera_cards._cards.prompt import render_card
from chimera_cards.errors import UsageError

CARD = parse_card(
    b"---\nname: demo-card\ndescription: >\n  Folded\n  description.\ntriggers:\n- first trigger\n"
    b"- second trigger\n---\n\n## Do\n\nThe body step, only at level two.\n"
)


def test_level_one_has_name_description_and_triggers_but_no_body():
    text = render_card(CARD, 1)
    assert text == (
        "name: demo-card\ndescription: Folded description.\n"
        "triggers:\n- first trigger\n- second trigger\n"
    )
    assert "only at level two" not in text


def test_level_two_is_level_one_plus_the_body():
    text = render_card(CARD, 2)
    assert text.startswith(render_card(CARD, 1).rstrip("\n") + "\n\n## Do")
    assert "The body step, only at level two." in text


def test_card_without_triggers_renders_without_a_triggers_list():
    card = parse_card(b"---\nname: plain\ndescription: Plain.\n---\nBody.\n")
    assert render_card(card, 1) == "name: plain\ndescription: Plain.\n"
    assert render_card(card, 2) == "name: plain\ndescription: Plain.\n\nBody.\n"


@pytest.mark.parametrize("level", [0, 3, "2"])
def test_other_levels_are_usage_errors(level):
    with pytest.raises(UsageError):
        render_card(CARD, level)
