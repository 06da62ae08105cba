"""The SKILL.md card model: parse a card from its exact bytes into frontmatter, body and sections.

A card is YAML frontmatter between two ``---`` lines followed by a Markdown body. Parsing is
deliberately strict about the envelope (size, encoding, fences, YAML features) and lenient about
content: unknown keys and unknown or duplicate sections are kept so the linter can report them.
The raw bytes stay on the card because every hash, signature and lockfile entry is over them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

from chimera_cards.errors import ChimeraError

CARD_SECTIONS = ("Trigger", "Do", "Avoid", "Check", "Risk")
MAX_CARD_BYTES = 1024 * 1024
MAX_FRONTMATTER_BYTES = 64 * 1024
# Deep nesting in YAML makes the (recursive) composer blow the stack; no real card nests past a few.
MAX_FRONTMATTER_DEPTH = 32
# libyaml's C parser reads a card's frontmatter ~8x faster than PyYAML's pure-Python one. It is
# used when PyYAML was built with it; tests set this to False to run the pure path too.
LIBYAML = yaml.__with_libyaml__
CARD_FILENAME = "SKILL.md"
# Read when a folder has no SKILL.md, as the Agent Skills reference validator reads it.
LOWER_CARD_FILENAME = "skill.md"
FENCE = "---"
BOM = b"\xef\xbb\xbf"

AGENT_SKILLS_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
CHIMERA_KEYS = (
    "version",
    "kind",
    "provenance",
    "status",
    "triggers",
    "stage",
    "topic",
    "allowed_tools",
)
KNOWN_KEYS = frozenset(AGENT_SKILLS_KEYS + CHIMERA_KEYS)


class CardParseError(ChimeraError):
    """The bytes are not a well-formed card; the message names the problem and the line if known."""

    def __init__(self, message: str, *, line: int | None = None, path: str | None = None) -> None:
        where = "".join(
            part for part in (f"{path}: " if path else "", f"line {line}: " if line else "")
        )
        super().__init__(where + message)
        self.line = line
        self.path = path
        self.reason = message


class _EventScanRefusal(CardParseError):
    """An anchor, alias or nesting refused on libyaml's event stream (before composing)."""


class _YamlSyntaxError(CardParseError):
    """YAML's scanner or parser refused the frontmatter (not one of the card's own limits)."""


class CardReadError(ChimeraError):
    """The card cannot be read (missing, not a regular file, permissions): unreadable input."""

    exit_code = 2


@dataclass(frozen=True)
class Section:
    """A level-2 section of a card: its heading, where it starts and its body."""

    title: str  # heading text, e.g. "Risk"
    line: int  # 1-based line of the heading in the file
    text: str  # the section's Markdown body, heading excluded, stripped


@dataclass
class Card:
    """A parsed SKILL.md: the exact bytes, the frontmatter and the body's sections."""

    raw: bytes  # exact bytes as given; hashes are always over these
    frontmatter: dict  # every key, known or not
    body: str  # text after the closing fence (line endings normalised to LF)
    body_line: int  # 1-based file line where the body starts
    sections: list[Section]  # every level-2 heading, in order, duplicates kept
    path: str | None = None  # where it was read from, if anywhere
    frontmatter_text: str = ""  # the YAML between the fences, LF line endings (for scans)
    frontmatter_line: int = 2  # 1-based file line where the YAML starts
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key -> file line
    # File lines [start, end) of every fenced or indented code block, at any depth: text there is
    # shown verbatim when the card is rendered.
    code_lines: tuple[tuple[int, int], ...] = ()
    # Set when strict YAML refuses the frontmatter and it was read as Claude Code repairs it (see
    # _repaired_frontmatter): the card loads in that agent, so it is scanned, and lint says why
    # other readers refuse it.
    strict_yaml_error: str | None = None
    strict_yaml_line: int | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()

    @property
    def name(self) -> str | None:
        value = self.frontmatter.get("name")
        return value if isinstance(value, str) else None

    @property
    def description(self) -> str | None:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else None

    @property
    def metadata(self) -> dict:
        """The Agent Skills ``metadata`` map (empty when absent or not a mapping)."""
        value = self.frontmatter.get("metadata")
        return value if isinstance(value, dict) else {}

    def chimera_field(self, key: str) -> object:
        """A Chimera field: top-level (Chimera's own cards) or under ``metadata`` (spec-valid
        cards keep extra fields there); None when neither has it.
        """
        if key in self.frontmatter:
            return self.frontmatter[key]
        return self.metadata.get(key)

    @property
    def triggers(self) -> list[str]:
        if "triggers" in self.frontmatter:
            value = self.frontmatter["triggers"]
        else:
            # metadata values are strings in the spec: one trigger per line.
            value = self.metadata.get("triggers")
            if isinstance(value, str):
                return [line.strip() for line in value.splitlines() if line.strip()]
        if isinstance(value, str):
            return [value]
        if isinstance(value, list):
            return [str(item) for item in value if isinstance(item, (str, int, float))]
        return []

    @property
    def unknown_keys(self) -> list[str]:
        return [key for key in self.frontmatter if key not in KNOWN_KEYS]

    def section(self, title: str) -> Section | None:
        """The first section with exactly this title, or None."""
        for section in self.sections:
            if section.title == title:
                return section
        return None


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start]
        line = prefix.count(b"\n") + 1
        raise CardParseError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line=line
        ) from None


class _CardYamlLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors, aliases and deep nesting while composing, before anything
    is constructed, so an alias bomb is caught while it is still a few hundred bytes.
    """

    def __init__(self, stream: str, first_line: int) -> None:
        super().__init__(stream)
        self._first_line = first_line
        self._depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        line = event.start_mark.line + self._first_line
        if isinstance(event, yaml.AliasEvent):
            # Every anchor is refused before its alias, so an alias met here names no anchor:
            # invalid YAML for every reader, not only refused by this one.
            raise _YamlSyntaxError(
                f"YAML alias '*{event.anchor}' in frontmatter is not allowed", line=line
            )
        if getattr(event, "anchor", None) is not None:
            raise CardParseError(
                f"YAML anchor '&{event.anchor}' in frontmatter is not allowed", line=line
            )
        # The composer recurses per level; refuse deep nesting before it can exhaust the stack.
        self._depth += 1
        try:
            if self._depth > MAX_FRONTMATTER_DEPTH:
                raise CardParseError(
                    f"frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels", line=line
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _yaml_error(exc: yaml.YAMLError, text: str, first_line: int) -> CardParseError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    line = mark.line + first_line if mark is not None else None
    if isinstance(exc, yaml.reader.ReaderError):
        # The reader refuses control characters; it reports a character offset, not a line.
        line = text.count("\n", 0, exc.position) + first_line
    # What no YAML reader accepts, so an agent's repair of it cannot disagree with a strict read;
    # a redefined anchor is not among them (YAML 1.2 readers take it).
    syntax = isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError)) or (
        isinstance(exc, yaml.composer.ComposerError) and problem == "found undefined alias"
    )
    error = _YamlSyntaxError if syntax else CardParseError
    return error(f"invalid YAML in frontmatter: {problem}", line=line)


def _key_lines(node: yaml.Node | None, first_line: int) -> dict[str, int]:
    """File line of each top-level key, so lint findings can point at the key."""
    lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _value in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                lines.setdefault(key_node.value, key_node.start_mark.line + first_line)
    return lines


# A lone surrogate can only come from an escape ("\ud800"): decoded UTF-8 never holds one.
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def _check_nodes(node: yaml.Node | None, first_line: int, escapes: bool) -> None:
    """Refuse what a mapping must not hold: a key given twice (YAML would keep the last one
    silently, so a reviewer and the loader could read different values) and, where the text has
    escapes, strings that are not Unicode scalar values (a lone surrogate cannot be encoded, so
    every later write or render of the card would fail).
    """
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        line = current.start_mark.line + first_line
        if isinstance(current, yaml.ScalarNode):
            bad = _SURROGATE_RE.search(current.value) if escapes else None
            if bad is not None:
                raise CardParseError(
                    f"frontmatter holds U+{ord(bad.group()):04X}, a lone surrogate, which is not "
                    "a Unicode scalar value",
                    line=line,
                )
        elif isinstance(current, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key_node, value_node in current.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key_line = key_node.start_mark.line + first_line
                    if key_node.value in seen:
                        raise CardParseError(
                            f"duplicate frontmatter key {key_node.value!r} (first on line "
                            f"{seen[key_node.value]})",
                            line=key_line,
                        )
                    seen[key_node.value] = key_line
                stack.append(key_node)
                stack.append(value_node)
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)


_NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)
_COLLECTION_STARTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_ENDS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _check_events(text: str, first_line: int) -> None:
    """The composer's refusals (anchor, alias, nesting), made on libyaml's event stream before
    anything is composed or constructed; events come one at a time, so a bomb stops at its
    first anchor.
    """
    depth = 0  # collections open around the next node
    for event in yaml.parse(text, Loader=yaml.CSafeLoader):
        if isinstance(event, _NODE_EVENTS):
            assert event.start_mark is not None  # the parser marks every event it emits
            line = event.start_mark.line + first_line
            if isinstance(event, yaml.AliasEvent):
                raise _EventScanRefusal(
                    f"YAML alias '*{event.anchor}' in frontmatter is not allowed", line=line
                )
            if event.anchor is not None:
                raise _EventScanRefusal(
                    f"YAML anchor '&{event.anchor}' in frontmatter is not allowed", line=line
                )
            if depth + 1 > MAX_FRONTMATTER_DEPTH:
                raise _EventScanRefusal(
                    f"frontmatter nests deeper than {MAX_FRONTMATTER_DEPTH} levels", line=line
                )
            if isinstance(event, _COLLECTION_STARTS):
                depth += 1
        elif isinstance(event, _COLLECTION_ENDS):
            depth -= 1


# Every node nested one level deeper needs one of these indicators (a block key or entry, a flow
# collection), and anchors and aliases need '&' and '*'; text with neither and fewer indicators
# than the depth limit cannot hold what the event scan refuses, so the scan is skipped for it.
_NESTING_INDICATOR_RE = re.compile(r"[:?-](?=\s|$)|[\[{]", re.MULTILINE)


def _needs_event_scan(text: str) -> bool:
    if "&" in text or "*" in text:
        return True
    return len(_NESTING_INDICATOR_RE.findall(text)) >= MAX_FRONTMATTER_DEPTH


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
# Keys SafeConstructor rewrites before building a mapping ("<<" merges, "=" becomes a string).
_SPECIAL_KEY_TAGS = ("tag:yaml.org,2002:merge", "tag:yaml.org,2002:value")


class _NotPlain(Exception):
    """A node the direct construction leaves to the constructor as a whole document."""


def _construct_plain(node: yaml.Node, loader: yaml.CSafeLoader) -> object:
    """What ``loader.construct_document(node)`` gives, built directly for the nodes frontmatter
    is made of (strings, mappings, sequences: a third of the cost); any other scalar (a number,
    a date, null) goes through the constructor, and a special key or an unhashable one raises
    _NotPlain. Only for text without anchors: an alias would be built twice, not shared."""
    tag = node.tag
    if tag == _STR_TAG and type(node) is yaml.ScalarNode:
        return node.value
    if tag == _MAP_TAG and type(node) is yaml.MappingNode:
        out = {}
        for key_node, value_node in node.value:
            if key_node.tag in _SPECIAL_KEY_TAGS:
                raise _NotPlain
            key = _construct_plain(key_node, loader)
            try:
                hash(key)
            except TypeError:
                raise _NotPlain from None
            out[key] = _construct_plain(value_node, loader)
        return out
    if tag == _SEQ_TAG and type(node) is yaml.SequenceNode:
        return [_construct_plain(child, loader) for child in node.value]
    return loader.construct_object(node, deep=True)


def _construct_with_libyaml(text: str, first_line: int) -> tuple[object, yaml.Node | None]:
    if _needs_event_scan(text):
        _check_events(text, first_line)
    loader = yaml.CSafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if "&" not in text and "*" not in text:  # no anchor, so no alias: nothing is shared
            try:
                return _construct_plain(node, loader), node
            except _NotPlain:
                pass
        return loader.construct_document(node), node
    finally:
        loader.dispose()


def _construct_pure(text: str, first_line: int) -> tuple[object, yaml.Node | None]:
    try:
        loader = _CardYamlLoader(text, first_line)  # the reader refuses control characters here
        try:
            node = loader.get_single_node()
            value = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, text, first_line) from None
    except RecursionError:
        raise CardParseError("frontmatter nests too deeply", line=first_line) from None
    return value, node


# Inputs on which libyaml and PyYAML's pure-Python reader are known to disagree (found by
# comparing the two on generated frontmatter): tabs (PyYAML refuses them inside plain scalars),
# a BOM inside the stream (libyaml drops it, PyYAML keeps it in the key), tags, and a comment
# glued to a block scalar header. Those go the pure way, so they are read exactly as before.
_LIBYAML_DISAGREES = re.compile(r"[\t\ufeff!]|[|>][-+0-9]*#")


def _checked(
    value: object, node: yaml.Node | None, first_line: int, escapes: bool = True
) -> tuple[dict, dict[str, int]]:
    _check_nodes(node, first_line, escapes)
    if value is None:
        raise CardParseError("frontmatter is empty; expected a mapping of keys", line=first_line)
    if not isinstance(value, dict):
        raise CardParseError(
            f"frontmatter must be a mapping of keys, not a {type(value).__name__}", line=first_line
        )
    for key in value:
        if not isinstance(key, str):
            # YAML 1.1 turns `on:`/`yes:` into booleans; say so rather than carry a non-text key.
            raise CardParseError(
                f"frontmatter key {key!r} is not a string (quote it)", line=first_line
            )
    return value, _key_lines(node, first_line)


# Frontmatter as most cards write it: "key: text" lines and "key:" lines followed by "- text"
# items, every line at the margin, every value a plain scalar that YAML reads as the text itself.
# Read without YAML (composing nodes costs more than the rest of a card's parse); anything else,
# or anything in doubt, goes to the YAML readers, so the result is always theirs.
_SIMPLE_LINE_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(?: (.+))?|- (.+)")
# What a plain scalar may not start with (YAML indicators, quotes, space), hold (a ": " or " #"
# that would end it, a tab, a character YAML does not take as printable or as a line break) or
# end with (":" or a space).
_PLAIN_FIRST = frozenset("-?:,[]{}#&*!|>'\"%@` ")
_PLAIN_BAD_CHAR_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def _plain_text(value: str) -> bool:
    """Whether YAML reads ``value``, a plain scalar on one line, as exactly this string."""
    if (
        value[0] in _PLAIN_FIRST
        or value[-1] in ": "
        or ": " in value
        or " #" in value
        or _PLAIN_BAD_CHAR_RE.search(value)
    ):
        return False
    resolvers = yaml.SafeLoader.yaml_implicit_resolvers
    for group in (resolvers.get(value[0]), resolvers.get(None)):
        for _tag, regexp in group or ():
            if regexp.match(value):
                return False  # a number, boolean, null, date, ...: YAML makes it something else
    return True


def _simple_frontmatter(text: str, first_line: int) -> tuple[dict, dict[str, int]] | None:
    """The frontmatter and key lines YAML gives for simple text (see _SIMPLE_LINE_RE); None for
    any other text."""
    if not text.endswith("\n"):
        return None
    frontmatter: dict[str, str | list[str]] = {}
    key_lines: dict[str, int] = {}
    items: list[str] | None = None  # the list the "- " lines go to (after a bare "key:")
    for number, line in enumerate(text.split("\n")[:-1]):  # the text ends with "\n"
        match = _SIMPLE_LINE_RE.fullmatch(line)
        if match is None:
            return None
        key, value, item = match.groups()
        if item is not None:
            if items is None or not _plain_text(item):
                return None
            items.append(item)
            continue
        if items == [] or key in frontmatter or not _plain_text(key):
            return None  # a bare key without items (null), or a key given twice
        if value is None:
            items = frontmatter[key] = []
        elif _plain_text(value):
            items = None
            frontmatter[key] = value
        else:
            return None
        key_lines[key] = first_line + number
    if not frontmatter or items == []:
        return None
    return frontmatter, key_lines


def _load_frontmatter(
    text: str, first_line: int, *, libyaml: bool | None = None
) -> tuple[dict, dict[str, int]]:
    size = len(text.encode("utf-8"))
    if size > MAX_FRONTMATTER_BYTES:
        raise CardParseError(
            f"frontmatter is {size} bytes; the limit is {MAX_FRONTMATTER_BYTES}", line=first_line
        )
    if libyaml is None and LIBYAML:
        simple = _simple_frontmatter(text, first_line)
        if simple is not None:
            return simple
    escapes = "\\" in text
    if not (LIBYAML if libyaml is None else libyaml) or _LIBYAML_DISAGREES.search(text):
        return _checked(*_construct_pure(text, first_line), first_line, escapes)
    scan_refusal = None
    try:
        return _checked(*_construct_with_libyaml(text, first_line), first_line, escapes)
    except CardParseError as exc:
        if isinstance(exc, _EventScanRefusal):
            scan_refusal = exc
    except (yaml.YAMLError, RecursionError):
        pass
    # Refused: libyaml words errors differently, and may stumble where PyYAML does not; the pure
    # path gives the message and line cards have always got (errors are rare, so reading twice
    # costs nothing in bulk imports).
    result = _checked(*_construct_pure(text, first_line), first_line, escapes)
    if scan_refusal is not None:
        raise scan_refusal  # never accept what the event scan refused, whatever the pure path says
    return result


@functools.lru_cache(maxsize=1)
def _block_parser() -> MarkdownIt:
    """CommonMark with only the block-level pass: the block rules already set each heading's
    inline token ``.content`` (all the section splitter reads), so the inline pass (emphasis,
    links, ...) is skipped; it was half the Markdown cost. Built once: construction costs more
    than parsing a card. Imported here: most cards never need it (see ``_scan_blocks``).
    """
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").disable(["inline", "text_join"])


def _markdown_blocks(body: str) -> tuple[list[tuple[str, int, int]], list[tuple[int, int]]]:
    """Top-level level-2 headings (title, first line index, index of the line after it) and code
    blocks (start, end line index) from markdown-it's token stream.
    """
    tokens = _block_parser().parse(body)
    heads: list[tuple[str, int, int]] = []
    code: list[tuple[int, int]] = []
    for index, token in enumerate(tokens):
        if token.type in ("fence", "code_block") and token.map:
            code.append((token.map[0], token.map[1]))
        elif token.type == "heading_open" and token.tag == "h2" and token.level == 0 and token.map:
            inline = tokens[index + 1]
            title = inline.content.strip() if inline.type == "inline" else ""
            heads.append((title, token.map[0], token.map[1]))
    return heads, code


def _sections(body: str, body_line: int) -> tuple[list[Section], tuple[tuple[int, int], ...]]:
    """Level-2 headings at the top level of the Markdown, and the file lines of every code block.

    Reading the block structure (not matching a regex) is what makes a ``## Risk`` inside a fenced
    or indented code block body text rather than a section.
    """
    blocks = _scan_blocks(body)
    heads, code = blocks if blocks is not None else _markdown_blocks(body)
    lines = body.split("\n")
    sections = []
    for number, (title, start, after) in enumerate(heads):
        end = heads[number + 1][1] if number + 1 < len(heads) else len(lines)
        text = "\n".join(lines[after:end]).strip()
        sections.append(Section(title=title, line=body_line + start, text=text))
    return sections, tuple((body_line + start, body_line + end) for start, end in code)


# The line scanner below reads the Markdown shapes real cards use (ATX headings at the margin,
# paragraphs, simple lists, fences at the margin, links) without markdown-it, which costs about half
# of a card's parse. Anything that could make its answer differ from markdown-it's -- a tab or NUL,
# an indented fence, a blockquote, HTML, a possible link definition, a setext underline or thematic
# break, an empty or deeply nested list item, an indented line that could open a code block --
# returns None, and the caller parses the card with markdown-it instead.
_ATX_RE = re.compile(r"(#{1,6})(?: |$)")
_FENCE_OPEN_RE = re.compile(r"(`{3,}|~{3,})(.*)")
_LIST_MARKER_RE = re.compile(r"(?:[-*+]|[0-9]{1,9}[.)])( +|$)")
# Setext underlines and thematic breaks: either changes what the lines around it are, except a
# thematic break that follows no paragraph, which only ends what came before.
_RULE_RE = re.compile(r"(?:=+|-+|(?:\* *){3,}|(?:- *){3,}|(?:_ *){3,}) *")
_BREAK_RE = re.compile(r"(?:(?:\* *){3,}|(?:- *){3,}|(?:_ *){3,})")
_HANDOFF_STARTS = ("#", ">", "<", "```", "~~~")
# Deepest list nesting (indentation plus markers on one line) the scanner reads itself; markdown-it
# stops parsing at its nesting limit, so deep lists go to it.
_MAX_SCANNED_DEPTH = 12


def _closes_fence(line: str, fence: str) -> bool:
    stripped = line.lstrip(" ")
    return (
        len(line) - len(stripped) < 4
        and stripped.startswith(fence)
        and not stripped.rstrip(" ").strip(fence[0])
    )


def _h2_title(line: str) -> str:
    # markdown-it drops a closing run of '#' only when a space comes before it.
    title = line[2:].rstrip(" ")
    cut = title.rstrip("#")
    if cut and cut[-1] == " ":
        title = cut
    return title.strip()


def _item_content(stripped: str, indent: int) -> tuple[str, int] | None:
    """A line's text after its list markers, and the column it starts at; None when the line is
    one only markdown-it can place.
    """
    content = stripped
    depth = indent // 2
    while (marker := _LIST_MARKER_RE.match(content)) is not None:
        if not marker.group(1) or len(marker.group(1)) > 4 or marker.end() == len(content):
            return None  # an empty item, or an item that opens with indented code
        content = content[marker.end() :]
        depth += 1
    if depth >= _MAX_SCANNED_DEPTH:
        return None
    if content[:1] == "[" and _may_define_link(content):
        return None
    if content is stripped:
        # A '#' at the margin that is not a heading ("#tag", "#######") is paragraph text.
        if content.startswith(_HANDOFF_STARTS) and not (indent == 0 and content[0] == "#"):
            return None
    elif content.startswith(_HANDOFF_STARTS) or _RULE_RE.fullmatch(content):
        return None
    return content, indent + len(stripped) - len(content)


def _may_define_link(content: str) -> bool:
    """Whether a line starting with "[" may open a link reference definition, read as
    markdown-it's reference rule reads a label: up to the first "]" (a backslash escapes the
    next character), holding no "[", and followed by ":". A link or a task box (``[text](url)``,
    ``[ ] todo``) settles it on its own line and is paragraph text; a label that runs on past
    the line is markdown-it's to read.
    """
    at = 1
    while at < len(content):
        char = content[at]
        if char == "[":
            return False
        if char == "]":
            return content[at + 1 : at + 2] == ":"
        at += 2 if char == "\\" else 1
    return True


_THEMATIC_BREAK = -1


def _text_line(stripped: str, indent: int, paragraph: bool, item_column: int) -> int | None:
    """Read a line that is neither blank nor a fence or heading at the margin.

    Returns:
        Where the text of the latest list item starts after it (it continues or opens a
        paragraph), _THEMATIC_BREAK, or None when only markdown-it can place the line.
    """
    if indent >= 4 and not paragraph:
        return None  # an indented code block, or list content only markdown-it can place
    if _RULE_RE.fullmatch(stripped):
        if paragraph or indent >= 4 or not _BREAK_RE.fullmatch(stripped):
            return None
        return _THEMATIC_BREAK
    item = _item_content(stripped, indent)
    if item is None:
        return None
    if item[0] is stripped:
        return item_column
    if 4 <= indent < item_column:
        return None  # an item that may leave every open list, where it would be code
    return item[1]


def _opens_fence(stripped: str) -> str | None:
    """The marker of the fence a line (without its indentation) opens, "" if it opens none;
    None for a backtick line with a backtick after it (inline code, not a fence)."""
    opened = _FENCE_OPEN_RE.match(stripped)
    if opened is None:
        return ""
    if opened.group(1)[0] == "`" and "`" in opened.group(2):
        return None
    return opened.group(1)


def _closes_fence_at(line: str, fence: str, column: int) -> bool | None:
    """Whether a line inside a fence read from ``column`` closes it; None when the line ends
    the list item holding the fence (and so the fence), which only markdown-it places."""
    if column:
        if not line.strip(" "):
            return False
        if len(line) - len(line.lstrip(" ")) < column:
            return None
        line = line[column:]
    return _closes_fence(line, fence)


def _certain_item(stripped: str, indent: int, paragraph: bool, in_item: bool) -> bool:
    """Whether a line the scanner read as a list item is one for sure, so a fence inside it can
    be placed: a single marker at the margin that opens a list (after no paragraph, or a bullet
    or ``1.``) or follows an open item (its paragraph has deeper indentation, so it can end it).
    """
    marker = _LIST_MARKER_RE.match(stripped)
    if indent or marker is None or _LIST_MARKER_RE.match(stripped, marker.end()):
        return False
    number = stripped[: marker.start(1) - 1]
    return not paragraph or in_item or not number.isdigit() or int(number) == 1


def _still_in_item(
    stripped: str, indent: int, paragraph: bool, in_item: bool, column: int, item_column: int
) -> bool:
    """Whether a certain top-level list item is open after a text line (``_text_line`` gave
    ``column``; ``item_column`` and ``in_item`` are from before it)."""
    if column == _THEMATIC_BREAK:
        return False
    if column != item_column or _LIST_MARKER_RE.match(stripped):
        return _certain_item(stripped, indent, paragraph, in_item)
    if indent < item_column and not paragraph:
        return False  # not a lazy continuation: the item has ended
    return in_item


def _next_state(
    stripped: str, indent: int, paragraph: bool, in_item: bool, item_column: int
) -> tuple[bool, bool, int] | None:
    """(paragraph, in_item, item_column) after a text line (``_text_line``); None when only
    markdown-it can place it."""
    if stripped[0].isalpha() and (indent < 4 or paragraph) and indent < 2 * _MAX_SCANNED_DEPTH:
        # Plain text (most lines): no marker, fence, heading or rule starts with a letter, so
        # this is what the general path below makes of it, without its regexes.
        return True, in_item and (paragraph or indent >= item_column), item_column
    marker = None if indent else _LIST_MARKER_RE.match(stripped)
    if marker is not None and len(marker.group(1)) <= 4 and stripped[marker.end() :][:1].isalpha():
        # An item at the margin with text after one marker (the other common line): what
        # _text_line and _still_in_item (via _certain_item) make of it, without their regexes.
        number = stripped[: marker.start(1) - 1]
        certain = not paragraph or in_item or not number.isdigit() or int(number) == 1
        return True, certain, marker.end()
    column = _text_line(stripped, indent, paragraph, item_column)
    if column is None:
        return None
    in_item = _still_in_item(stripped, indent, paragraph, in_item, column, item_column)
    if column == _THEMATIC_BREAK:
        return False, in_item, item_column
    return True, in_item, column


def _scan_blocks(body: str) -> tuple[list[tuple[str, int, int]], list[tuple[int, int]]] | None:
    """Top-level level-2 headings and fenced code blocks exactly as ``_markdown_blocks`` gives
    them; None when the text holds anything the scanner does not read itself.
    """
    if "\t" in body or "\x00" in body:
        return None
    lines = body.split("\n")
    # markdown-it counts no line after a final "\n", nor a final line of only spaces.
    count = len(lines) - 1 if not lines[-1].strip(" ") else len(lines)
    heads: list[tuple[str, int, int]] = []
    code: list[tuple[int, int]] = []
    paragraph = False  # the previous line continues a paragraph
    item_column = 1 << 30  # where the latest list item's text starts
    # That item is a top-level one still open for sure (_certain_item), so a fence indented to
    # its text is a fence inside it.
    in_item = False
    fence = ""  # the open fence's marker
    fence_start = 0
    fence_column = 0  # the column its lines are read from (an item's text column, or 0)
    for number in range(count):
        line = lines[number]
        if fence:
            closes = _closes_fence_at(line, fence, fence_column)
            if closes is None:
                return None
            if closes:
                code.append((fence_start, number + 1))
                fence = ""
            continue
        stripped = line.lstrip(" ")
        if not stripped:
            paragraph = False
            continue
        indent = len(line) - len(stripped)
        # A fence at the margin (which ends any list), or indented to an open item's text.
        if stripped[0] in "`~" and (
            indent == 0 or (in_item and item_column <= indent <= item_column + 3)
        ):
            marker = _opens_fence(stripped)
            if marker is None:
                return None
            if marker:
                fence, fence_start, paragraph = marker, number, False
                fence_column = item_column if indent else 0
                in_item = in_item and indent > 0
                continue
        heading = _ATX_RE.match(line) if indent == 0 else None
        if heading:
            if len(heading.group(1)) == 2:
                heads.append((_h2_title(line), number, number + 1))
            paragraph = in_item = False  # a heading ends any list
            continue
        state = _next_state(stripped, indent, paragraph, in_item, item_column)
        if state is None:
            return None
        paragraph, in_item, item_column = state
    if fence:  # left open: it runs to the end, unless it is in a list item (markdown-it's call)
        return None if fence_column else (heads, [*code, (fence_start, count)])
    return heads, code


def code_block_lines(text: str, first_line: int = 1) -> tuple[tuple[int, int], ...]:
    """File lines [start, end) of every fenced or indented code block of a Markdown text.

    Args:
        text: Markdown with LF line endings.
        first_line: the file line of the text's first line.

    Returns:
        The ranges, in order.
    """
    return _sections(text, first_line)[1]


def parse_card(data: bytes, path: str | None = None) -> Card:
    """Parse a SKILL.md from its exact bytes. Raises CardParseError with the line where relevant.

    A file without frontmatter is a parse error: every Agent Skills card carries at least ``name``
    and ``description``, and a card without a name cannot be stored, pinned or reviewed.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError("parse_card takes bytes")
    data = bytes(data)
    try:
        return _parse(data, path)
    except CardParseError as exc:
        if path is None or exc.path is not None:
            raise
        raise CardParseError(exc.reason, line=exc.line, path=path) from None


def _parse(data: bytes, path: str | None) -> Card:
    if len(data) > MAX_CARD_BYTES:
        raise CardParseError(f"card is {len(data)} bytes; the limit is {MAX_CARD_BYTES}")
    text = _decode(data[len(BOM) :] if data.startswith(BOM) else data)
    raw_text = text
    # One line model for everything (fences, YAML marks, markdown-it maps): CRLF and lone CR are
    # line breaks, as CommonMark treats them.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[0] != FENCE:
        raise CardParseError("no YAML frontmatter: the first line must be exactly '---'", line=1)
    close = None
    for number in range(1, len(lines)):
        if lines[number] == FENCE:
            close = number
            break
    if close is None:
        raise CardParseError("frontmatter opened on line 1 is never closed by a '---' line", line=1)
    frontmatter_text = "\n".join(lines[1:close])
    if frontmatter_text:
        frontmatter_text += "\n"
    strict_yaml_error = strict_yaml_line = None
    try:
        frontmatter, key_lines = _load_frontmatter(frontmatter_text, first_line=2)
    except CardParseError as refused:
        # An anchor refused on the way may sit in text no reader accepts: then it is a syntax error.
        exc = refused if isinstance(refused, _YamlSyntaxError) else _syntax_error(frontmatter_text)
        # Claude Code repairs only frontmatter with LF line ends (measured at the wire).
        crlf = "\r" in raw_text[: len(frontmatter_text) + 8]
        if exc is None or crlf:
            raise
        repaired = _repaired_frontmatter(frontmatter_text)
        if repaired == frontmatter_text:
            raise
        try:
            frontmatter, key_lines = _load_frontmatter(repaired, first_line=2)
        except CardParseError:
            raise exc from None
        strict_yaml_error, strict_yaml_line = exc.reason, exc.line
    body_line = close + 2
    body = "\n".join(lines[close + 1 :])
    sections, code_lines = _sections(body, body_line)
    return Card(
        raw=data,
        frontmatter=frontmatter,
        body=body,
        body_line=body_line,
        sections=sections,
        path=path,
        frontmatter_text=frontmatter_text,
        frontmatter_line=2,
        key_lines=key_lines,
        code_lines=code_lines,
        strict_yaml_error=strict_yaml_error,
        strict_yaml_line=strict_yaml_line,
    )


# Claude Code reads frontmatter that strict YAML refuses by turning leading tabs into two spaces
# and double-quoting each top-level value that holds a ": " or a YAML indicator character (block
# headers included) and is not already wrapped in quotes; nested values are left as they are. A
# card so repaired loads in that agent, so it must be read, scanned and reviewed as it loads
# there, not refused unread. The rule was measured on the pinned CLI (tests/wire).
_TOP_LEVEL_VALUE_RE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*):[ \t]+(\S.*?)[ \t]*")
_NEEDS_QUOTES_RE = re.compile(r": |[{}\[\]*&#!|>%@`]")


def _syntax_error(text: str) -> CardParseError | None:
    """The scanner's or parser's refusal of ``text``, if any (events only: nothing is composed)."""
    try:
        for _event in yaml.parse(text, Loader=yaml.SafeLoader):
            pass
    except (yaml.scanner.ScannerError, yaml.parser.ParserError) as exc:
        return _yaml_error(exc, text, first_line=2)
    except yaml.YAMLError:
        pass
    return None


def _repaired_frontmatter(text: str) -> str:
    lines = []
    for raw in text.split("\n"):
        tabs = len(raw) - len(raw.lstrip("\t"))
        line = "  " * tabs + raw[tabs:]
        match = _TOP_LEVEL_VALUE_RE.fullmatch(line)
        if match is not None:
            key, value = match.groups()
            wrapped = len(value) > 1 and value[0] == value[-1] and value[0] in "\"'"
            if not wrapped and _NEEDS_QUOTES_RE.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                line = f'{key}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def _card_file(path: Path) -> Path:
    if not path.is_dir():
        return path
    return card_file_in(path) or path / CARD_FILENAME


def read_card_bytes(path: str | os.PathLike) -> tuple[bytes, str]:
    """Read a SKILL.md (or a card directory's SKILL.md) -> (exact bytes, resolved file path).

    Refuses anything that is not a regular file, anything over MAX_CARD_BYTES, and a symlinked
    SKILL.md whose target lies outside its card directory (a card must not smuggle in another file).
    """
    given = Path(path)
    if not given.exists() and not given.is_symlink():
        raise CardReadError(f"{given}: no such file or directory")
    file = _card_file(given)
    if not file.exists() and not file.is_symlink():
        raise CardReadError(f"{given}: no {CARD_FILENAME} in this directory")
    try:
        resolved = file.resolve(strict=True)
    except (OSError, RuntimeError):
        raise CardReadError(f"{file}: broken or looping symlink") from None
    # Resolving walks every path component with lstat; do the card directory only when needed.
    if file.is_symlink() and not resolved.is_relative_to(file.parent.resolve()):
        raise ChimeraError(f"{file}: symlink points outside the card directory ({resolved})")
    try:
        # O_NONBLOCK so a FIFO planted as SKILL.md cannot hang us before the type check.
        fd = os.open(resolved, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise CardReadError(f"{file}: cannot read ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CardReadError(f"{file}: not a regular file")
        if info.st_size > MAX_CARD_BYTES:
            raise CardParseError(
                f"card is {info.st_size} bytes; the limit is {MAX_CARD_BYTES}", path=str(file)
            )
        chunks = []
        remaining = MAX_CARD_BYTES + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except IsADirectoryError:
        raise CardReadError(f"{file}: is a directory") from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > MAX_CARD_BYTES:  # grew between fstat and read
        raise CardParseError(f"card is over the {MAX_CARD_BYTES}-byte limit", path=str(file))
    return data, str(resolved)


def load_card(path: str | os.PathLike) -> Card:
    """Read and parse one card; parse errors name the file."""
    data, resolved = read_card_bytes(path)
    return parse_card(data, path=resolved)


def find_card_files(path: str | os.PathLike) -> list[Path]:
    """A SKILL.md file, a card directory, or a folder of card directories -> the SKILL.md files.

    Only one level of card directories is searched; the result is sorted so output is stable.
    An existing folder with no cards gives an empty list (the caller decides whether that is bad).
    """
    root = Path(path)
    if not root.exists():
        raise CardReadError(f"{root}: no such file or directory")
    if not root.is_dir():
        return [root]
    own = card_file_in(root)
    if own is not None:
        return [own]
    try:
        children = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise CardReadError(f"{root}: cannot list ({exc.strerror})") from None
    found = [card_file_in(child) for child in children if child.is_dir()]
    return [f for f in found if f is not None]


def card_file_in(folder: Path) -> Path | None:
    """The card file of a folder as the reference validator finds it: ``SKILL.md``, else a
    lone ``skill.md``; None when it has neither."""
    for name in (CARD_FILENAME, LOWER_CARD_FILENAME):
        candidate = folder / name
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return None
