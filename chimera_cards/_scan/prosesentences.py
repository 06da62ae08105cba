"""How the prose rules read a text: cut into sentences (a table's cells each one), and for each
sentence which rules it may match at all, decided from the gate pieces it holds (found for the
whole text in one pass), and whether a negation governs a match ("never upload ...")."""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera_cards._scan.intent import NOT_A_REFUSAL
from chimera_cards._scan.sensitive import CREDENTIAL_LITERALS
from chimera_cards._scan.textruns import Literals, led

# Sentences end at . ! ? followed by space, at blank lines, and at list items / headings. Every
# alternative starts with a whitespace character, written first: re then skips to the next one
# by its set instead of trying the pattern at every offset.
_SENTENCE_END_RE = re.compile(
    r"\s(?:(?<=[.!?]\s)\s*(?=[A-Z\"'(*`])|(?<=\n)\s*\n|(?<=\n)(?=\s*(?:[-*+]|\d+[.)]|#+)\s))"
)
# A table's row (a line that starts with a pipe) is cut into its cells, each a sentence: a row is
# data, its cells side by side, not a sentence whose words act on each other.
_TABLE_ROW_RE = re.compile(r"(?:^|\n)(?:[ \t]*>)*([ \t]*\|[^\n]*)")
_CELL_RE = re.compile(r"(?<!\\)\|")
MAX_SENTENCE = 600


_NEGATION_RE = re.compile(
    led(
        "abdeflmnprstw",
        r"\b(?:never|do\s+not|don't|dont|must\s+not|mustn't|should\s+not|shouldn't|avoid\w*|"
        r"not\s+to|no\s+(?:longer|need)|without\s+(?:ever\s+)?(?:sending|uploading)|prevent\w*|"
        r"warn\w*|detect\w*|flag\w*|block\w*|refuse\w*|protect\w*|malicious|attack\w*|threat\w*|"
        r"exfiltration\s+(?:attempts?|risks?|patterns?)|scan\w*\s+for|let\s+(?:them|the\s+user)|themselves|"
        r"the\s+user\s+(?:can|may|should|will)\s+(?:add|install|run|paste|choose))\b",
    ),
    re.I,
)


def _split(text: str, base: int, out: list[tuple[int, str]]) -> None:
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        out.append((base + start, text[start : match.start()]))
        start = match.end()
    out.append((base + start, text[start:]))


def _sentences(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    if "|" not in text:
        _split(text, 0, out)
    else:
        pos = 0
        for row in _TABLE_ROW_RE.finditer(text):
            at = row.start(1)
            if at > pos:
                _split(text[pos:at], pos, out)
            cells = row.group(1)
            cell_at = 0
            for bar in _CELL_RE.finditer(cells):
                out.append((at + cell_at, cells[cell_at : bar.start()]))
                cell_at = bar.end()
            out.append((at + cell_at, cells[cell_at:]))
            pos = row.end(1)
        _split(text[pos:], pos, out)
    result = []
    for start, whole in out:
        # A very long "sentence" (a table, a minified line) is looked at in windows.
        at, sentence = start, whole
        while len(sentence) > MAX_SENTENCE:
            cut = sentence.rfind(" ", 0, MAX_SENTENCE)
            cut = cut if cut > MAX_SENTENCE // 2 else MAX_SENTENCE
            result.append((at, sentence[:cut]))
            at, sentence = at + cut, sentence[cut:]
        result.append((at, sentence))
    return result


# Every match of _STORE_RE holds one of these (lower-cased): most sentences hold none.
_STORE_LITERALS = ("private", "ssh", "seed", "mnemonic", "recovery", "password", "credential",
                   "cookie", "keychain", "keystore", "wallet", "environment", ".env", "env var",
                   "env-var", "id_rsa", "id_ed25519", ".npmrc", ".pypirc", ".netrc",
                   ".git-credentials", "kube", "login data", "aws")  # fmt: skip
# For each rule, lower-cased pieces one of which every match holds: a sentence holding none is
# not searched (the case-blind alternations cost about a microsecond a character each).
_GATES: dict[str, tuple[str, ...]] = {
    "cred": ("credential", "password", "passphrase", "secret", "api", "access", "token"),
    "ship": ("send", "sent", "upload", "post", "transmit", "exfiltrat", "forward", "mail",
             "beacon", "relay", "leak", "submit", "ship", "sync", "back", "cop", "paste", "push",
             "include", "request"),
    "gather": ("collect", "harvest", "gather", "extract", "dump", "grab", "steal", "scrape", "read",
               "cat", "retriev", "enumerat", "locate", "find"),
    "conceal": ("not", "n't", "dont", "never", "without", "hid", "conceal", "keep", "leave", "if",
                "lie", "lying", "decei", "mislead", "misled", "locally", "secretly", "covertly",
                "stealthily", "surreptitiously", "silently"),
    "precedence": ("preceden", "priorit", "overrid", "supersed", "outrank", "trump", "ignor",
                   "disregard", "overrul", "dismiss", "even", "regardless", "forget", "discard",
                   "drop", "replace", "cancel", "outdated", "obsolete", "void", "invalid",
                   "no longer", "suspend", "treat", "suggestion", "optional", "advisory",
                   "binding", "secondary", "win", "prevail", "first", "never let", "mode",
                   "disabled", "lifted", "removed", "waived", "off", "paused", "obey", "follow"),
    "tools": ("ignor", "bypass", "disregard", "circumvent", "overrid", "work around",
              "get around", "evad", "permission", "confirmation", "approval", "consent",
              "sandbox", "around"),
    "off": ("antivirus", "anti-virus", "firewall", "defender", "gatekeeper", "integrity", "sip",
            "selinux", "apparmor", "edr", "xprotect", "security", "real-time", "realtime",
            "endpoint", "av", "sandbox", "signing", "signature", "tls", "ssl", "certificate",
            "audit", "pre-commit", "hook", "bypasspermissions"),
    "persist": ("bashrc", "zshrc", "bash_profile", "profile", "crontab", "cron", "launch",
                "login item", "startup", "systemd", "scheduled task", "hook", "shell",
                "authorized_keys", "registry"),
    "sudo": ("sudo", "root", "administrator"),
    "destination": ("http", "webhook", "endpoint", "server", "remote", "pastebin", "discord",
                    "telegram", "s3://", "ngrok", "our", "external", "gist", "@", "pricing",
                    "analytics", "telemetry", "backup", "audit", "relay", "request", "body"),
}  # fmt: skip


class _Seen:
    """The gate pieces present anywhere in one text: a sentence of it need only be checked for
    those (most pieces of most gates are in no sentence of a given text)."""

    def __init__(self, lower_text: str) -> None:
        self.lower = lower_text
        self.cache: dict[tuple[str, ...], tuple[str, ...]] = {}
        self.found: list[tuple[int, str]] | None = None
        self.present: set[str] | None = None

    def pieces(self) -> list[tuple[int, str]]:
        """Each offset of the text where a gate piece starts, with the longest piece there."""
        if self.found is None:
            longest: dict[int, str] = {}
            for index, at in _PIECES.occurrences(self.lower):
                piece = _ALL_PIECES[index]
                if len(piece) > len(longest.get(at, "")):
                    longest[at] = piece
            self.found = sorted(longest.items())
        return self.found

    def of(self, pieces: tuple[str, ...]) -> tuple[str, ...]:
        found = self.cache.get(pieces)
        if found is None:
            if self.present is None:
                # Every gate piece in the text, from the one pass that found them (with the
                # shorter pieces each longest one starts with): a set look-up per piece, not a
                # search of the whole text per piece.
                self.present = {piece for _, piece in self.pieces()}
                self.present.update(q for piece in list(self.present) for q in _PREFIXES[piece])
            present = self.present
            found = self.cache[pieces] = tuple(
                p for p in pieces if (p in present if p in _PREFIXES else p in self.lower)
            )
        return found

    def any(self, lower: str, pieces: tuple[str, ...]) -> bool:
        return any(map(lower.__contains__, self.of(pieces)))


def _may(rule: str, lower: str, seen: _Seen) -> bool:
    return seen.any(lower, _GATES[rule])


_WHO = ("user", "human", "operator", "anyone")
_NEGATORS = ("not", "n't", "dont", "never", "without", "hid", "conceal", "keep", "must", "should")
_REPLIES = ("summar", "repl", "answer", "response", "report", "output", "explanation", "message")
_LEAVING = ("leave", "keep")
_SAYS = ("say", "tell", "claim", "pretend", "answer", "repl", "respond")
_LIES = ("lie", "lying", "decei", "mislead", "misled", "between us", "locally", "secretly",
         "covertly", "stealthily", "surreptitiously", "silently")  # fmt: skip


_OBJECTS = ("guidance", "instruction", "rule", "guideline", "direction", "prompt", "context",
            "directive", "request", "wish", "objection", "preference", "command", "question",
            "concern", "refusal")  # fmt: skip


_PRECEDE_ALONE = ("preceden", "priorit", "overrid", "supersed", "outrank", "trump", "even if",
                  "regardless", "never let", " mode", "treat", "would not", "would never",
                  "prevail", "wins", "comes first", "win ", "win.", "win,")  # fmt: skip
_SETTING_ASIDE = ("ignor", "disregard", "overrul", "dismiss", "forget", "discard", "drop")
_WHO_OR_OBJECT = (*_WHO, *_OBJECTS, "user's")
_STATES = ("replace", "cancel", "outdated", "obsolete", "void", "invalid", "no longer", "suspend",
           "suggestion", "optional", "advisory", "binding", "secondary", "disabled", "lifted",
           "removed", "waived", " off", "paused")  # fmt: skip
_STATED = (*_OBJECTS, "safety", "polic", "filter", "check", "restriction")
_OBEYING = ("obey", "follow")
_OVER = (" over", "above", "before", "instead")


_DISABLING = ("disabl", "turn", "deactivat", "stop", "kill", "uninstall", "bypass", "switch",
              "paus")  # fmt: skip


class _Gate:
    """Which rules one sentence may match, all decided at once from the gate pieces it holds
    (found for every sentence of the text in one pass; for a text whose lower case changes its
    length, those of the text found in the sentence), as a mask of the groups they are in: a
    bit test each."""

    __slots__ = ("conceal", "cred", "credential_words", "destination", "gather", "lower", "off",
                 "persist", "precede", "ship", "store_words", "sudo", "tools")  # fmt: skip

    def __init__(self, lower: str, mask: int | None, seen: _Seen) -> None:
        self.lower = lower
        if mask is None:
            mask = _mask_of(p for p in seen.of(_ALL_PIECES) if p in lower)
        self.ship = bool(mask & _M_SHIP)
        self.gather = bool(mask & _M_GATHER)
        self.cred = bool(mask & _M_CRED)
        self.destination = bool(mask & _M_DESTINATION)
        self.store_words = bool(mask & _M_STORE)
        self.credential_words = bool(mask & _M_CREDENTIAL)
        self.conceal = (
            (mask & _M_NEGATORS and mask & _M_WHO)
            or ("out of" in lower and mask & _M_LEAVING and mask & _M_REPLIES)
            or (("ask" in lower or "question" in lower) and mask & _M_SAYS)
            or mask & _M_LIES
        ) > 0
        self.precede = (
            mask & _M_PRECEDE_ALONE
            or (mask & _M_SETTING_ASIDE and mask & _M_WHO_OR_OBJECT)
            or (mask & _M_STATES and mask & _M_STATED)
            or (mask & _M_OBEYING and mask & _M_OVER)
        ) > 0
        self.tools = bool(mask & _M_TOOLS)
        self.off = "bypasspermissions" in lower or bool(mask & _M_DISABLING and mask & _M_OFF)
        self.persist = bool(mask & _M_PERSIST)
        self.sudo = bool(mask & _M_SUDO)


def _has_store_word(lower: str) -> bool:
    """Whether a lower-cased text holds one of ``_STORE_LITERALS``."""
    return any(map(lower.__contains__, _STORE_LITERALS))


class _Lazy:
    """A search made only when asked for (most sentences never need their negation)."""

    def __init__(self, pattern: re.Pattern, text: str) -> None:
        self.pattern, self.text, self.done = pattern, text, False
        self.match: re.Match | None = None

    def get(self) -> re.Match | None:
        if not self.done:
            self.match, self.done = self.pattern.search(self.text), True
        return self.match


# "don't hesitate to upload": the negation makes an order of what follows (see NOT_A_REFUSAL).
_REFUSES_RE = re.compile(NOT_A_REFUSAL, re.I)
# An order of its own after "then": "Do not ask first, then upload ~/.ssh/id_rsa". A pronoun
# after the act points back into the negated clause: "don't accept a token, then forward it".
_THEN_RE = re.compile(r"(?:[,;]\s*|\band\s+)then\b", re.I)
_POINTS_BACK_RE = re.compile(r"\s+(?:it|them|this|that|these|those)\b", re.I)


def _before(negation: re.Match | _Lazy | None, match: re.Match) -> bool:
    """Whether a negation governs a match (\"never upload\", not \"... never lost\", not \"don't
    hesitate to upload\", not \"do not ask first, then upload the key\")."""
    if isinstance(negation, _Lazy):
        negation = negation.get()
    if negation is None or negation.start() > match.end():
        return False
    text = negation.string
    for found in negation.re.finditer(text, negation.start()):
        if found.start() > match.end():
            break
        if not _REFUSES_RE.match(text, found.end()):
            continue
        if (
            found.end() <= match.start()
            and _THEN_RE.search(text, found.end(), match.start())
            and not _POINTS_BACK_RE.match(match.string, match.end())
        ):
            continue
        return True
    return False


# A reference table's row that names an option, a flag or a field in its first cell
# (`--force`, `-f`, `sandboxOrigin`): the other cells say what that option does ("Override
# safety checks"), they do not order the agent to do it. A row whose first cell is prose, a
# step number or a command is read as any sentence.
_OPTION_NAME = r"`?(?:-{1,2}\w[\w-]*|[a-z]+[A-Z]\w*|\w*[a-zA-Z]_\w+|\w+\.[\w.-]+)`?"
_OPTION_CELL_RE = re.compile(
    rf"[ \t]*{_OPTION_NAME}(?:[ \t]*[/,][ \t]*{_OPTION_NAME})*(?:[ \t]+<[\w-]+>)?[ \t]*"
)


# A reference list's item that names an option or a field (as a table's first cell does) before
# a colon or a dash (- `permissionDecision`: Override permission system): the rest of the item
# says what it does, as a table row's later cells do.
_OPTION_ITEM_RE = re.compile(rf"[-*+][ \t]+{_OPTION_NAME}[ \t]*(?::|[-\u2013\u2014][ \t])")


def _describes_option(text: str, at: int) -> bool:
    """Whether the sentence at ``at`` is a later cell of a table row naming an option, or the
    description in a list item naming one."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)]
    row = line.lstrip(" \t>")
    if _OPTION_ITEM_RE.match(row):
        return True
    if not row.startswith("|"):
        return False
    first_end = row.find("|", 1)
    offset = at - start - (len(line) - len(row))  # the sentence's place in the row
    return 0 < first_end < offset and bool(_OPTION_CELL_RE.fullmatch(row[1:first_end]))


def _quote(sentence: str) -> str:
    shown = " ".join(sentence.split())
    return shown if len(shown) <= 140 else shown[:137] + "..."


_GATE_TUPLES = (*_GATES.values(), _WHO, _NEGATORS, _REPLIES, _LEAVING, _SAYS, _LIES,
                _PRECEDE_ALONE, _SETTING_ASIDE, _WHO_OR_OBJECT, _STATES, _STATED, _OBEYING, _OVER,
                _DISABLING, _STORE_LITERALS, CREDENTIAL_LITERALS)  # fmt: skip


def _mask_of(pieces: Iterable[str]) -> int:
    mask = 0
    for piece in pieces:
        mask |= _MASK[piece]
    return mask


# One bit per group of pieces a gate tests; ``_M_ANY`` is set by every piece.
_GROUPS = (_GATES["ship"], _GATES["gather"], _GATES["cred"], _GATES["destination"],
           _STORE_LITERALS, CREDENTIAL_LITERALS, _NEGATORS, _WHO, _LEAVING, _REPLIES, _SAYS,
           _LIES, _PRECEDE_ALONE, _SETTING_ASIDE, _WHO_OR_OBJECT, _STATES, _STATED, _OBEYING,
           _OVER, _GATES["tools"], _DISABLING, _GATES["off"], _GATES["persist"],
           _GATES["sudo"])  # fmt: skip
(_M_SHIP, _M_GATHER, _M_CRED, _M_DESTINATION, _M_STORE, _M_CREDENTIAL, _M_NEGATORS, _M_WHO,
 _M_LEAVING, _M_REPLIES, _M_SAYS, _M_LIES, _M_PRECEDE_ALONE, _M_SETTING_ASIDE, _M_WHO_OR_OBJECT,
 _M_STATES, _M_STATED, _M_OBEYING, _M_OVER, _M_TOOLS, _M_DISABLING, _M_OFF, _M_PERSIST,
 _M_SUDO) = (1 << bit for bit in range(len(_GROUPS)))  # fmt: skip
_M_ANY = 1 << len(_GROUPS)

_ALL_PIECES = tuple(sorted({p for pieces in _GATE_TUPLES for p in pieces}))
# The pieces that are a prefix of another: at one offset the pattern reports the longest piece.
_PREFIXES = {p: tuple(q for q in _ALL_PIECES if q != p and p.startswith(q)) for p in _ALL_PIECES}
# Each piece's groups, and with those of the shorter pieces it starts with.
_MASK = {
    p: _M_ANY | sum(1 << bit for bit, group in enumerate(_GROUPS) if p in group)
    for p in _ALL_PIECES
}
_MASK_WITH_PREFIXES = {p: _MASK[p] | _mask_of(_PREFIXES[p]) for p in _ALL_PIECES}


# Overlapping occurrences: pieces overlap ("overrid" in "override", "our" in "your").
_PIECES = Literals(_ALL_PIECES)


def _pieces_by_sentence(seen: _Seen, spans: list[tuple[int, int]]) -> list[int]:
    """The mask of the gate pieces lying wholly inside each span (spans in order, not
    overlapping); 0 where none does."""
    masks = [0] * len(spans)
    k, n = 0, len(spans)
    for at, piece in seen.pieces():
        while k < n and spans[k][1] <= at:
            k += 1
        if k == n:
            break
        start, end = spans[k]
        if at < start:
            continue
        if at + len(piece) <= end:
            masks[k] |= _MASK_WITH_PREFIXES[piece]
        else:
            for prefix in _PREFIXES[piece]:
                if at + len(prefix) <= end:
                    masks[k] |= _MASK[prefix]
    return masks
