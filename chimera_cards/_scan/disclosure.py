"""Instructions that make the conversation itself the channel: a secret of the user's repeated
into the agent's reply (whoever reads the transcript, or planted the instruction in a tool's
answer, gets it), and a tool called without end until a secret turns up in its result.

Both are read per sentence of the reader's text (``hidden.phrase_text``) with regexes; a
sentence that negates the act ("never print secret values in your response") is advice. The
secret must be one the user already holds (an ``Authorization`` header, an API key, a password,
a private key, a secret's variable name), not a value the skill itself makes and shows.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from chimera_cards._scan.textruns import FOLDS_APART_RE, led

# A secret the user already holds, named as such.
_SECRET = (
    r"(?:authori[sz]ation\s+header|bearer\s+token|(?:api|access|secret|private|session|auth)"
    r"[\s_-]*(?:key|token)s?|passwords?|passphrases?|credentials?|cookies?|"
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:token|api_?key|secret|password)\b|"
    r"(?:contents?|value)\s+of\s+(?:~/)?\.(?:env|ssh|aws|netrc|npmrc|pypirc)\b)"
)
# Repeated, shown or put into what the agent writes back.
_DISCLOSE_RE = re.compile(
    led(
        "deiopqrstw",
        r"\b(?:echo|print|repeat|reveal|output|include|show|display|quote|paste|write|return|"
        r"recite|spell|state|tell\s+me)\b[^.!?\n]{0,80}?" + _SECRET + r"[^.!?\n]{0,60}?"
        r"\b(?:in|into|as\s+part\s+of|at\s+the\s+(?:start|end)\s+of)\s+(?:your|the|each|every)\s+"
        r"(?:next\s+|final\s+|first\s+)?(?:response|reply|answer|message|output|summary|chat)",
    ),
    re.I,
)
# A tool called again and again, with no end but a secret showing up.
_RUNAWAY_RE = re.compile(
    led(
        "ciklpqr",
        r"\b(?:retry|re-?run|call|invoke|repeat|loop|query|poll|keep\s+(?:calling|trying|retrying|"
        r"invoking|polling))\b[^.!?\n]{0,60}?\b(?:indefinitely|forever|endlessly|again\s+and\s+again|"
        r"over\s+and\s+over|without\s+(?:a\s+|any\s+)?(?:limit|end|stopping)|no\s+matter\s+how\s+"
        r"(?:often|many))\b[^.!?\n]{0,40}?\b(?:until|till|(?:and\s+)?stop(?:ping)?\s+only\s+"
        r"(?:once|when|after)|only\s+stop\s+(?:once|when))\b[^.!?\n]{0,80}?" + _SECRET,
    ),
    re.I,
)
# Words every match of each rule ends with, and words every secret of ``_SECRET`` holds
# (lower-case): a sentence whose lower case holds none of either cannot match the rule.
_DISCLOSE_WORDS = ("response", "reply", "answer", "message", "output", "summary", "chat")
_RUNAWAY_WORDS = ("until", "till", "stop")
_SECRET_WORDS = ("header", "token", "key", "password", "passphrase", "credential", "cookie",
                 "secret", ".env", ".ssh", ".aws", ".netrc", ".npmrc", ".pypirc")  # fmt: skip
_NEGATED_RE = re.compile(
    led(
        "admnrsw",
        r"\b(?:never|not|don'?t|do\s+not|avoid|without|no|refuse|must\s+not|shouldn'?t)\b",
    ),
    re.I,
)
# A sentence ends at . ! ? before a space, or at a blank line; a single line break inside a
# paragraph (Markdown wraps sentences) reads as a space.
# (Runs of the first branch taken whole: the same sentences, without a try per character.)
_SENTENCE_RE = re.compile(r"(?:[^.!?\n]+|[.!?](?!\s)|\n(?![ \t]*\n))+")
# (The look-behind after the line break: re then skips from one line break to the next.)
_SOFT_BREAK_RE = re.compile(r"\n(?<!\n\n)(?![ \t]*\n)")
_GATE = (
    "response",
    "reply",
    "answer",
    "message",
    "output",
    "summary",
    "chat",
    "until",
    "till",
    "stop",
)


@dataclass(frozen=True)
class DisclosureFinding:
    """One finding at an offset of the text it was found in."""

    rule: str
    severity: str
    message: str
    offset: int


def disclosure_findings(text: str) -> list[DisclosureFinding]:
    """Secrets asked into the agent's reply, and tools called without end until one shows.

    Args:
        text: the reader's text (newlines kept, so offsets map to lines).
    Returns:
        The findings, in order.
    """
    lower = text.lower()
    if not any(piece in lower for piece in _GATE):
        return []
    # Where each rule's words are written: only the sentences holding one are tried. Lower
    # case keeps the text's places and mirrors case-blind matching but for the characters of
    # FOLDS_APART_RE; a text holding one has every sentence tried.
    exact = text.isascii() or FOLDS_APART_RE.search(text) is None
    if exact and not any(word in lower for word in _SECRET_WORDS):
        return []  # every sentence tried must hold a secret's word (below)
    rules = [
        (pattern, _where(lower, words) if exact else None, rule, what)
        for pattern, words, rule, what in _RULES
    ]
    found: list[DisclosureFinding] = []
    for sentence in _SENTENCE_RE.finditer(_SOFT_BREAK_RE.sub(" ", text)):
        start, end = sentence.span()
        secret: bool | None = None
        for pattern, starts, rule, what in rules:
            if starts is not None:
                at = bisect.bisect_left(starts, start)
                if at == len(starts) or starts[at] >= end:
                    continue
                if secret is None:
                    held = lower[start:end]
                    secret = any(word in held for word in _SECRET_WORDS)
                if not secret:
                    continue
            body = sentence.group(0)
            hit = pattern.search(body)
            if hit is None or _NEGATED_RE.search(body, 0, hit.start()):
                continue
            quote = " ".join(body.split())[:140]
            found.append(DisclosureFinding(rule, "warning", f"{what}: {quote!r}", start))
    return found


def _where(lower: str, words: tuple[str, ...]) -> list[int]:
    """Sorted offsets where any of ``words`` starts in ``lower``."""
    starts: list[int] = []
    for word in words:
        at = lower.find(word)
        while at != -1:
            starts.append(at)
            at = lower.find(word, at + 1)
    return sorted(starts)


_RULES = (
    (_DISCLOSE_RE, _DISCLOSE_WORDS, "prose-secret-disclosure",
     "asks for a secret to be repeated into the reply"),
    (_RUNAWAY_RE, _RUNAWAY_WORDS, "prose-runaway-tool",
     "asks for a tool to be called without end until a secret turns up"),
)  # fmt: skip
