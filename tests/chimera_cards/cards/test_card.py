"""The SKILL.md model: envelope parsing from bytes, limits, sections from the Markdown tokens."""

from __future__ import annotations

import hashlib
import os
import time

import pytest
import yaml
from conftest import TESTS_DIR

from chimera_cards._cards import card as card_module
from chimera_cards._cards.card import (
    CARD_SECTIONS,
    MAX_CARD_BYTES,
    MAX_FRONTMATTER_BYTES,
    Card,
    CardParseError,
    CardReadError,
    Section,
    find_card_files,
    load_card,
    parse_card,
    read_card_bytes,
)
from chimera_cards.errors import ChimeraError


@pytest.fixture(autouse=True, params=["libyaml", "pure-python"])
def yaml_path(request, monkeypatch):
    """Every test here runs on both frontmatter readers: libyaml's (events checked first) and the
    pure-Python composer used where PyYAML has no libyaml."""
    if request.param == "libyaml" and not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(card_module, "LIBYAML", request.param == "libyaml")
    return request.param


FIVE = "".join(f"## {title}\n\n{title} text.\n\n" for title in CARD_SECTIONS)
CARD = (
    "---\nname: demo-card\ndescription: A demo.\ntriggers:\n- one\n- two\n---\n\n" + FIVE
).encode()


def test_parses_frontmatter_body_and_five_sections_with_file_lines():
    card = parse_card(CARD)
    assert card.frontmatter["name"] == "demo-card"
    assert card.name == "demo-card"
    assert card.description == "A demo."
    assert card.triggers == ["one", "two"]
    assert card.body_line == 8
    assert [s.title for s in card.sections] == list(CARD_SECTIONS)
    assert card.sections[0] == Section(title="Trigger", line=9, text="Trigger text.")
    assert card.sections[4].line == 25
    assert card.section("Check").text == "Check text."
    assert card.section("Nope") is None
    assert card.key_lines["description"] == 3


def test_sha256_is_over_the_exact_raw_bytes():
    card = parse_card(CARD)
    assert card.raw == CARD
    assert card.sha256 == hashlib.sha256(CARD).hexdigest()


def test_bom_is_allowed_and_hash_still_covers_it():
    data = b"\xef\xbb\xbf" + CARD
    card = parse_card(data)
    assert card.name == "demo-card"
    assert card.sha256 == hashlib.sha256(data).hexdigest()
    assert card.sections[0].line == 9


def test_crlf_card_parses_like_lf_with_the_same_lines_but_its_own_hash():
    data = CARD.replace(b"\n", b"\r\n")
    card = parse_card(data)
    lf = parse_card(CARD)
    assert card.frontmatter == lf.frontmatter
    assert card.sections == lf.sections
    assert "\r" not in card.body
    assert card.sha256 != lf.sha256


def test_fenced_risk_heading_is_body_text_not_a_section():
    data = (
        b"---\nname: x\ndescription: y\n---\n## Do\n\n```markdown\n## Risk\nnot real\n```\n\n"
        b"~~~\n## Check\n~~~\n"
    )
    card = parse_card(data)
    assert [s.title for s in card.sections] == ["Do"]
    assert "## Risk" in card.sections[0].text


def test_indented_code_heading_is_body_text_not_a_section():
    data = b"---\nname: x\ndescription: y\n---\n## Do\n\nText.\n\n    ## Risk\n"
    assert [s.title for s in parse_card(data).sections] == ["Do"]


def test_heading_inside_blockquote_is_not_a_section():
    data = b"---\nname: x\ndescription: y\n---\n## Do\n\n> ## Risk\n> quoted\n"
    assert [s.title for s in parse_card(data).sections] == ["Do"]


def test_setext_level_two_heading_is_a_section():
    data = b"---\nname: x\ndescription: y\n---\nRisk\n----\n\nreal\n"
    card = parse_card(data)
    assert card.sections == [Section(title="Risk", line=5, text="real")]


def test_level_one_and_three_headings_stay_inside_the_section():
    data = b"---\nname: x\ndescription: y\n---\n# Title\n## Do\n### Step\nx\n"
    card = parse_card(data)
    assert card.sections == [Section(title="Do", line=6, text="### Step\nx")]


def test_duplicate_and_unknown_sections_are_kept_in_order():
    data = b"---\nname: x\ndescription: y\n---\n## Do\na\n## Extra\nb\n## Do\nc\n"
    card = parse_card(data)
    assert [(s.title, s.line, s.text) for s in card.sections] == [
        ("Do", 5, "a"),
        ("Extra", 7, "b"),
        ("Do", 9, "c"),
    ]
    assert card.section("Do").text == "a"


def test_four_dash_line_does_not_close_the_frontmatter():
    data = b"---\nname: x\ndescription: |\n  a\n----\n  b\n---\n## Do\n"
    with pytest.raises(CardParseError):
        # '----' is inside the YAML, where it is invalid: it must not be taken as the fence.
        parse_card(data)
    ok = b'---\nname: x\ndescription: "a\n  ----\n  b"\n---\n## Do\n'
    card = parse_card(ok)
    assert "----" in card.description
    assert card.body_line == 7


def test_four_dash_only_frontmatter_is_never_closed():
    with pytest.raises(CardParseError, match="never closed"):
        parse_card(b"---\nname: x\n----\n## Do\n")


def test_fence_with_trailing_space_does_not_close():
    with pytest.raises(CardParseError, match="never closed"):
        parse_card(b"---\nname: x\n--- \n## Do\n")


def test_missing_closing_fence_is_a_parse_error_on_line_one():
    with pytest.raises(CardParseError) as exc:
        parse_card(b"---\nname: x\ndescription: y\n\n## Do\n")
    assert exc.value.line == 1
    assert "never closed" in str(exc.value)


def test_missing_frontmatter_is_a_parse_error():
    with pytest.raises(CardParseError, match="no YAML frontmatter"):
        parse_card(b"# Just markdown\n\n## Do\n")


def test_empty_file_is_a_parse_error():
    with pytest.raises(CardParseError):
        parse_card(b"")


def test_non_utf8_bytes_are_a_parse_error_with_line():
    with pytest.raises(CardParseError) as exc:
        parse_card(b"---\nname: x\ndescription: caf\xe9\n---\n")
    assert exc.value.line == 3
    assert "UTF-8" in str(exc.value)


def test_alias_bomb_is_refused_before_it_expands():
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, prev in zip("bcdefghi", "abcdefgh", strict=True):
        lines.append(f"{i}: &{i} [" + ",".join([f"*{prev}"] * 9) + "]")
    bomb = ("---\n" + "\n".join(lines) + "\n---\n").encode()
    assert len(bomb) < 400
    start = time.monotonic()
    with pytest.raises(CardParseError, match=r"anchor|alias") as exc:
        parse_card(bomb)
    assert time.monotonic() - start < 1.0
    assert exc.value.line == 2


def test_a_lone_alias_is_text_as_claude_code_reads_it_never_an_expansion():
    # An alias naming no anchor is invalid YAML for every reader; Claude Code quotes the value.
    card = parse_card(b"---\nname: x\ndescription: *undefined\n---\n")
    assert card.description == "*undefined"
    assert card.strict_yaml_error is not None and "alias" in card.strict_yaml_error
    with pytest.raises(CardParseError, match="alias"):
        parse_card(b"---\nname: x\nmetadata:\n  note: *undefined\ndescription: d\n---\n")


def test_merge_key_with_anchor_is_refused():
    data = b"---\nbase: &b {name: x}\ncard:\n  <<: *b\n---\n"
    with pytest.raises(CardParseError, match="anchor"):
        parse_card(data)


def test_frontmatter_over_64_kib_is_refused():
    big = "description: " + "a" * MAX_FRONTMATTER_BYTES + "\n"
    with pytest.raises(CardParseError, match=r"frontmatter is .* bytes"):
        parse_card(("---\nname: x\n" + big + "---\n").encode())


def test_deeply_nested_frontmatter_is_refused_not_a_crash():
    data = ("---\nx: " + "[" * 5000 + "]" * 5000 + "\n---\n").encode()
    with pytest.raises(CardParseError, match="nest"):
        parse_card(data)


@pytest.mark.parametrize("yaml_text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_non_mapping_frontmatter_is_refused(yaml_text):
    with pytest.raises(CardParseError, match="mapping"):
        parse_card(f"---\n{yaml_text}---\n".encode())


def test_empty_frontmatter_is_refused():
    with pytest.raises(CardParseError, match="empty"):
        parse_card(b"---\n---\n## Do\n")


def test_invalid_yaml_names_the_file_line():
    with pytest.raises(CardParseError) as exc:
        parse_card(b"---\nname: x\ndescription: [unclosed\n  more\nother: 1\n---\n")
    assert exc.value.line is not None and exc.value.line >= 3


def test_python_tags_are_refused_by_safe_load():
    with pytest.raises(CardParseError):
        parse_card(b"---\nname: !!python/object/apply:os.system ['true']\n---\n")


def test_non_string_key_is_refused():
    with pytest.raises(CardParseError, match="not a string"):
        parse_card(b"---\nname: x\non: push\n---\n")


def test_card_over_one_mib_is_refused():
    data = CARD + b"x" * MAX_CARD_BYTES
    with pytest.raises(CardParseError, match="limit"):
        parse_card(data)


def test_unknown_keys_are_kept_and_listed():
    card = parse_card(b"---\nname: x\ndescription: y\nflavour: mint\nversion: 1\n---\n")
    assert card.frontmatter["flavour"] == "mint"
    assert card.unknown_keys == ["flavour"]


def test_single_string_trigger_is_a_one_item_list():
    card = parse_card(b"---\nname: x\ntriggers: when asked\n---\n")
    assert card.triggers == ["when asked"]


def test_parse_error_names_the_path_when_given():
    with pytest.raises(CardParseError, match=r"^cards/x/SKILL.md: line 1:"):
        parse_card(b"nope\n", path="cards/x/SKILL.md")


def test_parse_error_is_a_chimera_error_with_exit_1():
    with pytest.raises(ChimeraError) as exc:
        parse_card(b"nope")
    assert exc.value.exit_code == 1


# --- reading from disk -----------------------------------------------------------------------


def _write_card(directory, data=CARD):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_bytes(data)
    return directory / "SKILL.md"


def test_read_card_bytes_from_file_and_from_directory(tmp_path):
    file = _write_card(tmp_path / "demo-card")
    assert read_card_bytes(file) == (CARD, str(file.resolve()))
    assert read_card_bytes(tmp_path / "demo-card") == (CARD, str(file.resolve()))
    card = load_card(tmp_path / "demo-card")
    assert isinstance(card, Card) and card.path == str(file.resolve())


def test_read_missing_path_is_unreadable_input_exit_2(tmp_path):
    with pytest.raises(CardReadError) as exc:
        read_card_bytes(tmp_path / "nothing")
    assert exc.value.exit_code == 2
    (tmp_path / "empty").mkdir()
    with pytest.raises(CardReadError, match=r"no SKILL\.md"):
        read_card_bytes(tmp_path / "empty")


def test_symlink_pointing_outside_the_card_directory_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"---\nname: stolen\n---\n")
    card_dir = tmp_path / "cards" / "evil"
    card_dir.mkdir(parents=True)
    (card_dir / "SKILL.md").symlink_to(secret)
    with pytest.raises(ChimeraError, match="outside the card directory"):
        read_card_bytes(card_dir)


def test_symlink_inside_the_card_directory_is_followed(tmp_path):
    card_dir = tmp_path / "demo-card"
    card_dir.mkdir()
    (card_dir / "real.md").write_bytes(CARD)
    (card_dir / "SKILL.md").symlink_to("real.md")
    data, resolved = read_card_bytes(card_dir)
    assert data == CARD and resolved.endswith("real.md")


def test_fifo_is_refused_without_hanging(tmp_path):
    card_dir = tmp_path / "fifo-card"
    card_dir.mkdir()
    os.mkfifo(card_dir / "SKILL.md")
    with pytest.raises(CardReadError, match="not a regular file"):
        read_card_bytes(card_dir)


def test_oversized_file_is_refused_before_reading(tmp_path):
    file = _write_card(tmp_path / "big", CARD + b"x" * MAX_CARD_BYTES)
    with pytest.raises(CardParseError, match="limit"):
        read_card_bytes(file)


def test_find_card_files_file_dir_and_folder_of_dirs(tmp_path):
    a = _write_card(tmp_path / "lib" / "a-card")
    b = _write_card(tmp_path / "lib" / "b-card")
    (tmp_path / "lib" / "not-a-card").mkdir()
    (tmp_path / "lib" / "README.md").write_text("hi")
    assert find_card_files(a) == [a]
    assert find_card_files(tmp_path / "lib" / "b-card") == [b]
    assert find_card_files(tmp_path / "lib") == [a, b]
    assert find_card_files(tmp_path / "lib" / "not-a-card") == []
    with pytest.raises(CardReadError):
        find_card_files(tmp_path / "missing")


def test_control_character_in_frontmatter_is_a_parse_error_with_line():
    with pytest.raises(CardParseError, match="unacceptable character") as exc:
        parse_card(b"---\nname: x\ndescription: a\x07b\n---\n")
    assert exc.value.line == 3


def test_second_yaml_document_in_frontmatter_is_refused():
    with pytest.raises(CardParseError, match="another document"):
        parse_card(b"---\nname: x\n...\n--- \nfoo: 1\n---\n")


def test_block_only_markdown_pass_gives_the_sections_a_full_parse_gives():
    # Sections are split from markdown-it's block pass alone (the inline pass is skipped for
    # speed); the titles must be exactly the heading text a full CommonMark parse carries.
    from markdown_it import MarkdownIt

    body = (
        "intro\n\n## Do *this* `now` [link](http://x) ##\n\ntext\n\nSetext **two**\nlines\n---\n"
        "```\n## Fenced\n```\n\n    ## Indented\n\n> ## Quoted\n\n- ## In a list\n\n"
        "<div>\n## In html\n</div>\n\n[ref]: http://example.com\n##   Spaced\\#  \n"
        "## Risk\u00a0\u202e\n\n##\n\n## Trailing #hash ###  \nend\0\n"
    )
    data = ("---\nname: x\ndescription: y\n---\n" + body).encode()
    full = MarkdownIt("commonmark").parse(body)
    expected = [
        (full[i + 1].content.strip(), 5 + token.map[0])
        for i, token in enumerate(full)
        if token.type == "heading_open" and token.tag == "h2" and token.level == 0
    ]
    assert len(expected) == 6
    assert [(s.title, s.line) for s in parse_card(data).sections] == expected


REFUSED_FRONTMATTER = [
    "a: &x [1]\nb: *x\n",  # anchor first
    "name: x\nmetadata:\n  note: *undefined\n",  # lone alias (below the top: not repaired)
    "base: &b {name: x}\ncard:\n  <<: *b\n",  # merge key
    "name: x\nlist:\n- ok\n- &deep {a: 1}\n",  # anchor below the top level
    "x: " + "[" * 40 + "]" * 40 + "\n",  # nesting
    "x: " + "{a: " * 33 + "1" + "}" * 33 + "\n",
    "name: x\ndescription: [unclosed\n  more\nother: 1\n",  # syntax errors, worded by PyYAML
    "name: x\n  bad: indent\n",
    "name: x\ndescription: a\x07b\n",  # reader error
    "name: !!python/object/apply:os.system ['true']\n",
    "name: x\n...\n--- \nfoo: 1\n",
    "name: x\non: push\n",
    "- a\n- b\n",
    "key: 'unterminated\n",
    'name: x\ndescription: "bad \\q escape"\n',
    "{a: 1, b: [2, 3}\n",
    "name: x\n? [a, b]\n: an unhashable key\n",
    "name: x\n\tdescription: tab\n",
]


@pytest.mark.parametrize("yaml_text", REFUSED_FRONTMATTER)
def test_libyaml_and_pure_readers_refuse_with_the_same_message_and_line(yaml_text):
    data = f"---\n{yaml_text}---\n".encode()
    errors = []
    for libyaml in (True, False):
        card_module.LIBYAML = libyaml
        with pytest.raises(CardParseError) as exc:
            parse_card(data, path="card/SKILL.md")
        errors.append((str(exc.value), exc.value.line))
    assert errors[0] == errors[1]


def test_libyaml_event_scan_refuses_an_anchor_before_any_node_is_composed(monkeypatch):
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    composed = []
    real = yaml.CSafeLoader.get_single_node
    monkeypatch.setattr(
        yaml.CSafeLoader, "get_single_node", lambda self: composed.append(1) or real(self)
    )
    with pytest.raises(CardParseError, match="anchor") as exc:
        card_module._construct_with_libyaml("a: 1\nb: &x [1]\n", 2)
    assert exc.value.line == 3 and composed == []
    card_module._construct_with_libyaml("a: 1\n", 2)
    assert composed == [1]  # the spy does see a normal load


def test_nesting_at_the_limit_is_accepted_and_one_deeper_refused_on_both_readers():
    limit = card_module.MAX_FRONTMATTER_DEPTH
    # The mapping is level 1, then limit - 2 lists, then the scalar: exactly `limit` levels.
    ok = "x: " + "[" * (limit - 2) + "1" + "]" * (limit - 2) + "\n"
    deep = "x: " + "[" * (limit - 1) + "1" + "]" * (limit - 1) + "\n"
    for libyaml in (True, False):
        card_module.LIBYAML = libyaml
        assert parse_card(f"---\n{ok}---\n".encode()).frontmatter["x"]
        with pytest.raises(CardParseError, match=f"deeper than {limit}") as exc:
            parse_card(f"---\n{deep}---\n".encode())
        assert exc.value.line == 2


ACCEPTED_FRONTMATTER = [
    "name: x\ndescription: y\n",
    "name: x\ndescription: >\n  folded\n  text\ntriggers:\n- one\n- 'two: quoted'\n",
    "name: x\nversion: 1.0\ncount: 3\nflag: yes\nwhen: 2024-01-02\nnothing: ~\n",
    'name: x\ndescription: "esc \\u202e \\t \\x41"\nmetadata: {a: [1, 2], b: {c: d}}\n',
    "name: x\ndescription: |\n  line one\n\n  line three\n# comment\nlast: end\n",
    "\ufeffname: x\n",
    "name: x\r\ndescription: caf\u00e9 \u2014 \U0001f600\n",
    "? complex key\n: value\nname: x\n",
    # Built directly or by the constructor, the same values: merge and value keys, nested
    # collections, numbers and dates inside them, a null key.
    "name: x\n<<: {merged: 1, other: y}\n",
    "name: x\n=: the value key\n",
    "name: x\nlist:\n- [a, 1, 2.5, true, null]\n- {c: d, e: [2024-01-02]}\n",
    "name: x\nmetadata: {~: null key, 1: int key}\n",
]


@pytest.mark.parametrize("yaml_text", ACCEPTED_FRONTMATTER)
def test_libyaml_and_pure_readers_give_the_same_frontmatter_and_key_lines(yaml_text):
    data = f"---\n{yaml_text}---\n".encode()
    parsed = []
    for libyaml in (True, False):
        card_module.LIBYAML = libyaml
        card = parse_card(data)
        parsed.append((card.frontmatter, card.key_lines))
    assert parsed[0] == parsed[1]


# Where libyaml and PyYAML's pure reader disagree, the card must still read as it always did.
@pytest.mark.parametrize(
    "yaml_text",
    [
        "key: a\tb\n",  # PyYAML refuses a tab inside a plain scalar; libyaml takes it
        "list:\n- a\n\ufeff\n",  # libyaml drops a BOM inside the stream
        "\ufeffname: x\nk: v\n\ufeffother: y\n",
        "k: !!str 1\nname: x\n",  # tags
        "? !\n",
        "!\n",
        "k: |-#c\n  text\n",  # a comment glued to a block scalar header
        ">#}\n",
    ],
)
def test_inputs_libyaml_reads_differently_are_read_the_pure_way(yaml_text):
    outcomes = []
    for libyaml in (True, False):
        try:
            outcomes.append(repr(card_module._load_frontmatter(yaml_text, 2, libyaml=libyaml)))
        except CardParseError as exc:
            outcomes.append(f"refused: {exc}")
    assert outcomes[0] == outcomes[1]


def _generated_frontmatter(rng) -> str:
    scalars = [
        "x",
        "a b",
        "'q ''x'' y'",
        '"d \\u202e \\x41 \\" \\\\ "',
        "1",
        "1.0",
        "0x1F",
        "017",
        "yes",
        "on",
        "~",
        "",
        "2024-01-02",
        ".inf",
        "-",
        "a: b",
        "a #c",
        "a#b",
        "@x",
        "%x",
        "[1, 2]",
        "{a: 1}",
        "[a, [b, {c: d}]]",
        "\u00e9 \u4e2d \U0001f600",
        "a\u2028b",
        "a\x85b",
        "'multi\n  line'",
        '"multi\n  line\\\n  x"',
        "<<",
        "?x",
        ":x",
        "x:",
        "- x",
        "&a x",
        "*a",
        "|\n  lit\n   more\n",
        ">-\n  fold\n\n  para\n",
        "|+\n  keep\n\n",
        "\n  plain\n  multi\n",
    ]
    keys = [
        "name",
        "description",
        "triggers",
        "a b",
        "'quoted'",
        '"dq"',
        "1",
        "yes",
        "? complex",
        "\u00e9",
    ]
    pieces = [
        "\n",
        ": ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        ",",
        "'",
        '"',
        "\\",
        "#",
        "? ",
        "|",
        ">",
        "...",
        "---",
        "%YAML 1.1\n",
        "&a ",
        "*a",
        "\u2028",
        "\x85",
        "\r",
        "\x07",
        " ",
        "  ",
        "x",
        "1",
    ]
    if rng.random() < 0.5:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12))) + "\n"
    lines = []
    for _ in range(rng.randint(1, 5)):
        key, roll = rng.choice(keys), rng.random()
        if roll < 0.6:
            lines.append(f"{key}: {rng.choice(scalars)}")
        elif roll < 0.8:
            lines.append(
                f"{key}:\n"
                + "\n".join(
                    f"{rng.choice(['- ', '  - '])}{rng.choice(scalars)}"
                    for _ in range(rng.randint(1, 3))
                )
            )
        else:
            lines.append(
                f"{key}:\n"
                + "\n".join(
                    f"  {rng.choice(keys)}: {rng.choice(scalars)}" for _ in range(rng.randint(1, 3))
                )
            )
    return "\n".join(lines) + rng.choice(["\n", "\n# end\n", "\n...\n"])


@pytest.mark.slow
def test_libyaml_and_pure_readers_agree_on_generated_frontmatter():
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    import random

    rng = random.Random(1130)
    for _ in range(1200):
        text = _generated_frontmatter(rng)
        outcomes = []
        for libyaml in (True, False):
            try:
                outcomes.append(repr(card_module._load_frontmatter(text, 2, libyaml=libyaml)))
            except CardParseError as exc:
                outcomes.append(f"refused: {exc}")
        assert outcomes[0] == outcomes[1], repr(text)


def test_an_event_scan_refusal_stands_even_if_the_pure_reader_were_to_accept(monkeypatch):
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml")
    # Fail closed: the pure re-read (for the canonical message) must never turn a refusal into
    # an accepted card. Make the pure reader accept everything to see that it cannot.
    monkeypatch.setattr(card_module, "_construct_pure", lambda text, first_line: ({"a": [1]}, None))
    with pytest.raises(CardParseError, match="anchor '&x'") as exc:
        card_module._load_frontmatter("a: &x [1]\n", 2, libyaml=True)
    assert exc.value.line == 2


# --- refused at parse time: what a reviewer and the loader could read differently ----------------


@pytest.mark.parametrize(
    "yaml_text",
    [
        'name: x\ndescription: "bad \\ud800 value"\n',
        'name: x\n"key \\udfff": 1\n',
        'name: x\nmetadata:\n  note: "\\ud83d\\ude00"\n',  # a UTF-16 pair is still two surrogates
        'name: x\nlist:\n- "\\U0000DC00"\n',
    ],
)
def test_lone_surrogate_escape_in_frontmatter_is_refused_at_parse_time(yaml_text):
    for libyaml in (True, False):
        card_module.LIBYAML = libyaml
        with pytest.raises(CardParseError, match="lone surrogate") as exc:
            parse_card(f"---\n{yaml_text}---\nbody\n".encode())
        assert exc.value.line is not None and exc.value.line >= 2


def test_escaped_astral_character_is_still_accepted():
    card = parse_card(b'---\nname: x\ndescription: "smile \\U0001F600"\n---\n')
    assert card.description == "smile \U0001f600"


@pytest.mark.parametrize(
    ("yaml_text", "line"),
    [
        ("name: x\nname: again\n", 3),
        ("name: x\ndescription: a\n'description': b\n", 4),
        ("name: x\nmetadata:\n  k: 1\n  k: 2\n", 5),
    ],
)
def test_duplicate_yaml_key_is_a_parse_error_not_last_one_wins(yaml_text, line):
    for libyaml in (True, False):
        card_module.LIBYAML = libyaml
        with pytest.raises(CardParseError, match="duplicate frontmatter key") as exc:
            parse_card(f"---\n{yaml_text}---\n".encode())
        assert exc.value.line == line


def test_code_block_lines_are_recorded_for_fenced_and_indented_blocks():
    body = "## Do\n\n```html\n<!-- shown -->\n```\n\ntext\n\n    indented\n"
    card = parse_card(b"---\nname: x\n---\n" + body.encode())
    # body starts on file line 4: fence on 6-8, indented block on 12
    assert card.code_lines == ((6, 9), (12, 13))


def test_chimera_fields_and_triggers_are_read_from_metadata_too():
    data = (
        b"---\nname: x\ndescription: d\nmetadata:\n  kind: pattern\n"
        b"  triggers: |-\n    first trigger\n    second trigger\n---\n"
    )
    card = parse_card(data)
    assert card.chimera_field("kind") == "pattern"
    assert card.triggers == ["first trigger", "second trigger"]


def test_the_event_scan_is_skipped_only_where_nothing_it_refuses_can_be():
    from chimera_cards._cards.card import MAX_FRONTMATTER_DEPTH, _needs_event_scan

    assert not _needs_event_scan("name: x\ndescription: plain words - and more\n")
    assert _needs_event_scan("a: &x 1\n")
    assert _needs_event_scan("a: *x\n")
    deep = "[" * MAX_FRONTMATTER_DEPTH + "]" * MAX_FRONTMATTER_DEPTH
    assert _needs_event_scan(f"a: {deep}\n")
    assert _needs_event_scan("- " * MAX_FRONTMATTER_DEPTH + "x\n")


# --- simple frontmatter, read without YAML ---------------------------------------------------

_SIMPLE_KEYS = ["name", "description", "version", "triggers", "yes", "on", "null", "a_b", "x-y"]
_SIMPLE_VALUES = [
    # read as written
    "clean", "0.1.0", "Apache-2.0", "a \u2014 b", "it's", "a  b", "C# x", "a,b", "a[b]",
    "Wow! ok", "x\u00a0", "a:b",
    # anything else: numbers, booleans, nulls, dates, indicators, comments, odd characters
    "1", "1.5", "1e3", "true", "Yes", "null", "~", "2024-01-01", ".inf", "-1", "0x1F", "1_000",
    "1:20", "a: b", "x #c", "x:", "x ", " x", "\"q\"", "'q'", "- x", "&anc", "*ali", "%x", "@x",
    "`x", "|", ">", "?x", ":x", "!tag x", "=", "<<", "{a}", "[a]", "tab\there", "a\u2028b",
    "a\x85b",
]  # fmt: skip


def _generated_frontmatter(rng):
    lines = []
    for _ in range(rng.randint(1, 6)):
        roll, key = rng.random(), rng.choice(_SIMPLE_KEYS)
        if roll < 0.6:
            lines.append(f"{key}: {rng.choice(_SIMPLE_VALUES)}")
        elif roll < 0.85:
            lines.append(f"{key}:")
            for _ in range(rng.randint(0, 3)):
                lines.append(rng.choice(["- ", "- ", "  - ", "-  "]) + rng.choice(_SIMPLE_VALUES))
        else:
            lines.append(rng.choice(["", "# c", "  x: y", "k:v", "---", "- a", "k:  v"]))
    return "\n".join(lines) + "\n"


def _read(text, libyaml):
    try:
        return card_module._load_frontmatter(text, 2, libyaml=libyaml)
    except ChimeraError as exc:
        return type(exc), str(exc)


def test_simple_frontmatter_is_read_exactly_as_both_yaml_readers_read_it():
    # The shortcut answers only for text it is sure of; there it must give what YAML gives
    # (values, key order, key lines), and it must answer for the corpus cards' frontmatter.
    import random

    rng = random.Random(12)
    answered = 0
    for _ in range(6000):
        text = _generated_frontmatter(rng)
        simple = card_module._simple_frontmatter(text, 2)
        if simple is None:
            continue
        answered += 1
        assert simple == _read(text, False) == _read(text, True), text
        assert list(simple[0]) == list(_read(text, False)[0])
    assert answered > 100
    fixtures = TESTS_DIR / "fixtures" / "lint-corpus" / "chimera-skills"
    for path in sorted(fixtures.glob("*/SKILL.md")):
        text = parse_card(path.read_bytes()).frontmatter_text
        simple = card_module._simple_frontmatter(text, 2)
        assert simple is not None and simple == _read(text, False), path


@pytest.mark.parametrize(
    "text",
    [
        "name: x\nname: y\n",  # a key given twice: the readers' error
        "name: x\ntriggers:\n",  # a bare key is null
        "name: x\ntriggers:\nversion: 1\n",
        "name: 1\n",
        "name: x",  # no final newline
        "",
    ],
)
def test_simple_frontmatter_leaves_what_it_is_not_sure_of_to_yaml(text):
    assert card_module._simple_frontmatter(text, 2) is None
