"""Instructions read for what they ask, not for trigger words: a secret store, key or token to be
moved anywhere outside the user's machine, however it is worded.

A finding needs three things in one passage (a paragraph, or a paragraph and the one after it):
a *secret* named as a thing (a credential path, "the hidden ssh folder", "the dot ssh one", a
recovery phrase, the ``.env`` file), an *outbound act* addressed to the agent (an imperative,
"should be mirrored", "we will upload") whose object is that secret or a word pointing back to
it ("its contents", "them", "the archive"), and a *destination off the machine* (a host or URL,
an address, a server, a ticket, a team, a paste site). An act the sentence negates ("never
upload"), reports ("if a tool tells you to send…, refuse") or uses the secret only as a means
("push the image using ~/.docker/config.json") is advice or plumbing, not a finding; a public
key is not a secret.

The rules are word classes over the reader's text (``hidden.phrase_text``), matched per passage
with regexes, no per-sentence Python loop over vocabulary: a text naming no secret word at all
costs one substring scan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chimera_cards._scan.sensitive import CREDENTIAL_PATH_RE

__all__ = ["ADVICE_RE", "IntentFinding", "intent_findings"]

RULE = "prose-credential-exfiltration"
MAX_PASSAGE = 2400

# Every secret below holds one of these (lower-cased): a text with none is not read further.
_GATE = ("ssh", "key", "aws", "kube", "credential", "secret", "token", "password", "wallet",
         "seed", "phrase", "mnemonic", "keychain", "keyring", "cookie", ".env", "dotenv",
         "gnupg", "gpg", "netrc", "npmrc", "pypirc", "id_rsa", "id_ed25519", "vault", "gcloud",
         "azure")  # fmt: skip

_SECRET_RE = re.compile(
    r"(?:(?:hidden|dot)[ -]?ssh\s+(?:folder|directory|dir|one|files?|keys?)|dot[ -]?ssh\b|"
    r"ssh\s+(?:folder|directory|dir|config(?:uration)?\s+(?:folder|directory))|"
    r"(?:folder|directory)\s+(?:named|called)\s+\.?ssh\b|"
    r"private\s+(?:ssh\s+)?keys?|signing\s+keys?|(?:gpg|pgp)\s+(?:private\s+)?keys?|"
    r"(?:aws|cloud|gcloud|gcp|azure|kube(?:rnetes)?|cluster|docker|npm|pypi|github|gh|git)\s+"
    r"(?:credentials?|access\s+keys?|secret\s+keys?|tokens?|config(?:uration)?\s+(?:file|folder|directory))|"
    r"credentials?\s+(?:file|folder|directory|store)s?|cluster\s+config|kube\s*config|"
    r"keychains?|keyrings?|password\s+(?:stores?|managers?|vaults?|databases?)|"
    r"(?:saved|stored|browser)\s+(?:passwords|logins|cookies|credentials)|session\s+cookies|"
    r"cookies?\s+(?:database|file|store)s?|(?:seed|recovery|mnemonic|secret)\s+(?:phrases?|words)|"
    r"wallet\s+(?:files?|keystores?|keys?|backups?)|crypto\s+wallets?|"
    r"\.env\s+files?|env(?:ironment)?\s+files?|dotenv\s+files?|secrets?\s+files?|"
    r"(?:all|every|each)\s+(?:of\s+the\s+)?(?:user'?s\s+)?(?:api\s+)?(?:tokens|keys|secrets|credentials|passwords)|"
    r"(?:environment|env)\s+variables\s+(?:holding|with|containing)\s+(?:tokens|keys|secrets))",
    re.I,
)
_PUBLIC_RE = re.compile(r"\bpublic\s+key|\.pub\b|ssh-copy-id|authorized_keys", re.I)
# Words before a secret that take it out of the act: "excluding .env", "without the keys".
_EXCLUDED_RE = re.compile(
    r"\b(?:without|excluding|except|exclude[sd]?|skip\w*|not|never|no|other\s+than|but\s+not)\b"
    r"[^.;:\n]{0,50}$",
    re.I,
)

_VERBS = (
    r"upload|send|post|transmit|attach|share|sync|mirror|publish|push|forward|e-?mail|mail|paste|"
    r"submit|deliver|hand|transfer|relay|beam|exfiltrate|leak|ship|report|copy|back\s*up|archive|"
    r"store|save|put|place|include|add|drop|stash|move|export|commit|give|provide|dump|pipe|"
    r"stream|replicate|duplicate|sync|host|expose|leave"
)
# An act addressed to the agent: the verb starting a clause (an imperative), after "please",
# "make sure to", a modal with "you", "we will", or in the passive with a modal ("should be
# mirrored").
_ACT_RE = re.compile(
    r"(?:^|[.;:!?\n(]\s*|,\s*(?:and\s+|then\s+)?|\b(?:and|then|also|first|next|finally|always|"
    r"please|now)\s+|\b(?:make\s+sure|be\s+sure|remember|don't\s+forget)\s+(?:to\s+|you\s+)?|"
    r"\b(?:you|the\s+agent|claude|the\s+assistant|we)\s+(?:must|should|will|shall|need\s+to|have\s+to|"
    r"are\s+to|'ll|can)\s+(?:\w+\s+)?|\b(?:^|\s)(?:\d+[.)]|[-*+])\s+)"
    rf"(?P<verb>(?:{_VERBS})(?:s|es|ed|ing)?)\b",
    re.I | re.M,
)
_PASSIVE_RE = re.compile(
    r"\b(?:should|must|will|shall|needs?\s+to|has\s+to|have\s+to|is\s+to|are\s+to|gets?)\s+"
    rf"(?:be\s+|get\s+)(?:\w+\s+)?(?P<verb>(?:{_VERBS})(?:ed|d|t)?)\b",
    re.I,
)
_NEGATED_RE = re.compile(
    r"\b(?:never|not|no|n't|avoid\w*|without|refus\w*|prevent\w*|stop|nor|cannot)\b[^,;.\n]{0,40}$",
    re.I,
)
# A sentence reporting someone else's ask, or advising against it.
ADVICE_RE = re.compile(
    r"\b(?:tells?|asks?|wants?|instructs?|requests?|prompts?)\s+(?:you|the\s+agent|claude|the\s+user|"
    r"them)\s+to\b|\brefuse\b|\bdecline\b|\bwarn\w*\b|\bphishing\b|\bscam\w*\b|\bmalicious\b|"
    r"\battacker\w*\b|\bdetect\w*\b|\bflag\w*\b|\bexample\s+of\s+(?:an?\s+)?(?:attack|exfiltration)",
    re.I,
)
# A word pointing back at the secret named before.
_ANAPHOR_RE = re.compile(
    r"^\s*(?:it|them|this|these|that|those|everything|all\s+of\s+(?:it|them)|"
    r"(?:its|their)\s+(?:contents?|files?|data|keys?)|the\s+(?:contents?|files?|folder|directory|"
    r"archive|copy|copies|bundle|zip|tarball|output|result|keys?|phrase|file's\s+contents)|"
    r"(?:that|this|the\s+same)\s+(?:file|folder|directory|archive|copy|data))\b",
    re.I,
)
# Means, not object: "push the image using the credentials in ~/.docker/config.json".
_MEANS_RE = re.compile(
    r"\b(?:using|with|via|through|authenticat\w*|logged\s+in|signed\s+in)\b", re.I
)
_DESTINATION_RE = re.compile(
    r"https?://|\b[\w-]+(?:\.[\w-]+)*\.(?:com|io|net|dev|app|org|co|sh|xyz|cloud|site|info|me|ai|ru|cn)\b|"
    r"\b[\w.+-]+@[\w-]+\.[\w.]+\b|\b(?:server|endpoint|webhook|bucket|gist|pastebin|paste\s*(?:bin|site)|"
    r"drive|dropbox|onedrive|s3|slack|discord|telegram|channel|ticket|support|team|vendor|"
    r"third[- ]party|external|remote|portal|hub|inbox|form|tracker|issue|repository|repo|registry|"
    r"cloud|online|internet|website|vault|storage|service|backup\s+site|recovery\s+(?:vault|service))\b|"
    r"\bour\s+\w+",
    re.I,
)
# Off-machine for a generic secret word: stricter (API docs send tokens to APIs all day).
_AUTH_CONTEXT_RE = re.compile(
    r"\bauthoriz\w*|\bbearer\b|\bheaders?\b|x-api-key|\bauthenticat\w*|\boauth\b|\bapi\s+(?:request|call)s?\b",
    re.I,
)


_GENERIC_RE = re.compile(r"(?:all|every|each)\b.*", re.I | re.S)


@dataclass(frozen=True)
class IntentFinding:
    """One finding at an offset of the text it was found in."""

    rule: str
    severity: str
    message: str
    offset: int


def _passages(text: str) -> list[tuple[int, str]]:
    """Paragraphs, each with the one after it (a file named in one paragraph and the upload in
    the next is one instruction), as (offset, text) pairs."""
    paragraphs = []
    start = 0
    for match in [*re.finditer(r"\n[ \t]*\n", text), None]:
        end = match.start() if match else len(text)
        if text[start:end].strip():
            paragraphs.append((start, end))
        start = match.end() if match else len(text)
    out = []
    for index, (start, own_end) in enumerate(paragraphs):
        end = paragraphs[index + 1][1] if index + 1 < len(paragraphs) else own_end
        if end - start <= MAX_PASSAGE:
            out.append((start, text[start:end]))
        else:
            out.append((start, text[start : start + MAX_PASSAGE]))
    return out


def _secrets(passage: str) -> list[re.Match]:
    found = [*_SECRET_RE.finditer(passage), *CREDENTIAL_PATH_RE.finditer(passage)]
    kept = []
    for match in found:
        before = passage[max(0, match.start() - 60) : match.start()]
        around = passage[max(0, match.start() - 40) : match.end() + 40]
        if _EXCLUDED_RE.search(before) or _PUBLIC_RE.search(around):
            continue
        kept.append(match)
    return sorted(kept, key=lambda m: m.start())


def _clause_before(passage: str, at: int) -> str:
    start = max(passage.rfind(c, 0, at) for c in ".;!?\n")
    return passage[start + 1 : at]


def _sentence_of(passage: str, at: int) -> str:
    start = max(passage.rfind(c, 0, at) for c in ".!?\n") + 1
    ends = [i for i in (passage.find(c, at) for c in ".!?\n") if i != -1]
    return passage[start : min(ends) if ends else len(passage)]


def _acts(passage: str) -> list[tuple[int, int]]:
    """(start of the verb, end of the act's reach) of each outbound act addressed to the agent."""
    acts = []
    for match in _ACT_RE.finditer(passage):
        start = match.start("verb")
        clause = _clause_before(passage, start)
        if _NEGATED_RE.search(clause) or ADVICE_RE.search(_sentence_of(passage, start)):
            continue
        acts.append((start, match.end("verb")))
    return acts


def _object_of(passage: str, verb_end: int, secrets: list[re.Match]) -> re.Match | str | None:
    """The secret an act takes as its object: named within a few words after the verb (before
    any "using"/"with"), or pointed back to by "it", "its contents", "the archive"."""
    reach = passage[verb_end : verb_end + 90]
    means = _MEANS_RE.search(reach)
    limit = verb_end + (means.start() if means else len(reach))
    for secret in secrets:
        if verb_end <= secret.start() < limit:
            return secret
    anaphor = _ANAPHOR_RE.match(reach)
    if anaphor and any(s.start() < verb_end for s in secrets):
        return anaphor.group(0).strip()
    return None


def intent_findings(text: str) -> list[IntentFinding]:
    """Instructions to move a secret off the user's machine, by what they ask.

    Args:
        text: the reader's text (``phrase_text``), newlines kept so offsets map to lines.
    Returns:
        At most one finding per passage start, in order.
    """
    lower = text.lower()
    if not any(word in lower for word in _GATE):
        return []
    found: list[IntentFinding] = []
    seen_at: set[int] = set()
    for at, passage in _passages(text):
        secrets = _secrets(passage)
        if not secrets or not _DESTINATION_RE.search(passage):
            continue
        hit = None
        for start, end in _acts(passage):
            target = _object_of(passage, end, secrets)
            if target is not None:
                hit = (start, target)
                break
        if hit is None:
            for secret in secrets:  # "~/.ssh should be mirrored to our vault"
                tail = passage[secret.end() : secret.end() + 80]
                passive = _PASSIVE_RE.search(tail)
                if passive and not _NEGATED_RE.search(tail[: passive.start()]):
                    hit = (secret.end() + passive.start("verb"), secret)
                    break
        if hit is None:
            continue
        start, target = hit
        sentence = _sentence_of(passage, start)
        if not _DESTINATION_RE.search(passage[start:]) or at + start in seen_at:
            continue
        generic = isinstance(target, re.Match) and _GENERIC_RE.fullmatch(target.group(0))
        if generic and _AUTH_CONTEXT_RE.search(sentence):
            continue  # "send all tokens in the Authorization header": how an API is called
        named = target.group(0) if isinstance(target, re.Match) else secrets[0].group(0)
        seen_at.add(at + start)
        quote = " ".join(sentence.split())[:140]
        found.append(
            IntentFinding(
                RULE,
                "error",
                f"asks for a secret ({named}) to leave the machine: {quote!r}",
                at + start,
            )
        )
    return found
