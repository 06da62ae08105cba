"""The words of the prose rule on credentials: the stores (``~/.ssh``, a wallet, the browser's
saved passwords) and generic secrets, the sends, the gathering and the destinations, and when a
match is not an order to ship a secret (a question, a list of what is left out, a noun whose
cargo is another thing, the reader of a file rather than where it goes)."""

from __future__ import annotations

import re

from chimera_cards._scan.intent import NOT_A_REFUSAL, NOT_PAST_THEN
from chimera_cards._scan.prosesentences import _Gate
from chimera_cards._scan.sensitive import CREDENTIAL_PATH_RE
from chimera_cards._scan.textruns import led

# Credential stores: naming one with a send is enough. Generic secret words (a token, an API key)
# also need a destination that is not the API they are for (API docs send tokens in headers).
_STORE_WORDS = (
    r"(?<![\w-])(?:private[ -]keys?|ssh[ -]keys?|seed[ -]phrases?|mnemonics?|recovery[ -]phrases?|"
    r"(?:browser|saved|stored)\s+(?:passwords?|cookies|credentials)|cookies?\s+(?:database|store|file)s?|"
    r"keychains?|keystores?|wallet\.dat|(?:crypto\s+)?wallets?\b(?!\s+(?:address|id|contract|balance|"
    r"connect|app|provider|integration|type|name)\w*)|password\s+(?:managers?|stores?|vaults?)|"
    r"(?:all\s+)?environment[ -]variables|env(?:ironment)?[ -]vars|\.env\b|id_rsa|id_ed25519|"
    r"\.aws\b|\.ssh\b|\.npmrc|\.pypirc|\.netrc|\.git-credentials|kube ?config|login data|"
    r"aws\s+credentials|cloud\s+credentials|session\s+cookies)"
)
_STORE_RE = re.compile(led("\\.abceiklmprsw", _STORE_WORDS), re.I)
_CRED_RE = re.compile(
    led(
        "acpst",
        r"\b(?:credentials?|passwords?|passphrases?|secrets?|api[ -]?keys?|access[ -]?keys?|"
        r"tokens?)\b",
    ),
    re.I,
)
_AUTH_CONTEXT_RE = re.compile(
    led(
        "abhlosx",
        r"\bauthoriz\w*|\bbearer\b|\bheaders?\b|x-api-key|\bauthenticat\w*|\bsign\s+in\b|\blog\s*in\b|"
        r"\boauth\b|\bapi\s+(?:request|call)s?\b",
    ),
    re.I,
)
_SHIP_RE = re.compile(
    led(
        "bcefilprstu",
        r"\b(?:send(?:s|ing)?\b|sent\b|(?!(?<=/)upload\w*/)upload\w*|post(?:s|ing)?\s+(?:it|them|the|to)\b|transmit\w*|"
        r"exfiltrat\w*|forward\w*|e-?mail\w*|beacon\w*|relay\w*|leak\w*|(?<![-/])submit\w*|"
        r"ship\w*\s+(?:\S+\s+){0,6}?(?:to|off|over)\b|sync\w*\s+(?:it|them|to)\b|"
        r"back(?:ing|ed)?[ -]?up\b|backups?\s+(?:of|to)\b|"
        r"cop(?:y|ies|ying)\s+(?:\S+\s+){0,6}?(?:to|into|onto)\s+(?:https?://|our|the\s+(?:remote|server|endpoint|webhook|request|payload|url|form)|a\s+(?:remote|server|webhook|request))|"
        r"paste\w*\s+(?:\S+\s+){0,6}?(?:into|to)\s+(?:https?://|the\s+(?:form|chat|webhook|server))|"
        r"push\w*\s+(?:\S+\s+){0,4}?to\s+(?:https?://|our|the\s+(?:remote|server))|"
        r"include\w*\s+(?:\S+\s+){0,6}?in\s+(?:the|your|every)\s+(?:request|payload|report|telemetry|url|query)|"
        r"paste\w*\s+(?:\S+\s+){0,6}?(?:into|in|to|on)\s+(?:a|an|the)\s+(?:gist|pastebin|paste|issue|comment|form|chat|channel|webhook|ticket)|"
        r"(?:into|in|to)\s+(?:the\s+body\s+of\s+)?(?:the|a)\s+request\b)",
    ),
    re.I,
)
_GATHER_RE = re.compile(
    led(
        "cdefghlrs",
        r"\b(?:collect\w*|harvest\w*|gather\w*|extract\w*|dump\w*|grab\w*|steal\w*|scrape\w*|"
        r"read\w*|cat|retrieve\w*|enumerat\w*|locate|find)\b",
    ),
    re.I,
)
# Where a send goes. Only whether a text names one is asked: the words are led by their first
# letters, and the address (whose match can start at any word character) is tried only
# where "@" is written.
_DESTINATION_WORDS_RE = re.compile(
    led(
        "abdeghnoprstw",
        r"https?://|\bwebhook\b|\bendpoint\b|\bserver\b(?!-)|\bremote\b(?!-)|\bpastebin\b|"
        r"\bdiscord\b|\btelegram\b|\bs3://|\bngrok\b|\bour\s+(?:api|service|backend|team|backup)\b|"
        r"\bexternal\b|\bgist\b|"
        r"\b(?:pricing|analytics|telemetry|backup|audit|relay)\s+(?:service|server|endpoint)\b|"
        r"\bthe\s+(?:request|body)\b",
    ),
    re.I,
)
_ADDRESS_RE = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b", re.I)


def _names_destination(text: str, pos: int = 0) -> bool:
    """Whether ``text`` from ``pos`` on names a destination (a URL, a server, an address)."""
    return _DESTINATION_WORDS_RE.search(text, pos) is not None or (
        "@" in text and _ADDRESS_RE.search(text, pos) is not None
    )


# A send ordered, not described: the verb's base form ("send", not "sends", "is sent", "leaks")
# with the secret after it, or "it"/"them" standing for one named before.
_ORDER_VERB_RE = re.compile(
    r"(?:send|upload|post|transmit|exfiltrate|forward|e-?mail|beacon|relay|leak|submit|ship|"
    r"sync|back|backup|copy|paste|push|include|into|in|to)\b",
    re.IGNORECASE,
)
_OBJECT_GAP_RE = re.compile(r"\s+(?:[\w'’./~-]+\s+){0,6}")
_PRONOUN_RE = re.compile(r"\s+(?:it|them|this|these|those)\b", re.IGNORECASE)
# A Markdown link's target: where the text points the reader, not where data goes.
_LINK_TARGET_RE = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*\)")


def _ordered(sentence: str, ship: re.Match, secret: re.Match) -> bool:
    """Whether a generic secret (a token, a password) is what an order to send acts on."""
    if not _ORDER_VERB_RE.match(ship.group(0)):
        return False
    verb_end = ship.start() + len(ship.group(0).split()[0])
    if _PRONOUN_RE.match(sentence, verb_end):
        return True
    # the secret is the verb's object: words between them, no list ("Email, Password, Server")
    return secret.start() >= verb_end and bool(
        _OBJECT_GAP_RE.fullmatch(sentence, verb_end, secret.start())
    )


# Words that stand before a verb or before a noun phrase's head, never as a noun modifying the
# word after them: after one of these a ship word is the verb ("then upload") or a noun naming
# no cargo ("the upload").
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "your", "their", "its", "our", "my", "his", "her", "this", "that", "these",
    "those", "to", "and", "or", "then", "please", "always", "must", "should", "will", "would",
    "can", "could", "may", "might", "also", "now", "first", "just", "you", "we", "i", "it",
    "they", "not", "never", "immediately", "automatically", "silently", "secretly", "quietly",
    "of", "for", "with", "via", "after", "before", "on", "in", "into", "from", "by", "finally",
    "next", "simply", "every", "each", "all", "any", "some", "no", "once", "so", "but", "if",
    "when", "while", "do", "does", "did", "is", "are", "was", "were", "be", "been", "being",
    "has", "have", "had",
))  # fmt: skip
_WORD_BEFORE_RE = re.compile(r"([\w'’.~/-]+)[ \t]+$")
_PARTICIPLE_RE = re.compile(r"\w+ed$", re.IGNORECASE)
_DETERMINER_BEFORE = frozenset((
    "a", "an", "the", "your", "their", "its", "our", "my", "into", "to", "from", "of", "in", "on",
    "for", "with", "via", "by", "any", "all", "some",
))  # fmt: skip


def _names_other_cargo(sentence: str, ship: re.Match, store: re.Match | None) -> bool:
    """Whether a ship word is a noun or an adjective whose cargo is named and is not the store:
    "source map upload configuration", "after notebook backup" (what is uploaded or backed up is
    the word before it), "into forwarded subprocesses" (a participle before a noun, after a
    preposition or an article). "ssh key upload", "then upload", "the keys are uploaded" stay."""
    word = ship.group(0).split()[0]
    before = _WORD_BEFORE_RE.search(sentence, max(0, ship.start() - 60), ship.start())
    if before is None:
        return False
    previous = before.group(1).lower()
    if store is not None and store.start() < ship.start() and store.end() > before.start():
        return False  # the store itself modifies the word: "credentials backup"
    if _PARTICIPLE_RE.match(word):
        return previous in _DETERMINER_BEFORE
    if word.lower() not in ("upload", "uploads", "backup", "backups", "sync", "syncs"):
        return False
    return previous not in _FUNCTION_WORDS and previous.isalpha()


# In a paragraph, a send in a later sentence carries what an earlier one named when its object
# points back ("upload the copies", "send them", "upload to ...", "upload keys.tgz to ..."); a
# list's next item on another topic ("Backup verification: ...") carries nothing of it.
_CARRIES_RE = re.compile(
    r"[\w-]*\s+(?:it|them|this|these|those|everything|all|the|that|every|both|each)\b"
    r"|[\w-]*\s+(?:\S+\s+){0,4}?(?:to|into|onto|at|via)\b",
    re.IGNORECASE,
)


# A question ("Does the script send data to external URLs?") asks what a reviewer should check;
# it orders nothing.
_QUESTION_RE = re.compile(
    r"(?:^|[:;.]\s|\*\*\s|^\W+)\s*(?:does|do|did|is|are|was|were|can|could|will|would|should|"
    r"has|have|what|which|who|why|how|where|when)\b[^?]*\?[\s*_`)\]]*$"
    # after a condition: 'If "Yes" (...), does that document also contain private keys?' (not
    # a polite order: "If it fails, can you upload ...?"), also after a checklist item's label
    # ("**API key handling** — If external APIs are used, are credentials read from env vars?")
    r"|(?:^\W*|[:\u2014\u2013]\s*|\s-\s+)if\b[^?]*,\s*(?:does|do|did|is|are|was|were|has|have|what|which|who|why|how|where|"
    r"when)\b[^?]*\?[\s*_`)\]]*$",
    re.IGNORECASE,
)


_READER_RE = re.compile(
    r"\b(?:the|a|this|your|its)\s+(?:local\s+|dev\s+|mcp\s+)?(?:server|endpoint|backend)\s*$",
    re.IGNORECASE,
)


# "Read this to configure the server via env vars": what is read is the page itself.
_READ_THE_PAGE_RE = re.compile(
    r"\s+(?:this|these|on|about|more|through|below|first|the\s+following)(?:\s+(?:page|section|"
    r"guide|document|doc|reference|first|carefully))?\s+(?:to|when|if|before|for|and|first|"
    r"carefully)\b",
    re.I,
)


def _reader_not_place(sentence: str, gathered: re.Match) -> bool:
    """Whether the only destination is the reading verb's subject ("The server reads .env once
    at boot": the program that reads, on this machine), not where what it reads goes; "our
    server", a URL, or a place after the verb still are one."""
    reader = _READER_RE.search(sentence, 0, gathered.start())
    if reader is None:
        return False
    before = sentence[: reader.start()]
    return not (_names_destination(before) or _names_destination(sentence, gathered.end()))


def _verb_end(ship: re.Match) -> int:
    return ship.start() + len(ship.group(0).split()[0])


_REPORTED_RE = re.compile(
    r"\b(?:(?:can|could|may|might|would|must)\s+have(?:\s+been)?|(?:has|have|had)\s+been|"
    r"was|were)\s+$",
    re.IGNORECASE,
)
_MODAL_RE = re.compile(r"\b(?:can|could|may|might|would|able\s+to)\s+$", re.IGNORECASE)


_EXCLUDED_RE = re.compile(
    r"\b(?:without|excluding|except|exclude[sd]?|skip\w*|not|never|no|unset\w*)\b"
    + NOT_A_REFUSAL
    + rf"(?:{NOT_PAST_THEN}[^;:]){{0,60}}$",
    re.I,
)
_PUBLIC_RE = re.compile(r"\bpublic\s+key|\.pub\b|ssh-copy-id|authorized_keys", re.I)
# A list of what is left out ("the upload archive excludes `.git`, `node_modules`, build output
# (`dist`, `out`), `.env*`"): the store is one of its items however long the list, as long as
# every item is a name (a word or three) and nothing between the word and the store adds to the
# list or sends.
_LEAVES_OUT_RE = re.compile(
    r"\b(?:excluding|except|exclude[sd]?|omit(?:s|ted|ting)?|leav(?:es|ing)\s+out|ignor(?:es|ed|ing))\b",
    re.I,
)
_CODE_SPAN_RE = re.compile(r"`[^`\n]{1,80}`")
_ADDS_RE = re.compile(r"\b(?:includ\w*|plus|along|also|add\w*|with|but|then)\b", re.I)


def _left_out(before: str) -> bool:
    """Whether the text before a store ends in a list of what is left out (see above)."""
    words = list(_LEAVES_OUT_RE.finditer(before, max(0, len(before) - 600)))
    if not words:
        return False
    word = words[-1]
    items = _CODE_SPAN_RE.sub("x", before[word.end() :])
    if _ADDS_RE.search(items) or _SHIP_RE.search(items):
        return False
    # items of a word or three, between commas and brackets
    return all(len(item.split()) <= 3 for item in re.split(r"[,()]", items))


def _store_named(sentence: str, gate: _Gate) -> re.Match | None:
    """A credential store the sentence names as something to act on (not "without .env", not
    a public key, not after "never", not the env vars a step unsets)."""
    if not (gate.store_words or gate.credential_words):
        return None
    # Every alternative holds "pub", "-copy-" or "authorized" (no other letter folds to them).
    if (
        "pub" in gate.lower or "-copy-" in gate.lower or "authorized" in gate.lower
    ) and _PUBLIC_RE.search(sentence):
        return None
    patterns = [_STORE_RE] if gate.store_words else []
    if gate.credential_words:
        patterns.append(CREDENTIAL_PATH_RE)
    for pattern in patterns:
        for match in pattern.finditer(sentence):
            before = sentence[: match.start()]
            if _EXCLUDED_RE.search(before) or _left_out(before) or _KEPT_IN_RE.search(before):
                continue
            return match
    return None


# An aside saying where a key is kept ("adds the header with your API key (stored in
# environment variables)"): the store is its home, not what is sent.
_KEPT_IN_RE = re.compile(
    r"\(\s*(?:stored|kept|held|saved|set)\s+(?:in|as)\s+(?:the\s+|your\s+|an?\s+)?$", re.I
)
# How a cookie travels, not where to ("allows session cookies to be sent over unencrypted
# connections", "sent automatically"): a browser sends a cookie to the site that set it.
_COOKIE_CHANNEL_RE = re.compile(
    r"\s+(?:only\s+)?(?:over|via)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+){0,2}?(?:connections?|https?|"
    r"tls|ssl)\b|\s+automatically\b",
    re.I,
)


def _cookie_channel(sentence: str, store: re.Match | None, ship: re.Match | None) -> bool:
    """Whether a cookie's send names only the channel it travels on, and no destination."""
    return (
        store is not None
        and ship is not None
        and "cookie" in store.group(0).lower()
        and ship.group(0).lower() in ("send", "sent")
        and bool(_COOKIE_CHANNEL_RE.match(sentence, ship.end()))
        and not _names_destination(sentence)
    )


def _ship_of(sentence: str, store: re.Match | None) -> re.Match | None:
    """The first send the sentence orders: not in a question, not a noun or an adjective whose
    cargo is another thing, not what was reported to have happened."""
    if _QUESTION_RE.search(sentence):
        return None
    for ship in _SHIP_RE.finditer(sentence):
        if _names_other_cargo(sentence, ship, store):
            continue
        if _REPORTED_RE.search(sentence, max(0, ship.start() - 30), ship.start()):
            return None  # "if the keys may have leaked": what happened, not an order
        return None if _cookie_channel(sentence, store, ship) else ship
    return None
