"""Frontmatter strict YAML refuses, read as Claude Code reads it: proved at the wire.

Claude Code repairs some frontmatter that strict YAML refuses (an unquoted ": " in a value, a
value starting with a YAML indicator, tab indentation) and lists the skill with the repaired
description; frontmatter it cannot repair is ignored and the skill is listed with its body's first
line. ``parse_card`` must agree with the pinned CLI on every case: where it reads a card, the
description the model received is the one parsed (so the scan and the review see what the agent
sees); where it refuses one, Claude Code did not read that frontmatter either.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from wire.agents import HEADLESS, AgentCli
from wire.model_server import ScriptedModelServer, say

from chimera_cards import parse_card
from chimera_cards._cards.card import CardParseError

pytestmark = pytest.mark.slow

# folder -> the frontmatter after its `name:` line. Each value holds a marker, so its listing line
# is found whatever Claude Code made of it.
CASES = {
    "colon-in-value": "description: Use when: the user asks for M_COLON things\n",
    "flow-bracket-start": "description: [beta] tool for M_BRACKET work\n",
    "alias-mark-start": "description: *star M_STAR text\n",
    "tag-mark-start": "description: !important M_BANG: yes\n",
    "anchor-mark-start": "description: &a M_AMP: x\n",
    "reserved-at-start": "description: @at M_AT\n",
    "reserved-backtick-start": "description: `bt M_BACKTICK\n",
    "directive-mark-start": "description: %pc M_PERCENT\n",
    "literal-mark-start": "description: |pipe M_PIPE\n",
    "quote-then-colon": 'description: "quoted" then: M_QUOTEMID more\n',
    "single-quote-then-colon": "description: 'tis M_SQUOTE: fine\n",
    "backslash-and-quotes": 'description: path C:\\dir "q": M_BACKSLASH\n',
    "comment-mark-kept": "license: MIT: x\ndescription: C# M_HASH #tail\n",
    "comment-after-colon": "description: Use when: M_COMMENT a # note\n",
    "tab-indented-map": "metadata:\n\tauthor: someone\ndescription: tab M_TABMAP desc\n",
    "spaces-trimmed": "description:   Use when: M_SPACES lots   \n",
    # Claude Code cannot repair these: it ignores the frontmatter, and parse_card refuses it.
    "block-header-quoted": "license: MIT: see file\ndescription: |\n  M_BLOCK literal\n",
    "tab-in-block": "description: >\n\tfolded M_TABBLOCK text\n",
    "nested-colon": "metadata:\n  note: Use when: x\ndescription: nest M_NESTED desc\n",
    "wrapped-quotes-inside": 'description: "ab" M_WRAPPED: "cd"\n',
    "continued-line": "description: Use when: M_CONT a\n  continued: line\n",
    "colon-at-line-end": "description: M_LINEEND ends with colon:\nlicense: a: b\n",
}
REFUSED = {
    "block-header-quoted",
    "tab-in-block",
    "nested-colon",
    "wrapped-quotes-inside",
    "continued-line",
    "colon-at-line-end",
}


def card_text(name: str) -> str:
    return f"---\nname: {name}\n{CASES[name]}---\n\nBody of {name}.\n"


def listed(text: str, name: str) -> str:
    found = re.findall(rf"^- {re.escape(name)}: (.*)$", text, re.MULTILINE)
    assert found, f"{name} is not in the skill listing"
    return html.unescape(found[0])


def test_every_frontmatter_is_read_as_the_pinned_claude_code_lists_it(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    for name in CASES:
        folder = project / ".claude" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(card_text(name), encoding="utf-8")
    with ScriptedModelServer([say("done")]) as server:
        env = claude_cli.session(tmp_path / "home", server.url)
        done = claude_cli.run(HEADLESS["claude"], cwd=project, env=env, input="Which skills?")
    assert done.returncode == 0, done.stderr[-2000:]
    listing = server.agent_requests[0].strings
    read: dict = {}
    refused: set[str] = set()
    for name in CASES:
        try:
            card = parse_card(card_text(name).encode(), f"{name}/SKILL.md")
        except CardParseError:
            refused.add(name)
            # Claude Code did not read this frontmatter either: it listed the body's first line.
            assert listed(listing, name) == f"Body of {name}.", name
            continue
        read[name] = card
        assert listed(listing, name) == card.description, name
    assert refused == REFUSED
    assert all(card.strict_yaml_error for card in read.values())
