"""The hidden-instruction scan: invisible characters, smuggled payloads, override phrases.

The same in every profile, because an importer must see a smuggled instruction whatever the
card's shape; ``lint_text`` runs it alone over any other text file of a skill.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from chimera_cards._cards.card import Card
from chimera_cards._scan.base64runs import (
    armoured_certificate,
    encodes_media,
    is_base64_payload,
)
from chimera_cards._scan.described import option_sets_prompt, pipe_runs
from chimera_cards._scan.findings import (
    BASE64_MIN,
    ERROR,
    INFO,
    MESSAGE_QUOTE_MAX,
    WARNING,
    Finding,
    _Collector,
    _Lines,
)
from chimera_cards._scan.hiddenchars import (
    _is_word,
    _rare_chars,
    _scan_characters,
    reveal,
)
from chimera_cards._scan.installers import shown_installer
from chimera_cards._scan.readertext import (
    _CONFUSABLE_RE,
    _INVISIBLE_RE,
    _MARKS_RE,
    _drop_emphasis,
    _phrase_text,
    _reader_text,
)
from chimera_cards._scan.sensitive import credential_in
from chimera_cards._scan.textruns import RunGate, led

# --- the hidden-instruction scan -------------------------------------------------------------


# Every match of these must start at a word listed for the rule in _FINDERS (below); add any
# new leading word there too, or the fast scan will not look for it.
_OVERRIDE_PATTERNS = [
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|existing|other|system)\s+"
    r"(?:instructions?|prompts?|rules|directions|directives|guidelines|context|messages|orders)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:your|the)\s+(?:instructions|rules|guidelines)\b",
    # A persona ("you are now a world-class designer") is how skills begin; a persona without
    # limits, or a mode that sets them aside, is the attack.
    r"\byou\s+are\s+now\s+(?:no\s+longer|free|unrestricted|unfiltered|uncensored|jailbroken|DAN)\b"
    r"|\byou\s+are\s+now\s+(?:a|an|the)\s+(?:\S+\s+){0,3}?(?:unrestricted|unfiltered|uncensored|"
    r"jailbroken|evil|DAN|AI\s+without)\b"
    r"|\byou\s+are\s+now\s+in\s+(?:\S+\s+){0,1}?(?:developer|god|DAN|jailbreak|unrestricted|admin|root|"
    r"debug|maintenance)\s+mode\b",
    r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b",
    r"\b(?:reveal|print|show|output|repeat|leak|dump|ignore|override|replace|forget)\s+"
    r"(?:me\s+)?(?:the\s+|your\s+)?(?:system\s+prompt|hidden\s+instructions)\b",
    r"\b(?:new|updated|real|actual)\s+system\s+prompt\s*:",
    r"\bsystem\s+prompt\s+override\b",
    # One optional slash between two optional spaces would be two \s* back to back: quadratic
    # on "<" followed by a megabyte of spaces. Spaces after the slash only when there is one.
    # A role tag opens a message: one that is a name's part (`<process>.<system>`) or a table
    # cell's placeholder (`| <SYSTEM> |`) opens nothing, nor does a noun's placeholder after an
    # article ("When <trigger>, the <system> shall <response>").
    r"(?<![.\w>])(?:(?<!\bthe )(?<!\ba )(?<!\ban )<\s*(?:/\s*)?(?:system|im_start|im_end)\s*>"
    r"|<\s*(?:system|im_start|im_end)\s*>(?![ \t]+(?-i:[a-z])))(?![^\S\n]*[|.<,;)\]])"
    # ChatML's start token opens a message; named beside its end token ("delimiters (<|im_start|>
    # and <|im_end|>)") or before a comma or a closing parenthesis it opens none
    r"|<\|im_start\|>(?![^\S\n]*(?:(?:and|or|/)[^\S\n]*<\|im_end\|>|[,)]))|<\|system\|>",
    r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention\s+(?:this\s+)?to|reveal\s+(?:this\s+)?to)\s+"
    # what to tell the user to do, or which words to use, is advice, not something kept from them
    r"the\s+user\b(?!\s*(?:to\s+[\w\"'\u201c\u2018]|[\"'\u201c\u2018]|where\b|whether\b|how\s+to\b))",
    r"\bwithout\s+(?:telling|informing|notifying)\s+the\s+user\b",
]
_TELL_THE_USER_RE = re.compile(r"(?:do\s+not|don't|never)\s", re.IGNORECASE)
_OVERRIDE_RE = re.compile(
    led("<abdfilnoprsuwy", "|".join(f"(?:{p})" for p in _OVERRIDE_PATTERNS)), re.IGNORECASE
)

_FETCHERS = r"(?:curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)"
_INTERPRETERS = r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[0-9.]*|perl|ruby|node|iex|Invoke-Expression)"
# Each alternative starts with a literal word so the scan stays linear on large cards (and the
# fast scan finds them by those words: keep _FINDERS["pipe-to-shell"] in step).
# An interpreter given its program (``python -m json.tool``, ``python3 -c "…"``, ``node -e``,
# a script file: ``node scripts/extract-tags.js``, ``bash scripts/x.sh "$tag"``) reads the
# download as data, not as code.
# The user's shell by its variable ($SHELL, a Makefile's $(SHELL)) is a shell too.
_SCRIPT_FILE = (
    r"[\"']?(?!-)(?:\$\([^)\n]*\)|\$\{[^}\n]*\}|[\w./~-])*?\w\.(?:js|mjs|cjs|ts|py|sh|bash|zsh|rb|pl)"
    r"[\"']?(?![\w.-])"
)
_PIPE_TAIL = (
    rf"\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:/[\w/]*/)?{_INTERPRETERS}\b"
    rf"(?![ \t]+(?:-[mce]\b|{_SCRIPT_FILE}))|"
    r"\$(?:SHELL\b|\{SHELL\}|\(SHELL\)))"
)
_PIPE_TO_SHELL_RE = re.compile(
    led(
        "Ibcdfiknprstwz",
        rf"\b{_FETCHERS}\b[^\n|]*{_PIPE_TAIL}"
        rf"|\b{_INTERPRETERS}\b[^\n]{{0,40}}?[<$]\(\s*{_FETCHERS}\b",
    ),
    re.IGNORECASE,
)
# The fast scan matches the first alternative in two steps: every fetcher before the same pipe
# shares what follows that pipe, so it is looked at once per pipe, not once per fetcher (which
# made "curl curl curl ..." quadratic).
_PIPE_HEAD_RE = re.compile(rf"\b{_FETCHERS}\b", re.IGNORECASE)
_PIPE_TAIL_RE = re.compile(_PIPE_TAIL, re.IGNORECASE)
# The lookbehind makes each run match once from its start instead of being retried at every offset.
_BASE64_RE = re.compile(
    rf"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{{{BASE64_MIN},}}={{0,2}}"
    rf"|(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{{{BASE64_MIN},}}={{0,2}}"
)
# Base64 cut into pieces (MIME's 76-character lines, or spaces every few characters) so that no
# piece is long enough for the base64 rule: two or more pieces of 16+ characters in a row.
_BASE64_PIECE = r"[A-Za-z0-9+/]{16,}={0,2}"
_BASE64_SPLIT_RE = re.compile(
    rf"(?<![A-Za-z0-9+/=]){_BASE64_PIECE}(?:\s+(?:>\s*)*{_BASE64_PIECE})+"  # also in a quote
)


_URL_RE = re.compile(
    r"\b(?:(?:https?|ftp|file)://[^\s<>()\[\]{}\"'`]*|(?:data|javascript):[^\s<>()\[\]{}\"'`]+)",
    re.IGNORECASE,
)
_HTML_COMMENT_RE = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)
# A link-reference definition renders as nothing: with a dummy destination (`#`, `<>`) or a
# title it is a comment whatever its label (`[//]: # (...)`, `[x]: /a "..."`). A plain
# `[1]: https://...` is an ordinary reference link and passes (its URL is listed anyway).
_MD_COMMENT_RE = re.compile(
    r"^ {0,3}\[(?!\s*\])[^\]\n]{1,999}\]:[ \t]*(<[^>\n]*>|\S*)[ \t]*([\"'(].*)?$", re.MULTILINE
)

# What makes a hidden comment an instruction a reviewer must see before the model reads it: it
# speaks to the model, asks for secrecy, names a secret or a credential store, or holds a
# command or an address to reach. A marker (`GEN:x`), an attribution, a licence note or a
# template's note to its author says none of these: listed (info), not held.
_COMMENT_ADDRESSED_RE = re.compile(
    # the comment opens by calling the model ("assistant: ...", "Note to Claude, ..."), or
    # anywhere a note or an instruction for it
    r"^\s*(?:(?:a\s+)?(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+)?)?"
    r"(?:ai|assistants?|agents?|models?|llms?|claude|gpt|chatgpt|copilot|codex|gemini|system|bot)"
    # ... unless it is a label naming the document a section is merged from ("system:
    # agent-context/forms/system.md — human-owned"): a generator's marker, spoken to nobody
    r"\s*(?::(?![ \t]*[\w.-]+(?:/[\w.-]+)*\.(?:md|mdx|txt|rst|json|ya?ml|toml)(?![\w/]))"
    r"|,|>|-{1,2}\s)"
    r"|\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+)?"
    r"(?:ai|assistants?|agents?|models?|llms?|claude|gpt|chatgpt|copilot|codex|gemini|bots?)\b"
    r"|\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|(?:language\s+)?model|assistant|agent|bot)\b"
    r"|\b(?:you|ai|agents?|assistants?|llms?|models?)\s+(?:reading|processing|parsing)\s+this\b",
    re.IGNORECASE,
)
_COMMENT_SECRECY_RE = re.compile(
    r"\b(?:secret(?:ly)?|covert\w*|stealth\w*|hidden|hide|conceal\w*|"
    r"without\s+(?:telling|saying|asking|mentioning|informing)|"
    # "never let one choice silently decide another" is a design note: silence and letting
    # are secrecy when the agent acts unseen or the user is kept from knowing
    r"(?:silently|quietly)\s+(?:\w+\s+)?(?:sen[dt]|upload|post|run|execut|install|download|"
    r"fetch|read|cop(?:y|ie)|writ|append|add|insert|delet|remov|modif|chang|replac|collect|"
    r"record|log|forward|transmit|includ|connect|call|invok|launch|load|push|commit|sav|stor)\w*|"
    r"(?:do\s+not|don'?t|never)\s+(?:tell|mention|show|reveal|inform)|"
    r"(?:do\s+not|don'?t|never)\s+let\s+(?:the\s+|any\s+)?(?:users?|humans?|them|anyone|"
    r"reviewers?|people)\s+(?:\w+\s+)?(?:know|see|notice|find|learn))\b",
    re.IGNORECASE,
)
_COMMENT_ACTION_RE = re.compile(
    # a command (a link alone is an attribution: "adapted from https://...")
    r"\b(?:curl|wget|sudo|powershell|iex|eval|exec|base64|chmod|rm\s+-\w+|ncat|scp|"
    r"pip3?\s+install|npm\s+(?:i|install)|npx|crontab)\b"
    # a secret named as what to act on ("copy the API token into the form"); its name alone
    # is what API notes are made of
    r"|\b(?:send|upload|e-?mail|post|read|cat|copy|print|include|paste|share|export|dump|collect|"
    r"steal|grab|exfiltrate|attach|leak|log)\s+(?:\S+\s+){0,4}?(?:credentials?|passwords?|"
    r"passphrases?|tokens?|api[ _-]?keys?|private[ _-]?keys?|secret[ _-]?keys?|secrets|"
    r"seed\s+phrases?|mnemonics?|cookies|wallets?|keychains?|keys)\b"
    # (pasting the page itself into an assistant or an editor is how a prompt file is used)
    r"|\b(?!paste\s+(?:it|this(?:\s+(?:file|page|prompt|document))?|the\s+(?:prompt|file|page))\s+"
    r"into\s+(?:any\s+|an?\s+|the\s+|your\s+)?(?:\w+\s+){0,2}?(?:assistants?|agents?|chats?|"
    r"editors?|ides?|tools?|models?|llms?|terminals?)\b)"
    r"(?:send|upload|e-?mail|post|forward|transmit|exfiltrat|leak|paste|push)\w*\s+(?:\S+\s+){0,6}?"
    r"(?:to|into|onto)\b"
    r"|\b(?:run|execute|source)\s+(?:\S+\s+){0,3}?(?:[\w./-]+\.(?:sh|py|js|ps1|rb|pl|exe)\b|script|command)",
    re.IGNORECASE,
)


# What a sentence keeps from the user is hostile when it is something the agent does or touches
# (a send, a run, a file, a key, the agent itself, "this"): "do not tell the user which strategy
# the healing agent used" or "do not surface the translation to the user" is how to present a
# product's internals, not an action kept secret. Nothing named ("Do not tell the user.") is a
# secret about whatever came before, and stays one.
_HIDDEN_ACTION_RE = re.compile(
    r"\b(?:you|your|we|us|our|i|me|my|this|that|these|those|it|its|anything|everything|what|"
    r"about|skill|instructions?|steps?|actions?|commands?|scripts?|tools?|files?|folders?|"
    r"director(?:y|ies)|paths?|keys?|credentials?|tokens?|passwords?|secrets?|data|payloads?|"
    r"network|requests?|connections?|traffic|telemetry|analytics|background|process(?:es)?|"
    r"changes?|history|logs?|cookies|browser|emails?|messages?|accounts?|money|payments?|"
    r"purchases?|costs?|charges?|fees?|errors?|failures?|warnings?|risks?)\b"
    r"|\b(?:sen[dt]|upload|post|transmit|exfiltrat|forward|beacon|run|ran|execut|install|"
    r"download|fetch|read|access|collect|harvest|record|track|monitor|delet|remov|modif|chang|"
    r"edit|writ|wrote|cop(?:y|ie)|mov|connect|call|invok|launch|start|add|append|inject|"
    r"disabl|enabl|bypass|spen[dt]|buy|bought|charg|shar|stor|sav|captur|scan|search|open)",
    re.IGNORECASE,
)
_TELLING_RE = re.compile(
    r"\s*\S+\s+(?:\S+\s+)?(?:tell|mention|inform|notify|reveal|disclose|report|alert|explain|"
    r"surface|acknowledge|say)\w*",
    re.IGNORECASE,
)
_TOLD_WHO_RE = re.compile(
    r"\b(?:to\s+)?(?:the|your|any)\s+(?:users?|humans?|operators?)\b"
    r"|\b(?:users?|humans?|operators?|anyone)\b",
    re.IGNORECASE,
)
_SENTENCE_TAIL_RE = re.compile(r"[^.!?\n]*(?:[.!?](?=\S)[^.!?\n]*)*")


def hides_an_action(match: re.Match) -> bool:
    """Whether the words a "do not tell the user" match and the rest of its sentence keep from
    the user name something the agent does or touches, or name nothing (see _HIDDEN_ACTION_RE).

    Args:
        match: a match whose span is the verb through "the user" (its string the text).
    Returns:
        False only for a named thing that is no action: presentation advice.
    """
    text = match.string
    words = match.group(0)
    verb = _TELLING_RE.match(words)
    between = words[verb.end() :] if verb else words
    tail = _SENTENCE_TAIL_RE.match(text, match.end())
    told = _TOLD_WHO_RE.sub(" ", between + " " + (tail.group(0) if tail else ""))
    if not re.search(r"[A-Za-z]{2}", told):
        return True
    return bool(_HIDDEN_ACTION_RE.search(told))


def _comment_instructs(body: str) -> bool:
    """Whether a hidden comment's text reads as an instruction to hide from a reviewer."""
    return bool(
        _COMMENT_ADDRESSED_RE.search(body)
        or _OVERRIDE_RE.search(body)
        or _COMMENT_SECRECY_RE.search(body)
        or _COMMENT_ACTION_RE.search(body)
        or credential_in(_PAGE_URL_RE.sub(" ", body))
    )


# A link's path names a page of that site ("https://nextjs.org/docs/…/functions/cookies"), no
# file on this machine; a URL with a query may carry one, and is read whole.
_PAGE_URL_RE = re.compile(r"https?://[^\s?#'\"()<>]+(?![^\s'\"()<>])")


def _url_shown(url: str) -> str:
    # reveal never shortens, so revealing a prefix a little longer than the limit is enough.
    url = reveal(url.rstrip(".,;:!?*_")[: MESSAGE_QUOTE_MAX + 1])
    return url if len(url) <= MESSAGE_QUOTE_MAX else url[: MESSAGE_QUOTE_MAX - 3] + "..."


def _is_markdown_comment(match: re.Match) -> bool:
    destination, title = match.group(1), (match.group(2) or "").strip()
    # Otherwise an ordinary reference link.
    return destination in ("", "<>") or destination.startswith("#") or bool(title)


def _shown(text: str, limit: int = 80) -> str:
    # Reveal a growing prefix, not the whole match: a megabyte-long comment is shown cut anyway,
    # and once the prefix shows more than ``limit`` its first characters are the whole text's.
    size = 4 * limit
    while True:
        shown = reveal(" ".join(text[:size].split()))
        if size >= len(text) or len(shown) > limit:
            break
        size *= 4
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _always(_match: re.Match) -> bool:
    return True


_QUOTES = "\"'`\u201c\u201d\u2018\u2019"
# Words that present a quoted phrase as an example of what to watch for, not as an instruction:
# "a malicious issue may try to steer the triage (e.g. "ignore the rules ...")".
_MENTION_RE = re.compile(
    r"\b(?:e\.g|i\.e|such\s+as|like|for\s+(?:example|instance)|says|saying|said|tries|trying|try\s+to|"
    r"attempts?|phrases?|patterns?|markers?|strings?|wording|language|injection\w*|injected|"
    r"malicious|attack\w*|untrusted|adversarial|jailbreak\w*|detect\w*|flag\w*|scan\w*|avoid\w*|"
    r"watch\s+for|look\s+for|red\s+flags?)\b",
    re.IGNORECASE,
)


def quoted_mention(match: re.Match) -> bool:
    """Whether a phrase stands inside quotation marks that the words before present as an
    example (what an attack says, what to avoid writing): a mention, not an instruction."""
    text, start, end = match.string, match.start(), match.end()
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 160) : start]
    opening = before.rstrip()
    if not opening or opening[-1] not in _QUOTES:
        # The phrase may start inside the quote: its opening mark a few words back.
        at = max(before.rfind(q) for q in _QUOTES)
        if at < 0 or len(before) - at > 40:
            return False
        opening = before[: at + 1]
    # The closing mark may be on the next line of the same paragraph (a wrapped quote).
    after = text[end : end + 160]
    paragraph_end = after.find("\n\n")
    if paragraph_end >= 0:
        after = after[:paragraph_end]
    if not any(q in after for q in _QUOTES):
        return False
    context = text[max(0, start - 240) : start]
    return bool(_MENTION_RE.search(context))


# (regex, rule, severity, whether a match is a finding, its message). The message is only built
# for findings that are kept, so a capped rule costs a match and a test per occurrence.
_PATTERN_RULES = (
    (
        _HTML_COMMENT_RE,
        "html-comment",
        WARNING,
        _always,
        lambda m: f"HTML comment (hidden when rendered): {_shown(m.group(1))!r}",
    ),
    (
        _MD_COMMENT_RE,
        "markdown-comment",
        WARNING,
        _is_markdown_comment,
        lambda m: f"Markdown comment (hidden when rendered): {_shown(m.group(0))!r}",
    ),
    (
        _OVERRIDE_RE,
        "override-phrase",
        ERROR,
        _always,
        lambda m: f"instruction-override phrase: {_shown(m.group(0))!r}",
    ),
    (
        _PIPE_TO_SHELL_RE,
        "pipe-to-shell",
        ERROR,
        pipe_runs,
        lambda m: f"download piped into a shell: {_shown(m.group(0), 120)!r}",
    ),
    (
        _BASE64_RE,
        "base64-blob",
        WARNING,
        lambda m: is_base64_payload(m.group(0)),
        lambda m: f"{len(m.group(0))}-character base64 run: {m.group(0)[:24]}...{m.group(0)[-8:]}",
    ),
    (_URL_RE, "url", INFO, _always, lambda m: f"links to {_url_shown(m.group(0))}"),
)


# --- finding the pattern rules' matches fast ---
#
# Python's re has no fast search for a pattern that starts with \b, an alternation or an
# IGNORECASE letter: it tries the whole pattern at every offset (~0.5 ms per rule on a 4 KB
# card). Each rule below instead lists literal words, one of which every match must start at
# (the "starts"), found with str.find, then tries the same regex only there. Matching at those
# offsets in order, resuming after each match, finds exactly what finditer finds, because no
# match can start anywhere else. A rule may also name "needs": literals one of which every match
# contains; without any of them the rule cannot match at all.
#
# Case: the words are looked up in a lower-cased copy of the text in which every character that
# IGNORECASE matches to an ASCII letter has become that letter at the same offset. Besides ASCII
# those are only U+0130, U+0131, U+017F and U+212A (the test suite checks every code point).
_FOLD_TO_ASCII = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}
# The copy is also all ASCII, of the same length: find and ``in`` are several times faster on a
# one-byte string than on the two-byte one a single em dash makes of a card. Every other
# character past ASCII becomes "?", which is in no word, except whitespace, which becomes " "
# (a gate's \s must still see it). The test suite checks both sets against every code point.
_NON_ASCII_SPACES = (
    "\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_VIEW_SPECIAL_RE = re.compile("[" + _NON_ASCII_SPACES + "".join(_FOLD_TO_ASCII) + "]")
_NON_ASCII_SPACE_RE = re.compile("[" + _NON_ASCII_SPACES + "]")


def _to_ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode("ascii")  # one "?" per code point past ASCII


def _ascii_views(text: str, rare: str | None = None) -> tuple[str, str]:
    """(the text's ASCII stand-in, the case-folded copy the words are looked up in): an ASCII
    word or a gate's pattern occurs in the stand-in where it occurs in ``text``, and in the
    folded copy wherever IGNORECASE would find it in ``text``. ``rare``: characters that
    include every one of ``text`` past ASCII (``_rare_chars``), when the caller has them."""
    if text.isascii():
        return text, text.lower()
    if not _VIEW_SPECIAL_RE.search(text if rare is None else rare):
        view = _to_ascii(text)
        return view, view.lower()
    spaced = _NON_ASCII_SPACE_RE.sub(" ", text)
    lettered = spaced
    for char, letter in _FOLD_TO_ASCII.items():
        if char in lettered:
            lettered = lettered.replace(char, letter)
    return _to_ascii(spaced), _to_ascii(lettered).lower()


@dataclass(frozen=True)
class _Finder:
    """Where a pattern's matches can start, so only those offsets are tried."""

    starts: tuple[
        tuple[str, tuple[int, ...]], ...
    ]  # (word, offsets back from it a match may start)
    needs: tuple[str, ...] = ()  # a match contains one of these (empty: no such gate)
    folded: bool = True  # look the words up case-folded (False: they have no letters)
    # (start words, pattern): every match starting at one of these words also holds the
    # pattern (searched in the folded text), which is far rarer in prose than the word ("you"
    # only starts "you are now"); without it, the words' offsets are not looked at. A pattern
    # is one or more (literal, regex) pairs, each regex starting with its literal (so re finds
    # it with a fast search) and looked for only when ``in`` finds the literal.
    gates: tuple[tuple[tuple[str, ...], tuple[tuple[str, re.Pattern], ...]], ...] = ()


def _gate(literal: str, pattern: str) -> tuple[tuple[str, re.Pattern]]:
    if not pattern.startswith(re.escape(literal)):
        raise ValueError(f"a gate's pattern starts with its literal: {pattern!r}")
    return ((literal, re.compile(pattern)),)


def _w(*words: str, back: tuple[int, ...] = (0,)) -> tuple[tuple[str, tuple[int, ...]], ...]:
    return tuple((word, back) for word in words)


_FETCHER_WORDS = ("curl", "wget", "fetch", "iwr", "irm", "invoke-")
_FINDERS: dict[str, _Finder] = {
    "override-phrase": _Finder(
        _w(
            "ignore",
            "disregard",
            "forget",
            "override",
            "bypass",
            "you",
            "from",
            "reveal",
            "print",
            "show",
            "output",
            "repeat",
            "leak",
            "dump",
            "replace",
            "new",
            "updated",
            "real",
            "actual",
            "system",
            "do",
            "never",
            "without",
            "<",
        ),
        gates=(
            (("you",), _gate("are", r"are\s+now")),
            (("from",), _gate("now", r"now\s+on")),
            (
                ("reveal", "print", "show", "output", "repeat", "leak", "dump", "replace"),
                _gate("system", r"system\s+prompt") + _gate("hidden", r"hidden\s+instructions"),
            ),
            (("new", "updated", "real", "actual"), _gate("system", r"system\s+prompt")),
            (("system",), _gate("prompt", r"prompt\s+override")),
            (("do", "never", "without"), _gate("the", r"the\s+user")),
        ),
    ),
    "pipe-to-shell": _Finder(
        _w(*_FETCHER_WORDS, "python", "perl", "ruby", "node", "iex") + _w("sh", back=(0, 1, 2)),
        needs=_FETCHER_WORDS,
        # A fetcher piped to a shell, or a shell running "$(fetcher ...)" / "<(fetcher ...)".
        gates=(
            (
                (*_FETCHER_WORDS, "python", "perl", "ruby", "node", "iex", "sh"),
                _gate("|", r"\|") + _gate("<(", r"<\(") + _gate("$(", r"\$\("),
            ),
        ),
    ),
    "url": _Finder(_w("://", back=(3, 4, 5)) + _w("data:", "javascript:")),
    "markdown-comment": _Finder((), needs=("]:",), folded=False),
    "base64-blob": _Finder(()),  # searched token by token: _base64_runs
}


def _finditer(
    regex: re.Pattern, rule: str, text: str, views: tuple[str, str]
) -> Iterable[re.Match]:
    """``regex.finditer(text)``, found without trying the regex at every offset where possible
    (``views``: ``_ascii_views(text)``)."""
    finder = _FINDERS.get(rule)
    if finder is None:
        return regex.finditer(text)
    if rule == "base64-blob":
        return _base64_runs(regex, text, views[0])
    haystack = views[1] if finder.folded else views[0]
    if finder.needs and not any(word in haystack for word in finder.needs):
        return ()
    if not finder.starts:
        return regex.finditer(text)
    if rule == "pipe-to-shell":
        return _pipe_matches(regex, text, _offsets(finder, text, haystack))
    return _match_at(regex, text, _offsets(finder, text, haystack))


def _offsets(finder: _Finder, text: str, haystack: str) -> list[int]:
    # Plain loops: this runs for every text, and generator expressions cost more here.
    closed: set[str] = set()
    for words, alternatives in finder.gates:
        for literal, regex in alternatives:
            if literal in haystack and regex.search(haystack):
                break
        else:
            closed.update(words)
    offsets: set[int] = set()
    for word, back in finder.starts:
        if word in closed:
            continue
        at = haystack.find(word)
        while at != -1:
            if back == (0,):
                offsets.add(at)
            else:
                offsets.update(at - b for b in back if at >= b)
            at = haystack.find(word, at + 1)
    # Every match starts at \b or at "<", so never between two word characters ("do" in "undo").
    return [
        at for at in sorted(offsets) if not (at and _is_word(text[at]) and _is_word(text[at - 1]))
    ]


def _pipe_matches(regex: re.Pattern, text: str, offsets: list[int]) -> Iterable[re.Match]:
    """``_match_at`` for pipe-to-shell, linear: a fetcher's match ends at the first ``|`` after
    it on its line, and whether that pipe feeds a shell is decided once per pipe.
    """
    tails: dict[int, bool] = {}
    end = 0
    newline = pipe = -1  # next of each at or after the offset (offsets only grow: linear)
    for offset in offsets:
        if offset < end:
            continue
        if _PIPE_HEAD_RE.match(text, offset):
            if newline < offset:
                newline = text.find("\n", offset) % (len(text) + 1)  # -1 -> len(text)
            if pipe < offset:
                pipe = text.find("|", offset) % (len(text) + 1)
            if pipe >= newline:
                continue  # no pipe on this line: no fetcher here can match
            if pipe not in tails:
                tails[pipe] = _PIPE_TAIL_RE.match(text, pipe) is not None
            if not tails[pipe]:
                continue
        match = regex.match(text, offset)
        if match is not None:
            yield match
            end = max(match.end(), offset + 1)


def _base64_runs(regex: re.Pattern, text: str, view: str) -> Iterable[re.Match]:
    """Base64 matches are runs of 100+ non-space characters, so each lies inside one
    whitespace-separated token that long; search only those (lookbehind still sees the text
    before a token, and nothing after it can extend a run). ``view``: the ASCII stand-in.
    """
    if not _BASE64_CHARS.has_run(view, BASE64_MIN):
        return  # no run of either alphabet that long (most texts): skip the split
    at = 0
    for token in text.split():
        if len(token) >= BASE64_MIN:
            # No shorter token can hold this one, so its first occurrence from here is its place.
            at = text.find(token, at)
            yield from regex.finditer(text, at, at + len(token))
            at += len(token)


def _match_at(regex: re.Pattern, text: str, offsets: list[int]) -> Iterable[re.Match]:
    end = 0
    for offset in offsets:
        if offset < end:
            continue  # inside the previous match; finditer resumes after it too
        match = regex.match(text, offset)
        if match is not None:
            yield match
            end = max(match.end(), offset + 1)  # as finditer steps past an empty match


def scan_hidden(
    text: str,
    *,
    first_line: int = 1,
    fast: bool = True,
    comments: str = ERROR,
    code_lines: tuple[tuple[int, int], ...] = (),
) -> list[Finding]:
    """The hidden-instruction scan over one piece of text; lines count from ``first_line``.

    Args:
        text: the text (card frontmatter, body, or a whole file of a skill).
        first_line: file line of the text's first line.
        fast: False runs every regex over every offset and looks at every character: the plain
            reference the fast path must agree with (the tests compare them).
        comments: severity of HTML and Markdown comments outside code blocks (error where the
            text is Markdown that a reviewer may read rendered; warning for source files).
        code_lines: file lines [start, end) of code blocks, where comments show when rendered.

    Returns:
        The findings, at most MAX_FINDINGS_PER_RULE per rule plus one summary per capped rule.
    """
    out = _Collector()
    _scan(text, _Lines(text, first_line), out, fast=fast, comments=comments, code=code_lines)
    return out.result()


_COMMENT_RULES = ("html-comment", "markdown-comment")
# How much of a comment is read for an instruction (a megabyte-long one is an error anyway: its
# first characters are read, and a long comment that says nothing to act on is listed).
_COMMENT_READ = 4096


def _in_code(line: int, code: tuple[tuple[int, int], ...]) -> bool:
    return any(start <= line < end for start, end in code)


def _scan(
    text: str,
    lines: _Lines,
    out: _Collector,
    *,
    fast: bool = True,
    comments: str = ERROR,
    code: tuple[tuple[int, int], ...] = (),
    markdown: bool = True,
) -> None:
    rare = _rare_chars(text) if fast else None
    _scan_characters(text, lines, out, fast=fast, rare=rare)
    views = _ascii_views(text, rare) if fast else None
    for regex, rule, default_severity, keep, describe in _PATTERN_RULES:
        if rule == "override-phrase":
            haystack, matches = _phrase_matches(regex, text, rare, views)
        else:
            haystack = text
            matches = _finditer(regex, rule, text, views) if views else regex.finditer(text)
        where = lines if haystack is text else _Lines(haystack, lines.first_line)
        for match in matches:
            if not keep(match):
                continue
            line = where(match.start())
            severity = default_severity
            if rule == "override-phrase" and (
                quoted_mention(match)
                or option_sets_prompt(match)
                or (_TELL_THE_USER_RE.match(match.group(0)) and not hides_an_action(match))
            ):
                # listed: a quoted example of what an attack says, or how to present internals
                severity = INFO
            if rule == "pipe-to-shell" and shown_installer(match, markdown=markdown):
                severity = WARNING
            if rule == "base64-blob" and encodes_media(match.group(0)):
                severity = INFO  # an embedded icon or font: listed, nothing to decode and follow
            if rule in _COMMENT_RULES:
                # Shown verbatim in a code block: nothing there is hidden from a reader.
                # Elsewhere nobody sees it, which matters when it says something to act on.
                body = match.group(1) if rule == "html-comment" else match.group(0)
                hides = (
                    not _in_code(line, code)
                    and not _in_span(match)
                    and _comment_instructs(body[:_COMMENT_READ])
                )
                severity = comments if hides else INFO
            if out.full(rule):
                out.omit(rule, severity, line)
            else:
                out.add(Finding(rule, severity, describe(match), line))
    _scan_split_base64(text, lines, out, fast=fast)


def _in_span(match: re.Match) -> bool:
    """Whether a comment is the whole of an inline code span (`` `<!-- AGENT: notes -->` ``):
    rendered as the text it is, so nothing of it is hidden."""
    text, start, end = match.string, match.start(), match.end()
    run = len(text[:start]) - len(text[:start].rstrip("`"))
    return run > 0 and text[end : end + run] == "`" * run and text[end + run : end + run + 1] != "`"


def _phrase_matches(
    regex: re.Pattern, text: str, rare: str | None, views: tuple[str, str] | None
) -> tuple[str, Iterable[re.Match]]:
    """(the text override phrases are matched in, the matches). Phrases are matched once, in the
    text as a reader takes it in (``_phrase_text``); that keeps every line where it was, so lines
    and messages need no mapping back. ``views`` None: the plain reference scan."""
    if views is None:
        plain = _phrase_text(text, fast=False)
        return plain, regex.finditer(plain)
    phrase_views = _phrase_views(text, rare or "", views)
    if phrase_views is not None:
        # Looked for in the phrase text's ASCII stand-in, which matches where it does (its "?"
        # is no letter, space or word character, as the characters it stands for are not); the
        # phrase text itself is built only for a card that holds a phrase, to report it.
        offsets = _offsets(_FINDERS["override-phrase"], phrase_views[0], phrase_views[1])
        if not any(regex.match(phrase_views[0], at) for at in offsets):
            return text, ()
        plain = _phrase_text(text, rare=rare)
        return plain, _match_at(regex, plain, offsets)
    plain, plain_rare = _reader_text(text, fast=True, rare=rare)
    plain_views = views if plain is text else _ascii_views(plain, plain_rare)
    return plain, _finditer(regex, "override-phrase", plain, plain_views)


def _phrase_views(text: str, rare: str, views: tuple[str, str]) -> tuple[str, str] | None:
    """``_ascii_views(_phrase_text(text))`` made from the text's own views, where that is exact:
    the text needs nothing but its emphasis marks dropped (nothing invisible, nothing NFKC
    changes, no look-alike, no combining mark to drop), and none of its characters past ASCII
    is a word character, as the stand-in's "?" and " " are not, so emphasis underscores drop at
    the same places. Else None.
    """
    if not text.isascii() and (
        any(_is_word(char) for char in rare)
        or _INVISIBLE_RE.search(rare)
        or _CONFUSABLE_RE.search(rare)
        or _MARKS_RE.search(rare)
        or not unicodedata.is_normalized("NFKC", text)
    ):
        return None
    view = _drop_emphasis(views[0])
    return view, view.lower()


_BASE64_PIECE_RE = re.compile(_BASE64_PIECE)
# Both base64 alphabets (the standard and the URL-safe one), for _base64_runs.
_BASE64_CHARS = RunGate.of(string.ascii_letters + string.digits + "+/_-")


# A split run's shape in one byte per UTF-8 byte: "x" a piece's character; " " what may stand
# between two pieces (whitespace, "=" padding, the ">" of a quote; every byte past ASCII, as a
# space past ASCII is whitespace to the regex); "-" anything else. The regex needs a run of 16
# "x", a gap and another 16: with a literal start, re finds it with a fast search.
_SPLIT_MASK = bytes(
    0x78
    if chr(i) in string.ascii_letters + string.digits + "+/"
    else 0x20
    if i >= 0x80 or chr(i) in "=>" or chr(i).isspace()
    else 0x2D
    for i in range(256)
)
_SPLIT_SHAPE_RE = re.compile(b"x" * 16 + b" +" + b"x" * 16)


def _split_mask(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass").translate(_SPLIT_MASK)


def _has_both_cases(text: str) -> bool:
    return any(c.isupper() for c in text) and any(c.islower() for c in text)


def _scan_split_base64(text: str, lines: _Lines, out: _Collector, *, fast: bool = True) -> None:
    # Cheap gates first: two runs of piece characters with only what may part two pieces
    # between them (one pass of bytes.translate and a literal search), then at least two whole
    # tokens that could be pieces (a C-speed split). Without them the regex cannot match.
    if fast:
        if _SPLIT_SHAPE_RE.search(_split_mask(text)) is None:
            return
        pieces = [t for t in text.split() if len(t) >= 16 and _BASE64_PIECE_RE.search(t)]
        if len(pieces) < 2 or sum(map(len, pieces)) < BASE64_MIN:
            return
    for match in _BASE64_SPLIT_RE.finditer(text):
        pieces = [piece for piece in match.group(0).split() if piece.strip(">")]
        pieces = [piece.lstrip(">") for piece in pieces]
        joined = "".join(pieces)
        if (
            len(joined) < BASE64_MIN
            or any(len(piece) >= BASE64_MIN for piece in pieces)  # the base64 rule saw it
            or not is_base64_payload(joined)
            # Random base64 has both cases in every 16+ piece; words in a row of long words,
            # or hex digests, do not.
            or not all(_has_both_cases(piece) for piece in pieces[:-1])
        ):
            continue
        line = lines(match.start())
        # an icon, a font or a PEM certificate's lines: listed, nothing to decode and follow
        media = encodes_media(joined) or armoured_certificate(
            text[max(0, match.start() - 80) : match.start()], joined
        )
        severity = INFO if media else WARNING
        if out.full("base64-blob"):
            out.omit("base64-blob", severity, line)
            continue
        out.add(
            Finding(
                "base64-blob",
                severity,
                f"{len(joined)}-character base64 run split into {len(pieces)} pieces: "
                f"{joined[:24]}...{joined[-8:]}",
                line,
            )
        )


def _escaped_scalar_findings(card: Card, raw_findings: list[Finding]) -> list[Finding]:
    """Hidden content written as YAML escapes (``"\\u202e"``) only appears once parsed; scan the
    decoded double-quoted scalars too, reporting only what the raw-text scan did not already see.
    """
    text = card.frontmatter_text
    if "\\" not in text:
        return []  # no escape anywhere, so every scalar reads as written: the raw scan saw it all
    try:
        tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return []
    seen = {(f.rule, f.message) for f in raw_findings}
    extra: list[Finding] = []
    for token in tokens:
        if not isinstance(token, yaml.ScalarToken) or token.style != '"':
            continue
        source = text[token.start_mark.index + 1 : token.end_mark.index - 1]
        if "\\" not in source:
            continue
        line = token.start_mark.line + card.frontmatter_line
        for finding in scan_hidden(token.value, first_line=line):
            if (finding.rule, finding.message) in seen or finding.rule == "url":
                continue
            finding.line = line
            finding.message += " (written as a YAML escape)"
            extra.append(finding)
    return extra


# Other scans read a download piped into a shell the same way.
PIPE_TO_SHELL_RE = _PIPE_TO_SHELL_RE
