"""Lint a parsed card: shape rules (name, description, sections, vocabularies) and the
hidden-instruction scan.

Every finding has a stable rule id, a severity, where there is one a file line, and an ``id``
derived from those and its message (the same bytes always give the same ids, so a reviewer can
accept a named finding). Shape rules depend on the profile: ``agent-skills`` (the default) is the
Agent Skills specification as skills-ref checks it; ``chimera`` adds the five sections and
Chimera's frontmatter.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from chimera_cards._cards.card import (
    AGENT_SKILLS_KEYS,
    CARD_FILENAME,
    CARD_SECTIONS,
    CHIMERA_KEYS,
    KNOWN_KEYS,
    LOWER_CARD_FILENAME,
    Card,
    CardParseError,
    CardReadError,
    code_block_lines,
    find_card_files,
    load_card,
)
from chimera_cards._scan.buildfiles import build_kind
from chimera_cards._scan.findings import (
    AGENT_SKILLS,
    CHIMERA,
    CHIMERA_REQUIRED,
    COMPATIBILITY_MAX,
    DEFAULT_PROFILE,
    DESCRIPTION_MAX,
    ERROR,
    INFO,
    NAME_MAX,
    PROFILES,
    SEVERITIES,
    VOCABULARIES,
    WARNING,
    Finding,
    UnknownProfileError,
    _Collector,
    _Lines,
)
from chimera_cards._scan.hidden import _escaped_scalar_findings, _scan
from chimera_cards._scan.hiddenchars import reveal
from chimera_cards.errors import ChimeraError

# --- shape rules -----------------------------------------------------------------------------

_NAME_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _key_line(card: Card, key: str) -> int:
    return card.key_lines.get(key, card.frontmatter_line)


def _name_findings(card: Card, dirname: str | None, chimera: bool) -> list[Finding]:
    name = card.frontmatter.get("name")
    line = _key_line(card, "name")
    if not isinstance(name, str) or not name.strip():
        return [Finding("name-missing", ERROR, "frontmatter has no string 'name'", line)]
    if chimera:
        problems = _ascii_name_problems(name)
        folder = dirname
    else:
        # As the reference validator: NFKC first, then Unicode lower case letters, digits and
        # hyphens; the folder's name is NFKC'd before comparing.
        name = unicodedata.normalize("NFKC", name.strip())
        problems = _spec_name_problems(name)
        folder = unicodedata.normalize("NFKC", dirname) if dirname is not None else None
    findings = []
    if problems:
        findings.append(
            Finding("name-format", ERROR, f"name {reveal(name)!r} " + "; ".join(problems), line)
        )
    if folder is not None and name != folder:
        findings.append(
            Finding(
                "name-dirname",
                ERROR,
                f"name {reveal(name)!r} differs from its directory {dirname!r}",
                line,
            )
        )
    return findings


def _ascii_name_problems(name: str) -> list[str]:
    problems = []
    if len(name) > NAME_MAX:
        problems.append(f"is {len(name)} characters (max {NAME_MAX})")
    if not re.fullmatch(r"[a-z0-9-]+", name):
        problems.append("may only contain lowercase letters, digits and hyphens")
    elif not _NAME_RE.fullmatch(name):
        problems.append("must not start or end with a hyphen or contain '--'")
    return problems


def _spec_name_problems(name: str) -> list[str]:
    problems = []
    if len(name) > NAME_MAX:
        problems.append(f"is {len(name)} characters (max {NAME_MAX})")
    if name != name.lower():
        problems.append("must be lower case")
    if name.startswith("-") or name.endswith("-") or "--" in name:
        problems.append("must not start or end with a hyphen or contain '--'")
    if not all(ch.isalnum() or ch == "-" for ch in name):
        problems.append("may only contain letters, digits and hyphens")
    return problems


def _description_findings(card: Card, chimera: bool) -> list[Finding]:
    value = card.frontmatter.get("description")
    line = _key_line(card, "description")
    if not isinstance(value, str) or not value.strip():
        return [
            Finding(
                "description-missing", ERROR, "frontmatter has no non-empty 'description'", line
            )
        ]
    if len(value) > DESCRIPTION_MAX:
        # The spec says must (and skills-ref refuses it), so both profiles do.
        return [
            Finding(
                "description-length",
                ERROR,
                f"description is {len(value)} characters (max {DESCRIPTION_MAX})",
                line,
            )
        ]
    return []


def _is_str_list(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _is_string_map(value: object) -> bool:
    # skills-ref reads metadata with strictyaml, where every scalar is a string: a number or a
    # boolean is read as its text, a nested list or mapping is not a string at all.
    return isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(item, (str, int, float)) and item is not None
        for key, item in value.items()
    )


def _has_trigger_lines(value: object) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return _is_str_list(value) and all(item.strip() for item in value)


# key -> (accepts the value, what it must be); the spec's fields, then Chimera's.
_SPEC_TYPES: dict[str, tuple] = {
    "license": (lambda v: isinstance(v, str), "a string"),
    "compatibility": (
        lambda v: isinstance(v, str) and 0 < len(v) <= COMPATIBILITY_MAX,
        f"a string of 1 to {COMPATIBILITY_MAX} characters",
    ),
    "metadata": (_is_string_map, "a mapping of string keys to string values"),
    "allowed-tools": (
        lambda v: isinstance(v, str) or _is_str_list(v),
        "a string or list of strings",
    ),
}
_CHIMERA_TYPES: dict[str, tuple] = {
    "allowed_tools": (
        lambda v: isinstance(v, str) or _is_str_list(v),
        "a string or list of strings",
    ),
    "version": (
        lambda v: isinstance(v, (str, int, float)) and not isinstance(v, bool),
        "a version string",
    ),
    "triggers": (
        lambda v: _is_str_list(v) and all(item.strip() for item in v),
        "a list of non-empty strings",
    ),
}


def _type_findings(card: Card, chimera: bool) -> list[Finding]:
    fm = card.frontmatter
    findings = []
    expect = {**_SPEC_TYPES, **_CHIMERA_TYPES} if chimera else _SPEC_TYPES
    for key, (ok, wanted) in expect.items():
        if key in fm and not ok(fm[key]):
            findings.append(
                Finding("field-type", ERROR, f"'{key}' must be {wanted}", _key_line(card, key))
            )
    meta = card.metadata
    if chimera and "triggers" in meta and not _has_trigger_lines(meta["triggers"]):
        findings.append(
            Finding(
                "field-type",
                ERROR,
                "'metadata.triggers' must be a string with one trigger per line",
                _key_line(card, "metadata"),
            )
        )
    return findings


def _vocabulary_findings(card: Card, chimera: bool) -> list[Finding]:
    """Top-level Chimera fields are checked in every profile (the importer reads a top-level
    ``provenance``, and a typo must not pass); under ``metadata`` only in the chimera profile,
    since the spec leaves metadata free-form.
    """
    findings = []
    for key, allowed in VOCABULARIES.items():
        if key in card.frontmatter:
            value, where = card.frontmatter[key], key
        elif chimera and key in card.metadata:
            value, where = card.metadata[key], "metadata"
        else:
            continue
        if not isinstance(value, str) or value not in allowed:
            findings.append(
                Finding(
                    f"{key}-value",
                    ERROR,
                    f"{key} {value!r} is not one of: {', '.join(allowed)}",
                    _key_line(card, where),
                )
            )
    return findings


def _section_findings(card: Card, chimera: bool) -> list[Finding]:
    findings = []
    seen: dict[str, int] = {}
    for section in card.sections:
        if section.title in seen:
            # A second "## Risk" makes it ambiguous which one a reader (or model) obeys.
            findings.append(
                Finding(
                    "section-duplicate",
                    ERROR if chimera else WARNING,
                    f"section {section.title!r} repeats the one on line {seen[section.title]}",
                    section.line,
                )
            )
        else:
            seen[section.title] = section.line
    if not chimera:
        return findings
    for section in card.sections:
        if section.title not in CARD_SECTIONS:
            findings.append(
                Finding(
                    "section-unknown",
                    WARNING,
                    f"section {reveal(section.title)!r} is not one of {', '.join(CARD_SECTIONS)}",
                    section.line,
                )
            )
    for title in CARD_SECTIONS:
        wanted = card.section(title)
        if wanted is None:
            findings.append(
                Finding("section-missing", ERROR, f"missing section '## {title}'", card.body_line)
            )
        elif not wanted.text.strip():
            findings.append(
                Finding("section-empty", ERROR, f"section '## {title}' is empty", wanted.line)
            )
    present = [s for s in card.sections if s.title in CARD_SECTIONS and seen.get(s.title) == s.line]
    order = [s.title for s in present]
    expected = [t for t in CARD_SECTIONS if t in order]
    if order != expected:
        first_wrong = next(s for s, want in zip(present, expected, strict=False) if s.title != want)
        findings.append(
            Finding(
                "section-order",
                ERROR,
                f"sections are {', '.join(order)}; expected {', '.join(expected)}",
                first_wrong.line,
            )
        )
    return findings


def _plain_or_revealed(text: str) -> str:
    return text if text.isascii() and text.isprintable() else reveal(text)


def _frontmatter_findings(card: Card, chimera: bool) -> list[Finding]:
    findings: list[Finding] = []
    if card.strict_yaml_error is not None:
        findings.append(
            Finding(
                "frontmatter-strict-yaml",
                ERROR,
                f"{card.strict_yaml_error}; read with its values quoted, as Claude Code repairs it "
                "(strict readers such as Gemini CLI and `agentskills validate` refuse it): "
                "quote the value",
                card.strict_yaml_line or card.frontmatter_line,
            )
        )
    # The spec profile reports every top-level key outside the spec's six as an error, as
    # skills-ref rejects it, Chimera's own keys (version, triggers, ...) included: a card that
    # lints clean here passes `agentskills validate`. The Chimera profile knows its keys, and a
    # stray one is a warning there.
    known = KNOWN_KEYS if chimera else frozenset(AGENT_SKILLS_KEYS)
    for key in card.frontmatter:
        if key in known:
            continue
        if chimera:
            hint = ""
        elif key in CHIMERA_KEYS:
            hint = (
                " (a Chimera field: the Agent Skills spec keeps it under metadata; "
                "--profile chimera reads it at the top)"
            )
        else:
            hint = " (the Agent Skills spec keeps extra fields in metadata)"
        findings.append(
            Finding(
                "frontmatter-unknown-key",
                WARNING if chimera else ERROR,
                f"unknown frontmatter key {_plain_or_revealed(key)!r}{hint}",
                _key_line(card, key),
            )
        )
    findings += _vocabulary_findings(card, chimera)
    if chimera:
        for key in CHIMERA_REQUIRED:
            if key not in card.frontmatter and key not in card.metadata:
                findings.append(
                    Finding(
                        "chimera-field-missing",
                        WARNING,
                        f"Chimera field '{key}' is missing",
                        card.frontmatter_line,
                    )
                )
    return findings


def is_chimera_shaped(card: Card) -> bool:
    """Whether the card carries any of Chimera's own top-level frontmatter keys."""
    return any(key in card.frontmatter for key in CHIMERA_KEYS)


def _dirname_for(card: Card) -> str | None:
    if card.path and os.path.basename(card.path) in (CARD_FILENAME, LOWER_CARD_FILENAME):
        return os.path.basename(os.path.dirname(card.path)) or None
    return None


def resolve_profile(profile: str | None = None, strict: bool | None = None) -> str:
    """The profile to lint with: ``profile`` if given, else the one the old ``strict`` flag named
    (True: chimera, False: agent-skills), else DEFAULT_PROFILE.

    Raises:
        UnknownProfileError: ``profile`` is not one of PROFILES.
    """
    if profile is not None:
        if profile not in PROFILES:
            raise UnknownProfileError(
                f"unknown lint profile {profile!r}; choose one of: {', '.join(PROFILES)}"
            )
        return profile
    if strict is not None:
        return CHIMERA if strict else AGENT_SKILLS
    return DEFAULT_PROFILE


def lint_card(
    card: Card,
    *,
    profile: str | None = None,
    strict: bool | None = None,
    dirname: str | None = None,
) -> list[Finding]:
    """Every finding for one parsed card, sorted by line.

    Args:
        card: the parsed card.
        profile: "agent-skills" (the default: the Agent Skills specification) or "chimera"
            (also the five sections and Chimera's frontmatter).
        strict: the old switch, kept as an alias: True is "chimera", False "agent-skills".
        dirname: the card's directory name; defaults to the directory of ``card.path`` when
            that is a SKILL.md (a card read from a URL has none, and skips the check).

    Returns:
        The findings, at most MAX_FINDINGS_PER_RULE per rule (plus one summary per capped rule).
    """
    chimera = resolve_profile(profile, strict) == CHIMERA
    if dirname is None:
        dirname = _dirname_for(card)
    out = _Collector()
    for finding in (
        _name_findings(card, dirname, chimera)
        + _description_findings(card, chimera)
        + _type_findings(card, chimera)
        + _frontmatter_findings(card, chimera)
        + _section_findings(card, chimera)
    ):
        out.add(finding)
    # Frontmatter is not rendered, but a comment there is as unseen as one in the body.
    _scan(card.frontmatter_text, _Lines(card.frontmatter_text, card.frontmatter_line), out)
    for finding in _escaped_scalar_findings(card, out.findings):
        out.add(finding)
    _scan(card.body, _Lines(card.body, card.body_line), out, code=card.code_lines)
    findings = out.result()
    image_lines = _dockerfile_block_lines(card.body, card.body_line) if "ocker" in card.body else ()
    for finding in findings:
        finding.path = card.path
        _built_in_image(finding, image_lines)
    return sorted(findings, key=lambda f: (f.line or 0, SEVERITIES.index(f.severity), f.rule))


_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")


def is_markdown_path(path: str | os.PathLike) -> bool:
    """Whether a skill's file is Markdown (read rendered, so a comment in it is unseen)."""
    return str(path).lower().endswith(_MARKDOWN_SUFFIXES)


_DOCKERFILE_FENCE_RE = re.compile(
    r"^ {0,3}(`{3,}|~{3,})[ \t]*(?:dockerfile|containerfile|docker)\b[^\n]*$", re.I | re.M
)


def _dockerfile_block_lines(text: str, first_line: int = 1) -> tuple[tuple[int, int], ...]:
    """File lines [start, end) of a Markdown text's fenced Dockerfile blocks (the text's first
    line being file line ``first_line``)."""
    out = []
    for fence in _DOCKERFILE_FENCE_RE.finditer(text):
        start = text.count("\n", 0, fence.start()) + 1 + first_line
        close = re.compile(rf"^ {{0,3}}{re.escape(fence.group(1))}[`~]*[ \t]*$", re.M)
        end = close.search(text, fence.end())
        stop = text.count("\n", 0, end.start()) if end else text.count("\n") + 1
        out.append((start, stop + first_line))
    return tuple(out)


def _built_in_image(
    finding: Finding, image_lines: tuple[tuple[int, int], ...], container: bool = False
) -> None:
    """A download piped into a shell by a Dockerfile's RUN (the file, or a Dockerfile block of a
    Markdown page, SKILL.md included) runs inside the image build: what it downloads and runs
    stays in the image (as download-exec grades it there); what it sends out does not. Made a
    warning, in place."""
    in_image = container or any(a <= (finding.line or 0) < b for a, b in image_lines)
    if in_image and finding.rule == "pipe-to-shell" and finding.severity == ERROR:
        finding.severity = WARNING


def lint_text(text: str, path: str, *, markdown: bool | None = None) -> list[Finding]:
    """The hidden-instruction scan over one text file of a skill other than its SKILL.md.

    Args:
        text: the file's text (decoded; line endings as in the file).
        path: the file's path as it should appear in each finding (e.g. relative to the skill).
        markdown: whether the file is Markdown; by default, from its suffix. In Markdown an HTML
            or Markdown comment outside a code block is an error (hidden when rendered); in any
            other file (an HTML template, a script) it is info: the agent reads the raw file, so
            nothing in it is hidden from the agent or the reviewer.

    Returns:
        The findings, sorted by line, each with ``path`` set, capped per rule as lint_card's.
    """
    if markdown is None:
        markdown = is_markdown_path(path)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    code: tuple[tuple[int, int], ...] = ()
    if markdown and ("<!--" in text or "]:" in text):
        code = code_block_lines(text, 1)
    out = _Collector()
    _scan(
        text,
        _Lines(text, 1),
        out,
        comments=ERROR if markdown else INFO,
        code=code,
        markdown=markdown,
    )
    findings = out.result()
    container = not markdown and build_kind(path) == "dockerfile"
    image_lines = _dockerfile_block_lines(text) if markdown and "ocker" in text else ()
    for finding in findings:
        finding.path = path
        _built_in_image(finding, image_lines, container)
    return sorted(findings, key=lambda f: (f.line or 0, SEVERITIES.index(f.severity), f.rule))


# --- linting paths (what the CLI calls) --------------------------------------------------------


@dataclass
class LintReport:
    """The findings of a lint run over some paths, with every file looked at."""

    files: list[str]  # every card file looked at, in order
    findings: list[Finding]

    @property
    def errors(self) -> int:
        return sum(f.severity == ERROR for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == WARNING for f in self.findings)

    @property
    def infos(self) -> int:
        return sum(f.severity == INFO for f in self.findings)

    def to_dict(self) -> dict:
        return {
            "files": self.files,
            "summary": {
                "cards": len(self.files),
                "errors": self.errors,
                "warnings": self.warnings,
                "infos": self.infos,
            },
            "findings": [f.to_dict() for f in self.findings],
        }


def lint_paths(
    paths: Iterable[str | os.PathLike],
    *,
    profile: str | None = None,
    strict: bool | None = None,
) -> LintReport:
    """Lint SKILL.md files, card directories or folders of card directories.

    Args:
        paths: what to lint.
        profile: "agent-skills" (default) or "chimera"; ``strict`` is the old alias.

    Returns:
        A LintReport. A card that cannot be parsed becomes a ``parse-error`` finding (so one bad
        card does not hide the rest); a path that does not exist or holds no card raises
        CardReadError (exit 2).
    """
    profile = resolve_profile(profile, strict)
    files: list[Path] = []
    for path in paths:
        found = find_card_files(path)
        if not found:
            raise CardReadError(
                f"{path}: no {CARD_FILENAME} found (expected a card, a card directory "
                f"or a folder of card directories)"
            )
        files.extend(found)
    findings: list[Finding] = []
    for file in files:
        try:
            card = load_card(file)
        except CardReadError:
            raise
        except ChimeraError as exc:
            line = getattr(exc, "line", None)
            reason = getattr(exc, "reason", str(exc))
            rule = "parse-error" if isinstance(exc, CardParseError) else "read-refused"
            findings.append(Finding(rule, ERROR, reason, line, str(file)))
            continue
        card_findings = lint_card(
            card,
            profile=profile,
            dirname=file.parent.name if file.name in (CARD_FILENAME, LOWER_CARD_FILENAME) else None,
        )
        for finding in card_findings:
            finding.path = str(file)
        findings.extend(card_findings)
    return LintReport(files=[str(f) for f in files], findings=findings)
