"""The line scanner that finds sections and code blocks without markdown-it must agree with
markdown-it's block pass wherever it answers, and hand everything else to markdown-it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import TESTS_DIR
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chimera_cards._cards.card import _markdown_blocks, _scan_blocks, parse_card

FIXTURES = TESTS_DIR / "fixtures"
CHIMERA_CARDS = sorted((FIXTURES / "lint-corpus" / "chimera-skills").glob("*/SKILL.md"))


def _body(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("---\n") and "\n---\n" in text:
        return text.split("\n---\n", 1)[1]
    return text


def _assert_agrees(body: str) -> bool:
    scanned = _scan_blocks(body)
    if scanned is not None:
        assert scanned == _markdown_blocks(body), body
    return scanned is not None


@pytest.mark.parametrize(
    "path", sorted(FIXTURES.rglob("*.md")), ids=lambda p: str(p.relative_to(FIXTURES))
)
def test_scanner_agrees_with_markdown_it_on_fixture_markdown(path):
    _assert_agrees(_body(path))


def test_scanner_reads_the_real_chimera_cards_itself():
    # The fast path must be the one real cards take, or the scanner buys nothing.
    assert len(CHIMERA_CARDS) == 23
    read = sum(_scan_blocks(_body(path)) is not None for path in CHIMERA_CARDS)
    assert read == 23


@pytest.mark.parametrize(
    "body",
    [
        "  - nested\n\n    ```\n    x\n    ```\n",  # a fence in an item not at the margin
        "2. not a list\ntext\n3. still text\n\n   ```\n",  # an item only markdown-it places
        "- item\n\n  ```\n  code\nout of the item\n  ```\n",  # the item ends inside the fence
        "- item\n\n  ```\n  never closed\n",  # an item's fence left open
        "1. \n       code\n",  # an empty item (a marker and spaces): the next line is code
        "text\n---\n",  # a setext underline
        "intro\n\n    ## indented code\n",
        "> ## quoted\n",
        "<div>\n## html\n</div>\n",
        "## tab\theading\n",
        "[label]: /url\n    code\n",
        "``` not`a fence\n## x\n",
        "-\n    code\n",  # an empty list item
        "[label\nruns on]: /url\n    code\n",  # a label past its first line
        "- [a]: /url\n",  # a definition in an item
        "[a\\]: b\n",  # an escaped bracket: the label goes on
        "text\n\n[a]:\n/url\n",
    ],
)
def test_scanner_hands_ambiguous_markdown_to_markdown_it(body):
    assert _scan_blocks(body) is None


@pytest.mark.parametrize(
    "body",
    [
        "- item\n   ```\n   ## code\n   ```\n",
        "1. step\n   more\n2. step\n\n   ```python\n   ## code\n\n   ```\n3. next\n## Risk\n",
        "text\n- bullet\n  ~~~\n  x\n    ~~~\n",
        "1. a\n\n    ```\n    x\n    ```\n",  # indented by 1 inside the item: still a fence
    ],
)
def test_scanner_reads_fences_inside_list_items_at_the_margin(body):
    scanned = _scan_blocks(body)
    assert scanned is not None and scanned[1]
    assert scanned == _markdown_blocks(body)


@pytest.mark.parametrize(
    "body",
    [
        "- item\n- item\n   \n \u00c9a\n     ```\n     ```\n\n   \u00c9a\n",
        "* it\n     \n \n    \na\n   ~~~\n    ~~~\n  \n",
        "- item\n\nplain\n  ```\n  ## x\n  ```\n",
        # An item marker that cannot interrupt a paragraph does not open an item there.
        "  1234567890. toobig\n1234567890. toobig\n0. zero\n    ```\n      ```\n   + p\n- - n\n",
        "text\n2. two\n   ```\n   ## x\n   ```\n",
        "text\n1. one\n   ```\n   ## x\n   ```\n",
    ],
)
def test_a_plain_line_after_a_blank_ends_the_list_item_for_the_fence_that_follows(body):
    # Lines that start with a letter, or with one item marker and then a letter, take the
    # scanner's shortcuts; they must still end an item, or not open one, as markdown-it does.
    scanned = _scan_blocks(body)
    assert scanned is None or scanned == _markdown_blocks(body)


@pytest.mark.parametrize(
    "body",
    [
        "## Guides\n\n- [Python guide](./python.md) - patterns\n- [ ] a task\n- [x] done\n",
        "[Read this first](https://example.com)\n\n## Next\n\n```\n## code\n```\n",
        "1. step\n   [a link](x) after\n\n   ```\n   ## x\n   ```\n[[nested]] text\n",
        "[a] [b]: not a definition\n## Head\n",
    ],
)
def test_scanner_reads_links_and_task_boxes_itself(body):
    # A line opening with a link or a task box settles on that line that it defines no link.
    scanned = _scan_blocks(body)
    assert scanned is not None
    assert scanned == _markdown_blocks(body)


def test_sections_are_the_same_through_either_path():
    data = (
        b"---\nname: x\ndescription: y\n---\n## Do\n\nstep\n\n```\n## Risk\n```\n## Risk  ##\nr\n"
    )
    card = parse_card(data)
    body = card.body
    assert _scan_blocks(body) is not None
    assert [(s.title, s.line) for s in card.sections] == [("Do", 5), ("Risk", 12)]
    assert card.code_lines == ((9, 12),)


_LINE_STARTS = [
    "",
    "## ",
    "# ",
    "### ",
    "#",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "10. ",
    "- - ",
    "-  1. ",
    "```",
    "~~~",
    "````",
    "> ",
    "<",
    "[a]: ",
    "[a](b) ",
    "[ ] ",
    "[x]",
    "[a\\]: ",
    "[[a]]: ",
    "[a",
    "---",
    "***",
    "___",
    "===",
    "- ## ",
]
_LINE = st.builds(
    lambda indent, start, rest: " " * indent + start + rest,
    st.sampled_from([0, 0, 0, 1, 2, 3, 4, 5, 6, 8]),
    st.sampled_from(_LINE_STARTS),
    st.text(alphabet="ab #-*`~=_.)1 \t\u00a0", max_size=8),
)


@pytest.mark.slow
@settings(
    max_examples=600,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_LINE, max_size=14), st.sampled_from(["", "\n", "\n\n", "\n  "]))
def test_scanner_agrees_with_markdown_it_on_generated_markdown(lines, tail):
    _assert_agrees("\n".join(lines) + tail)


_ITEM_LINE = st.builds(
    lambda indent, start, rest: " " * indent + start + rest,
    st.sampled_from([0, 0, 0, 1, 2, 3, 3, 4, 5, 6]),
    st.sampled_from(
        [
            "- ",
            "* ",
            "1. ",
            "2. ",
            "3) ",
            "- - ",
            "1. 2. ",
            "-  ",
            "```",
            "~~~",
            "````",
            "``` a`",
            "",
            "## ",
            "---",
            "text ",
            "2. not ",
            "[a](b) ",
            "[ ] ",
            "[a]: ",
        ]
    ),
    st.sampled_from(["", "a", "b c", "```", "## x", " "]),
)


@pytest.mark.slow
@settings(
    max_examples=600,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(_ITEM_LINE, max_size=14), st.sampled_from(["", "\n", "\n\n"]))
def test_scanner_agrees_with_markdown_it_on_generated_lists_and_fences(lines, tail):
    _assert_agrees("\n".join(lines) + tail)
