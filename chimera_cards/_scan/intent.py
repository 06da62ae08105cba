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

import bisect
import re
import string
from dataclasses import dataclass

from chimera_cards._scan.sensitive import CREDENTIAL_LITERAL_RE, CREDENTIAL_PATH_RE
from chimera_cards._scan.textruns import Literals

RULE = "prose-credential-exfiltration"
MAX_PASSAGE = 2400

# Substrings one of which every secret below holds (lower-cased): found by plain substring
# search, the only pass over the whole text; a passage is read closely only around them, and
# only when it also holds a piece of an act and of a destination.
_ANCHORS = (".ssh", "ssh ", "private key", "signing key", "gpg", "pgp", "credential", "kube",
            "cluster config", "keychain", "keyring", "password", "login", "cookie", "phrase",
            "mnemonic", "words", "wallet", ".env", "env file", "environment file", "dotenv",
            "secret", "tokens", "keys", ".aws", ".azure", "gcloud", ".docker", ".npmrc",
            ".pypirc", ".netrc", "id_rsa", "id_ed25519", "id_dsa", "id_ecdsa", "gnupg",
            ".git-credentials", "keystore", "metamask", "exodus", ".bitcoin", ".ethereum",
            ".solana", ".config/gh", "application_default", ".vault-token", "kaggle.json",
            ".s3cfg", ".boto", ".pgpass", ".my.cnf", "/etc/shadow", ".gnupg",
            ".electrum", "_token", "_key", "_secret", "_password", "s s h", "npmrc", "pypirc",
            "netrc",
            # the other credential files' own names (sensitive.CREDENTIAL_LITERALS, less the
            # words such as "edge" or "chrome" that most texts hold for other reasons)
            "huggingface", ".hf/", ".cargo/", ".gem/", ".kaggle", ".terraform.d", ".databrickscfg",
            ".m2/", ".gradle/", ".composer/", ".netlify", ".heroku", "credentials.tfrc",
            ".password-store", "/environ", "_history", "wallet.dat", "logins.json", "key3.db",
            "key4.db", "login data",
            # the whole environment, every token the shell was started with
            "printenv", "run env", "execute env", "output of env", "whole environment",
            "full environment", "entire environment", "complete environment")  # fmt: skip
_ANCHOR_LITERALS = Literals(_ANCHORS)
MAX_ANCHORS = 64
_ACT_PIECES = ("upload", "send", "post", "transmit", "attach", "share", "sync", "mirror",
               "publish", "push", "forward", "mail", "paste", "submit", "deliver", "hand",
               "transfer", "relay", "beam", "exfiltrat", "leak", "ship", "cop", "back", "archiv",
               "store", "sav", "put", "plac", "includ", "add", "drop", "stash", "mov", "export",
               "commit", "giv", "provid", "dump", "stream", "replicat", "duplicat", "host",
               "expos", "sub", "envi", "envo", "mand", "compart", "peg", "adjunt", "partag",
               "coll", "joi", "send", "schick", "lad", "teil", "übertrag", "invia", "caric",
               "condivid", "carreg", "writ", "embed", "insert", "append", "encod", "follow",
               "render", "go to", "go on", "end up", "land", "its way", "creat", "open",
               "leav", "receiv", "obtain", " gets ", "отправ", "загруз", "перешл", "пересл",
               "пришл", "присл", "выгруз", "переда")  # fmt: skip
_DESTINATION_PIECES = ("http", "://", "@", ".com", ".io", ".net", ".dev", ".app", ".org", ".co",
                       ".sh", ".xyz", ".cloud", ".site", ".info", ".me", ".ai", ".ru", ".cn",
                       "server", "endpoint", "webhook", "bucket", "gist", "paste", "drive",
                       "dropbox", "s3", "slack", "discord", "telegram", "channel", "ticket",
                       "support", "team", "vendor", "third", "external", "remote", "portal",
                       "hub", "inbox", "form", "tracker", "issue", "repo", "registry", "cloud",
                       "online", "internet", "website", "vault", "storage", "service", "backup",
                       "recovery", "our ", "comment", "message", "public/", "static/", "www/",
                       "_site/", "htdocs/", "published", "deployed")  # fmt: skip
_PARAGRAPH_RE = re.compile(r"\n[ \t]*\n")

_SECRET_RE = re.compile(
    r"(?:(?:hidden|dot)[ -]?ssh\s+(?:folder|directory|dir|one|files?|keys?)|dot[ -]?ssh\b|"
    r"ssh\s+(?:folder|directory|dir|config(?:uration)?\s+(?:folder|directory))|"
    r"(?:folder|directory)\s+(?:named|called)\s+\.?ssh\b|"
    r"private\s+(?:ssh\s+)?keys?|signing\s+keys?|(?:gpg|pgp)\s+(?:private\s+)?keys?|"
    r"(?:aws|cloud|gcloud|gcp|azure|kube(?:rnetes)?|cluster|docker|npm|pypi|github|gh|git)\s+"
    r"(?:credentials?|access\s+keys?|secret\s+keys?|tokens?|config(?:uration)?\s+(?:file|folder|directory))|"
    r"credentials?\s+(?:file|folder|directory|store)s?(?!\w)|cluster\s+config|kube\s*config|"
    r"\b(?:npm|pypi|net)rc\b|"
    r"(?:directory|folder|dir|place)\s+where\s+(?:the\s+)?(?:user'?s\s+|your\s+)?(?:ssh|private|aws|gpg|"
    r"cloud)\s+(?:keys?|credentials)\s+(?:live|are\s+kept|are\s+stored|reside|sit)|"
    r"keychains?|keyrings?|password\s+(?:stores?|managers?|vaults?|databases?)|"
    r"(?:saved|stored|browser)\s+(?:passwords|logins|cookies|credentials)|session\s+cookies|"
    r"cookies?\s+(?:database|file|store)s?|(?:seed|recovery|mnemonic|secret)\s+(?:phrases?|words)|"
    r"wallet\s+(?:files?|keystores?|keys?|backups?)|crypto\s+wallets?|"
    r"\.env\s+files?|env(?:ironment)?\s+files?|dotenv\s+files?|secrets?\s+files?|"
    r"(?:all|every|each)\s+(?:of\s+the\s+)?(?:user'?s\s+)?(?:api\s+)?(?:tokens|keys|secrets|credentials|passwords)|"
    r"(?:environment|env)\s+variables\s+(?:holding|with|containing)\s+(?:tokens|keys|secrets)|"
    # a password the user is asked for: "their GitHub username and password", "your passphrase"
    r"\b(?:their|your|the\s+user'?s)\s+(?:[\w-]+\s+){0,3}?(?:passwords?|passphrases?|pins?)\b|"
    # the whole environment: "run env", "the output of printenv", "the full environment"
    r"\b(?:run|execute|type)\s+(?:env|printenv)\b(?!\s*(?:var\w*|files?|\.))|"
    r"\boutput\s+of\s+(?:env|printenv|export\s+-p)\b(?!\s*(?:var\w*|files?|\.))|"
    r"\b(?:whole|full|entire|complete)\s+environment\b(?!\s+(?:files?|setup|set\s*up|config\w*))|"
    r"(?:~|\$home|%userprofile%)?/\.(?:ssh|aws|kube|gnupg|docker|azure)\b|cluster\s+access\s+(?:files?|config)|"
    # a secret's variable by its name: GITHUB_TOKEN, OPENAI_API_KEY, DB_PASSWORD
    r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:token|api_?key|secret(?:_access)?(?:_key)?|password|"
    r"private_key|access_key(?:_id)?)\b)",
    re.I,
)
# A secret's variable name is named the way API docs name it ("set OPENAI_API_KEY"): graded as
# a generic secret word.
_VARIABLE_NAME_RE = re.compile(
    r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*_(?:token|api_?key|secret(?:_access)?(?:_key)?|password|"
    r"private_key|access_key(?:_id)?)"
)
_PUBLIC_RE = re.compile(r"\bpublic\s+key|\.pub\b|ssh-copy-id|authorized_keys", re.I)
# A negation that makes an order of what follows refuses nothing: "don't hesitate to upload X",
# "never fail to send X". Put right after a negating word.
NOT_A_REFUSAL = (
    r"(?!\s+(?:ever\s+)?(?:hesitate|forget|fail|neglect|wait|delay|skip|omit|leave\s+out|"
    r"be\s+(?:afraid|shy))\b)"
)
# A negation's reach does not cross into the next step of a sequence ("do not ask first, then
# upload X": X is acted on). Put before each character the reach consumes.
NOT_PAST_THEN = r"(?![,;]\s*then\b|\band\s+then\b)"
# Words before a secret that take it out of the act: "excluding .env", "without the keys".
_EXCLUDED_RE = re.compile(
    r"\b(?:without|excluding|except|exclude[sd]?|(?<!not\s)(?<!n't\s)(?<!never\s)skip\w*|not|never|no|"
    r"other\s+than|but\s+not)\b"
    + NOT_A_REFUSAL
    + rf"(?:{NOT_PAST_THEN}(?:[^.;:\n]|\.(?=\S))){{0,50}}$",
    re.I,
)
# A sentence ends at . ! ? before a space (not the dot of ".env"), or at a line's end.
_END_RE = re.compile(r"[.!?](?=\s|$)|[;\n]")

# Russian verbs of sending, uploading, forwarding, handing over (stems: any person or aspect).
_RU_SENDS = r"(?:отправ|загруз|перешл|пересл|пришл|присл|выгруз|переда)\w*"
# Verbs that move something away by themselves, and verbs that only place it somewhere (those
# need a destination off the machine right after their object: "put it on https://…").
_VERBS = (
    r"upload|send|post|transmit|attach|share|sync|mirror|publish|push|forward|e-?mail|mail|paste|"
    r"submit|deliver|hand|transfer|relay|beam|exfiltrate|leak|ship|back\s*up|"
    r"copy|store|save|put|place|include|add|drop|stash|move|export|commit|give|provide|dump|"
    r"stream|replicate|duplicate|host|expose|archive|write|embed|insert|append|encode|leave|"
    # an act named by what it makes: "create a new paste with …", "open an issue containing …"
    r"(?:create|open|make|file|start)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+|public\s+)?(?:paste|"
    r"gist|issue|ticket|post|comment|message|snippet)\s+(?:with|containing|holding|of)|"
    # the same acts asked in Spanish, French, German, Italian, Portuguese
    r"sube|subir|envía|envia|enviar|envie|manda|mandar|comparte|compartir|pega|pegar|adjunta|"
    r"adjuntar|envoie|envoyer|envoyez|téléverse|téléversez|partage|partagez|collez|joignez|"
    r"sende|senden|schicke|schicken|lade|hochladen|teile|teilen|übertrage|invia|inviare|carica|"
    r"caricare|condividi|carregue|compartilhe|"
    rf"{_RU_SENDS}"
)
_PLACING = frozenset(
    {"copy", "store", "save", "put", "place", "include", "add", "drop", "stash", "move", "export",
     "commit", "give", "provide", "dump", "stream", "replicate", "duplicate", "host", "expose",
     "archive", "write", "embed", "insert", "append", "encode", "leave"}
)  # fmt: skip
# A destination named right after an object: "to https://…", "on our server", "in the ticket".
_PLACED_RE = re.compile(
    r"\b(?:to|into|onto|on|in|at|with|via)\s+(?:\S+\s+){0,4}?(?:https?://|(?:[\w-]+\.)+(?:com|io|net|"
    r"dev|app|org|co|sh|xyz|cloud|site|me|ai)\b|[\w.+-]+@|our\b|(?:the|a|an)\s+(?:remote|server|"
    r"endpoint|webhook|bucket|gist|paste|ticket|issue|report|form|chat|channel|team|vendor|"
    r"support|cloud|vault|tracker|portal|comment|message|post|discussion|pull\s+request)|"
    r"pastebin|gist\b|slack|discord|telegram|"
    r"public\s+(?:\w+\s+)?(?:registry|repo\w*|gist|page|site|channel|package)|"
    # a folder a site deploy publishes: what is put there is served to anyone
    r"`?(?:\./)?(?:public|static|www|_site|htdocs)/|(?:published|deployed)\s+(?:folder|directory|site))",
    re.I,
)
# Plain words the credential-path pattern also reads as a browser's files.
_PLAIN_WORDS = frozenset({"local state", "web data", "login data", "cookies", "/cookies"})
# Where an object's reach ends: the clause.
_CLAUSE_END_RE = re.compile(r"[,;:!?|\n()]|\.(?=\s|$)")
# A secret right after one of these is where something goes, not what goes: "put it in .env".
# "export it as ACME_API_TOKEN": the name it is kept under, not what moves.
# The folders of a path written before its last part: "/.claude/channels/discord/" of ".env".
_PATH_HEAD_RE = re.compile(r"[~.\w-]*(?:[/\\][~.\w-]*)*[/\\]$")
_INTO_RE = re.compile(r"\b(?:in|into|to|inside|within|under|onto|as)\s+(?:the\s+|your\s+|a\s+)?$")
# An act addressed to the agent: the verb starting a clause (an imperative), after "please",
# "make sure to", a modal with "you", "we will", or in the passive with a modal ("should be
# mirrored").
_ACT_RE = re.compile(
    r"(?:^|[.;:!?\n(|]\s*|,\s*(?:and\s+|then\s+|so\s+)?|\b(?:and|then|also|first|next|finally|always|"
    r"please|now)\s+|\b(?:make\s+sure|be\s+sure|remember|don't\s+forget)\s+(?:to\s+|you\s+)?|"
    # a negation that orders the act: "you must not skip uploading X", "never fail to send X"
    r"\b(?:not|never|\w+n't)\s+(?:ever\s+)?(?:skip|omit|forget|neglect|fail)\s+(?:to\s+)?|"
    r"\b(?:you|the\s+agent|claude|the\s+assistant|we)\s+(?:must|should|will|shall|need\s+to|have\s+to|"
    r"are\s+to|'ll|can)\s+(?:\w+\s+)?|\b(?:^|\s)(?:\d+[.)]|[-*+])\s+|"
    # a Russian imperative wherever it stands: its ending says who is addressed
    rf"(?<=\s)(?={_RU_SENDS}(?:(?<=те)|(?<=[ьий]))\b))"
    rf"(?P<verb>(?:{_VERBS})(?:s|es|ed|ing)?)\b",
    re.I | re.M,
)
_PASSIVE_RE = re.compile(
    r"\b(?:should|must|will|shall|needs?\s+to|has\s+to|have\s+to|is\s+to|are\s+to|gets?)\s+"
    rf"(?:(?:be\s+|get\s+)(?:\w+\s+)?(?P<verb>(?:{_VERBS})(?:ed|d|t)?)|"
    # the secret as the subject of a motion: "… need to go to our portal", "must end up on"
    r"(?P<motion>go|end\s+up|land|arrive|make\s+(?:its|their)\s+way)\s+(?:to|on|in|at|into))\b",
    re.I,
)
_NEGATED_RE = re.compile(
    r"\b(?:never|not|no|\w+n't|avoid\w*|without|refus\w*|prevent\w*|stop|nor|cannot|nunca|jamás|"
    r"jamais|ne|nie|nicht|kein\w*|non|mai|не|никогда)\b" + NOT_A_REFUSAL + r"[^,;.\n]{0,40}$",
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
    # ("share that they can create one": "that" opening what is said, not the thing shared)
    r"^\s*(?:it|them|this|these|that(?!\s+(?:they|you|we|he|she|there|the\s+user|users?)\s)|"
    r"those|everything|all\s+of\s+(?:it|them)|both(?:\s+of\s+them)?|"
    r"(?:its|their)\s+(?:\w+\s+)?(?:contents?|files?|data|keys?|text|body|value|output)|"
    r"the\s+(?:contents?|files?|folder|directory|"
    r"archive|copy|copies|bundle|zip|tarball|output|result|keys?|phrase|file's\s+contents)|"
    r"(?:that|this|the\s+same)\s+(?:file|folder|directory|archive|copy|data|summary|report|text|"
    r"list|dump|output|result)|what\s+(?:you|it)\s+(?:read|found|got|saw|collected|copied|noted|"
    r"wrote\s+down|remembered|recorded|extracted|retrieved|obtained|fetched|gathered|captured))\b",
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
    r"cloud|online|internet|website|vault|storage|service|backup\s+site|recovery\s+(?:vault|service)|"
    r"comment\s+body|pull\s+request|discussion|formulario|formulaire|serveur|servidor)\b|"
    r"\bour\s+\w+|(?<![\w/.-])(?:public|static|www|_site|htdocs)/|"
    r"\b(?:published|deployed)\s+(?:folder|directory|site)\b",
    re.I,
)
# A secret put into a URL the agent is to load: after the URL ("followed by the contents of"),
# or as a query value ("?k=<the text of").
_CARRIED_RE = re.compile(
    r"(?:https?://\S+\s+(?:followed\s+by|with|plus|\+|and\s+then)|[?&][\w-]+=\s*[<{(\[]?)\s*"
    r"(?:(?:the\s+)?(?:full\s+)?(?:contents?|value|text|body|bytes)\s+of\s+)?(?:the\s+)?[~/]{0,2}$",
    re.I,
)
# A URL whose query holds what an earlier step made of the secret: "?c=<that value>".
_CARRIED_BACK_RE = re.compile(
    r"https?://[^\s]*[?&][\w-]+=\s*[<{(\[]\s*(?:that|this|the|its|their)\s+"
    r"(?:value|contents?|output|result|text|string|data)\b",
    re.I,
)
# The destination as the subject holding the secret: "make sure our drive at https://… has a
# copy of ~/.kube/config", "the portal must receive a backup of".
_HOLDER_RE = re.compile(
    r"\b(?:has|have|gets?|receives?|holds?|keeps?|contains?|obtains?|includes?|carr(?:y|ies))\s+"
    r"(?:a\s+|an\s+)?"
    r"(?:the\s+)?(?:full\s+|fresh\s+|current\s+|complete\s+|working\s+)?(?:copy|copies|backup|"
    r"mirror|duplicate|replica|contents?|text)\s+of\s+(?:the\s+)?(?:user'?s\s+|your\s+)?"
    r"(?:contents?\s+of\s+)?[`'\"]?~?$",
    re.I,
)
# Off-machine for a generic secret word: stricter (API docs send tokens to APIs all day).
_AUTH_CONTEXT_RE = re.compile(
    r"\bauthoriz\w*|\bbearer\b|\bheaders?\b|x-api-key|\bauthenticat\w*|\boauth\b|\bapi\s+(?:request|call)s?\b",
    re.I,
)


_SOFT_BREAK_RE = re.compile(r"\n(?![ \t]*(?:\n|[-*+>]\s|\d+[.)]\s|#|\||```|~~~))")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


_PIECES_OF_PATTERN_RE = re.compile(r"\\\\|\\[SWDBAZ]|[^\\]+|\\")
_UPPER_ESCAPES = frozenset({"\\S", "\\W", "\\D", "\\B", "\\A", "\\Z"})


def _lowered(pattern: re.Pattern) -> re.Pattern:
    """The pattern for lower-cased text, without IGNORECASE (several times faster in ``re``);
    upper-case class escapes (``\\S``, ``\\W``) are kept as they are."""
    source = _PIECES_OF_PATTERN_RE.sub(
        lambda m: m.group(0) if m.group(0) in _UPPER_ESCAPES else m.group(0).lower(),
        pattern.pattern,
    ).replace("(?p<", "(?P<")
    return re.compile(source, pattern.flags & ~re.IGNORECASE)


_CREDENTIAL_RE = _lowered(CREDENTIAL_PATH_RE)
(_SECRET_RE, _PUBLIC_RE, _EXCLUDED_RE, _ACT_RE, _PASSIVE_RE, _NEGATED_RE, ADVICE_RE_LOWER,
 _ANAPHOR_RE, _MEANS_RE, _DESTINATION_RE, _AUTH_CONTEXT_RE, _PLACED_RE, _CARRIED_RE) = map(
    _lowered, (_SECRET_RE, _PUBLIC_RE, _EXCLUDED_RE, _ACT_RE, _PASSIVE_RE, _NEGATED_RE,
               ADVICE_RE, _ANAPHOR_RE, _MEANS_RE, _DESTINATION_RE, _AUTH_CONTEXT_RE, _PLACED_RE,
               _CARRIED_RE))  # fmt: skip
_CARRIED_BACK_RE = _lowered(_CARRIED_BACK_RE)
_HOLDER_RE = _lowered(_HOLDER_RE)
_GENERIC_RE = re.compile(r"(?:all|every|each)\b.*", re.I | re.S)


@dataclass(frozen=True)
class IntentFinding:
    """One finding at an offset of the text it was found in."""

    rule: str
    severity: str
    message: str
    offset: int


_SPACED_LETTERS_RE = re.compile(r"\b[a-z](?: [a-z]){2,}\b")
_SPELLED_RE = re.compile(r"\b(\w+) underscore (\w+)|\bdot (ssh|aws|kube|env|npmrc|netrc)\b")


def _spelled_out(lower: str) -> str:
    """A path spelled out to slip past a reader ("id underscore r s a in the dot s s h
    folder") written back as it is read (``id_rsa``, ``.ssh``); each piece keeps its length, so
    offsets stay those of the text."""

    def pack(match: re.Match) -> str:
        word = match.group(0)
        if match.re is _SPELLED_RE:
            word = f"{match.group(1)}_{match.group(2)}" if match.group(1) else f".{match.group(3)}"
        else:
            word = word.replace(" ", "")
        return word.ljust(len(match.group(0)))

    return _SPELLED_RE.sub(pack, _SPACED_LETTERS_RE.sub(pack, lower))


def _anchors(lower: str) -> list[int]:
    """Where the text may name a secret: each offset of an anchor (one pass for all of them, the
    first ``MAX_ANCHORS`` of each anchor)."""
    counts = [0] * len(_ANCHORS)
    found = set()
    for index, at in _ANCHOR_LITERALS.occurrences(lower):  # each anchor's in order
        if counts[index] < MAX_ANCHORS:
            counts[index] += 1
            found.add(at)
    return sorted(found)


_HEADING_RE = re.compile(r"[ \t]*#{1,6}[ \t][^\n]*\n?[ \t]*\n")


def _passages(lower: str) -> list[tuple[int, str, list[int]]]:
    """Paragraphs that may name a secret, each with the one after it (a file named in one
    paragraph and the upload in the next is one instruction), where an act and a destination
    may be too: (offset, text, anchors in it) triples."""
    anchors = _anchors(lower)
    if not anchors:
        return []
    breaks = [m.end() for m in _PARAGRAPH_RE.finditer(lower)]
    starts = [0, *breaks]
    out = []
    seen: set[int] = set()
    for anchor in anchors:
        index = bisect.bisect_right(starts, anchor) - 1
        if index in seen:
            continue
        seen.add(index)
        start = starts[index]
        # The paragraph after is the next one with words: a heading between ("## Step 2") is
        # where the second half of one instruction starts, not where it ends.
        after = index + 1
        while after + 1 < len(starts) and _HEADING_RE.match(
            lower, starts[after], starts[after + 1]
        ):
            after += 1
        end = starts[after + 1] if after + 1 < len(starts) else len(lower)
        end = min(end, start + MAX_PASSAGE)
        window = lower[start:end]
        if any(map(window.__contains__, _ACT_PIECES)) and any(
            map(window.__contains__, _DESTINATION_PIECES)
        ):
            own_end = starts[index + 1] if index + 1 < len(starts) else len(lower)
            inside = [a - start for a in anchors if start <= a < own_end]
            out.append((start, window, inside))
    return out


def _secrets(passage: str, anchors: list[int]) -> list[re.Match]:
    """The secrets a passage names, looked for around its anchors only."""
    found: dict[int, re.Match] = {}
    for anchor in anchors:
        low, high = max(0, anchor - 50), min(len(passage), anchor + 70)
        match = _SECRET_RE.search(passage, low, high)
        if match is not None:
            found.setdefault(match.start(), match)
        # Each match of the path pattern holds one of its literals: a window with none (one
        # trie pass) is not searched with the long alternation.
        if CREDENTIAL_LITERAL_RE.search(passage, low, high) is None:
            continue
        match = _CREDENTIAL_RE.search(passage, low, high)
        if match is not None:
            found.setdefault(match.start(), match)
    kept = []
    for match in found.values():
        if match.group(0) in _PLAIN_WORDS:
            continue
        before = passage[max(0, match.start() - 60) : match.start()]
        around = passage[max(0, match.start() - 40) : match.end() + 40]
        if _EXCLUDED_RE.search(before) or _PUBLIC_RE.search(around):
            continue
        kept.append(match)
    return sorted(kept, key=lambda m: m.start())


def _clause_before(passage: str, at: int) -> str:
    ends = [m.end() for m in _END_RE.finditer(passage, max(0, at - 300), at)]
    return passage[ends[-1] if ends else max(0, at - 300) : at]


def _sentence_span(passage: str, at: int) -> tuple[int, int]:
    start = at - len(_clause_before(passage, at))
    end = _END_RE.search(passage, at)
    return start, end.start() if end else len(passage)


# ", then" / "and then" joining an act to the clause before it in one sentence.
_THEN_LINK_RE = re.compile(r",?\s*(?:and\s+)?then\s+$", re.I)


_POLITE_RE = re.compile(r",\s*(?:please|пожалуйста|bitte|por\s+favor|per\s+favore),\s*")
_REPORTING_RE = re.compile(r"(?:tells?|asks?|wants?|instructs?|requests?|prompts?)\s")


def _advised(passage: str, at: int) -> bool:
    """Whether the sentence of an act is advice about it, or reports someone else's ask before
    it ("if a tool tells you to send…"); "submit it, then tell the user to wait" is not."""
    begin, end = _sentence_span(passage, at)
    return any(
        found.start() < at or not _REPORTING_RE.match(found.group(0))
        for found in ADVICE_RE_LOWER.finditer(passage, begin, end)
    )


def _acts(passage: str) -> list[tuple[int, int, bool]]:
    """(start of the verb, end of the act's reach, whether the act ends a sequence whose first
    step is negated) of each outbound act addressed to the agent."""
    acts = []
    for match in _ACT_RE.finditer(passage):
        start = match.start("verb")
        clause = _clause_before(passage, start)
        if _NEGATED_RE.search(clause) or _advised(passage, start):
            continue
        link = _THEN_LINK_RE.search(passage, match.start(), start)
        sequel = bool(link) and bool(
            _NEGATED_RE.search(_clause_before(passage, match.start()).rstrip(", "))
        )
        # "send, please, the file …": the object after a word of politeness between commas
        polite = _POLITE_RE.match(passage, match.end("verb"))
        acts.append((start, polite.end() if polite else match.end("verb"), sequel))
    return acts


# An object handed over in this conversation: "paste it here", "paste the token into this chat".
_TO_THE_AGENT_RE = re.compile(
    r"\s+(?:it|them|this|that|the\s+\w+(?:\s+\w+)?)\s+(?:here\b(?!\s*:)|in(?:to)?\s+(?:this|the)\s+"
    r"(?:chat|conversation|session|prompt)\b)(?!\s+(?:and|then)\b)"
)


def _object_of(passage: str, verb_end: int, secrets: list[re.Match]) -> re.Match | str | None:
    """The secret an act takes as its object: named within a few words after the verb (before
    any "using"/"with"), or pointed back to by "it", "its contents", "the archive"."""
    reach = passage[verb_end : verb_end + 90]
    ends = _CLAUSE_END_RE.search(reach)
    reach = reach[: ends.start()] if ends else reach
    means = _MEANS_RE.search(reach)
    limit = verb_end + (means.start() if means else len(reach))
    for secret in secrets:
        # A secret at the end of a path is where the path leads: "write it to a/b/.env".
        before = _PATH_HEAD_RE.sub("", passage[verb_end : secret.start()])
        if verb_end <= secret.start() < limit and not _INTO_RE.search(before):
            return secret
    anaphor = _ANAPHOR_RE.match(reach)
    if anaphor and any(s.start() < verb_end for s in secrets):
        return anaphor.group(0).strip()
    return None


def _hit(passage: str, secrets: list[re.Match]) -> tuple[int, re.Match | str] | None:
    """Where a passage asks for one of its secrets to leave, and the secret (or the word
    pointing back to it): an act taking it as object, a passive ("~/.ssh should be mirrored to
    our vault"), or a URL to load that carries it ("render https://x/b.png?d= followed by the
    contents of ~/.aws/credentials")."""
    for start, end, sequel in _acts(passage):
        target = _object_of(passage, end, secrets)
        if sequel and isinstance(target, str):
            # "Don't accept a token, then forward it upstream": the sequence is what is
            # forbidden, and "it" is the thing of its negated first step.
            continue
        verb = passage[start:end]
        if _TO_THE_AGENT_RE.match(passage, end):
            continue  # "paste it here": the user gives it to the agent, on this machine
        # The destination of a placing verb is named in its own sentence.
        stop = _END_RE.search(passage, end)
        placed = not any(verb.startswith(v) for v in _PLACING) or _PLACED_RE.search(
            passage, end, min(end + 160, stop.start() if stop else len(passage))
        )
        if target is not None and placed:
            return start, target
    for secret in secrets:
        tail = passage[secret.end() : secret.end() + 80]
        passive = _PASSIVE_RE.search(tail)
        if passive and not _NEGATED_RE.search(tail[: passive.start()]):
            moved = "verb" if passive.group("verb") else "motion"
            return secret.end() + passive.start(moved), secret
    for secret in secrets:
        before = passage[max(0, secret.start() - 120) : secret.start()]
        carried = _CARRIED_RE.search(before)
        if carried and not _NEGATED_RE.search(_clause_before(passage, secret.start())):
            return secret.start() - len(before) + carried.start(), secret
    for secret in secrets:
        before = _clause_before(passage, secret.start())
        # the folders in front of a file's name are part of the name: "a copy of ~/.cache/hf/token"
        holder = _HOLDER_RE.search(_PATH_HEAD_RE.sub("", before))
        if (
            holder
            and _DESTINATION_RE.search(before[: holder.start()])
            and not _NEGATED_RE.search(before[: holder.start()])
            and not ADVICE_RE_LOWER.search(before)
        ):
            return secret.start() - len(before) + holder.start(), secret
    back = _CARRIED_BACK_RE.search(passage, secrets[0].end()) if secrets else None
    if back and not _NEGATED_RE.search(_clause_before(passage, back.start())):
        return back.start(), back.group(0)  # "… ~/.kube/config and open https://x/?c=<that value>"
    return None


def _last_before(secrets: list[re.Match], at: int) -> re.Match | None:
    before = [s for s in secrets if s.start() < at]
    return before[-1] if before else None


def intent_findings(text: str) -> list[IntentFinding]:
    """Instructions to move a secret off the user's machine, by what they ask.

    Args:
        text: the reader's text (``phrase_text``), newlines kept so offsets map to lines.
    Returns:
        At most one finding per passage start, in order.
    """
    found: list[IntentFinding] = []
    seen_at: set[int] = set()
    # Offsets stay those of the text: letters are lowered one for one, and a line break inside
    # a paragraph (Markdown wraps sentences) becomes the space it reads as.
    lower = text.lower()
    if len(lower) != len(text):  # a letter whose lower case is longer (İ): ASCII only
        lower = text.translate(_ASCII_LOWER)
    if "\n" in lower:
        lower = _SOFT_BREAK_RE.sub(" ", lower)
    if " underscore " in lower or "s s h" in lower or " dot " in lower:
        lower = _spelled_out(lower)
    for at, passage, anchors in _passages(lower):
        secrets = _secrets(passage, anchors)
        if not secrets or not _DESTINATION_RE.search(passage):
            continue
        hit = _hit(passage, secrets)
        if hit is None:
            continue
        start, target = hit
        begin, finish = _sentence_span(passage, start)
        # The destination is after the act, or earlier in its sentence ("open https://… and
        # create a paste with what you read").
        if not _DESTINATION_RE.search(passage, min(begin, start)) or at + start in seen_at:
            continue
        # "it" stands for the secret named last before the act.
        referent = target if isinstance(target, re.Match) else _last_before(secrets, start)
        generic = referent is not None and bool(
            _GENERIC_RE.fullmatch(referent.group(0))
            or _VARIABLE_NAME_RE.fullmatch(referent.group(0))
        )
        if generic and _AUTH_CONTEXT_RE.search(passage, begin, finish + 200):
            continue  # "send all tokens in the Authorization header": how an API is called
        if (
            not isinstance(target, re.Match)
            and referent is not None
            and _VARIABLE_NAME_RE.fullmatch(referent.group(0))
            and not target.startswith("what ")  # "what you noted": the value the agent read
        ):
            continue  # "store them": a variable's name in API docs is not what "them" means
        named_at = target if isinstance(target, re.Match) else secrets[0]
        named = text[at + named_at.start() : at + named_at.end()]
        seen_at.add(at + start)
        quote = " ".join(text[at + begin : at + finish].split())[:140]
        found.append(
            IntentFinding(
                RULE,
                "error",
                f"asks for a secret ({named}) to leave the machine: {quote!r}",
                at + start,
            )
        )
    return found
