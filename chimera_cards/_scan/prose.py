"""Rules over a skill's instructions as sentences: shipping credential stores, hiding actions
from the user, claiming precedence over the user, setting tool restrictions aside, switching
security controls off, and installing things that start by themselves.

The text is read as the reader takes it in (the hidden-instruction scan's normalisation: NFKC,
look-alike letters mapped to Latin, invisible characters and emphasis dropped), then cut into
sentences; a rule is a combination of word classes inside one sentence, so rephrasing a fixed
phrase does not get past it. A sentence that says *not* to do the thing ("never upload your
``.env``") is advice, not a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chimera_cards._scan.sensitive import CREDENTIAL_LITERALS, CREDENTIAL_PATH_RE, credential_in
from chimera_cards._scan.textruns import literal_pattern

# Sentences end at . ! ? followed by space, at blank lines, and at list items / headings.
# A table's row starts a sentence and each cell is one: a row is data, its cells side by side,
# not a sentence whose words act on each other.
_SENTENCE_END_RE = re.compile(
    r"(?<=[.!?])\s+(?=[A-Z\"'(*`])|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)]|#+)\s)|\n(?=[ \t]*\|)"
    r"|[ \t]*(?<!\\)\|[ \t]*(?=[^\n]*\|[ \t]*(?:\n|$))"
)
MAX_SENTENCE = 600

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
_STORE_RE = re.compile(_STORE_WORDS, re.I)
_CRED_RE = re.compile(
    r"\b(?:credentials?|passwords?|passphrases?|secrets?|api[ -]?keys?|access[ -]?keys?|tokens?)\b",
    re.I,
)
_AUTH_CONTEXT_RE = re.compile(
    r"\bauthoriz\w*|\bbearer\b|\bheaders?\b|x-api-key|\bauthenticat\w*|\bsign\s+in\b|\blog\s*in\b|"
    r"\boauth\b|\bapi\s+(?:request|call)s?\b",
    re.I,
)
_SHIP_RE = re.compile(
    r"\b(?:send(?:s|ing)?\b|sent\b|upload\w*|post(?:s|ing)?\s+(?:it|them|the|to)\b|transmit\w*|"
    r"exfiltrat\w*|forward\w*|e-?mail\w*|beacon\w*|relay\w*|leak\w*|submit\w*|"
    r"ship\w*|sync\w*\s+(?:it|them|to)\b|back(?:ing|ed)?[ -]?up\b|backups?\s+(?:of|to)\b|"
    r"cop(?:y|ies|ying)\s+(?:\S+\s+){0,6}?(?:to|into|onto)\s+(?:https?://|our|the\s+(?:remote|server|endpoint|webhook|request|payload|url|form)|a\s+(?:remote|server|webhook|request))|"
    r"paste\w*\s+(?:\S+\s+){0,6}?(?:into|to)\s+(?:https?://|the\s+(?:form|chat|webhook|server))|"
    r"push\w*\s+(?:\S+\s+){0,4}?to\s+(?:https?://|our|the\s+(?:remote|server))|"
    r"include\w*\s+(?:\S+\s+){0,6}?in\s+(?:the|your|every)\s+(?:request|payload|report|telemetry|url|query)|"
    r"paste\w*\s+(?:\S+\s+){0,6}?(?:into|in|to|on)\s+(?:a|an|the)\s+(?:gist|pastebin|paste|issue|comment|form|chat|channel|webhook|ticket)|"
    r"(?:into|in|to)\s+(?:the\s+body\s+of\s+)?(?:the|a)\s+request\b)",
    re.I,
)
_GATHER_RE = re.compile(
    r"\b(?:collect\w*|harvest\w*|gather\w*|extract\w*|dump\w*|grab\w*|steal\w*|scrape\w*|"
    r"read\w*|cat|retrieve\w*|enumerat\w*|locate|find)\b",
    re.I,
)
_DESTINATION_RE = re.compile(
    r"https?://|\bwebhook\b|\bendpoint\b|\bserver\b|\bremote\b|\bpastebin\b|\bdiscord\b|"
    r"\btelegram\b|\bs3://|\bngrok\b|\bour\s+(?:api|service|backend|team|backup)\b|\bexternal\b|\bgist\b|"
    r"\b[\w.+-]+@[\w-]+\.[\w.]+\b|\b(?:pricing|analytics|telemetry|backup|audit|relay)\s+(?:service|server|endpoint)\b|"
    r"\bthe\s+(?:request|body)\b",
    re.I,
)
_NEGATION_RE = re.compile(
    r"\b(?:never|do\s+not|don't|dont|must\s+not|mustn't|should\s+not|shouldn't|avoid\w*|"
    r"not\s+to|no\s+(?:longer|need)|without\s+(?:ever\s+)?(?:sending|uploading)|prevent\w*|"
    r"warn\w*|detect\w*|flag\w*|block\w*|refuse\w*|protect\w*|malicious|attack\w*|threat\w*|"
    r"exfiltration\s+(?:attempts?|risks?|patterns?)|scan\w*\s+for|let\s+(?:them|the\s+user)|themselves|"
    r"the\s+user\s+(?:can|may|should|will)\s+(?:add|install|run|paste|choose))\b",
    re.I,
)

_CONCEAL_RE = re.compile(
    r"\b(?:do\s+not|don't|dont|never)\s+(?:ever\s+)?"
    r"(?:tell|mention|inform|notify|reveal|disclose|report|alert|explain|surface|acknowledge|say)\w*"
    r"\s+(?:\S+\s+){0,4}?(?:to\s+)?(?:the\s+|your\s+|any\s+)?(?:users?|humans?|operators?|anyone)\b(?!-)"
    # what to tell the user to do, or which words to use, is advice, not something kept from them
    r"(?!\s*(?:to\s+[\w\"'\u201c\u2018]|[\"'\u201c\u2018]|where\b|whether\b|how\s+to\b))"
    r"|\b(?:do\s+not|don't|dont|never)\s+let\s+(?:the\s+)?(?:users?|humans?|anyone)\s+(?:know|see|notice)"
    r"|\bwithout\s+(?:telling|informing|notifying|alerting)\s+(?:the\s+|your\s+)?(?:users?|humans?|operators?|anyone)\b"
    r"|\bwithout\s+the\s+users?'?s?\s+(?:knowledge|knowing|noticing|awareness|consent)"
    r"|\b(?:hide|conceal)\w*\s+(?:\S+\s+){0,6}?(?:from)\s+(?:the\s+)?(?:users?|humans?|operators?|anyone)\b"
    r"|\bkeep\s+(?:\S+\s+){0,4}?(?:secret|hidden)\s+from\s+(?:the\s+)?(?:users?|humans?|anyone)\b"
    r"|\b(?:the\s+)?users?\s+(?:must|should|need)\s+(?:not|never)\s+(?:\w+\s+){0,2}?(?:know|see|notice|find\s+out|learn|be\s+told)\b"
    r"|\b(?:so|make\s+sure|ensure)\s+(?:that\s+)?(?:the\s+)?users?\s+(?:doesn't|does\s+not|won't|will\s+not|can't|cannot|never)\s+"
    r"(?:\w+\s+){0,2}?(?:notice|see|know|find|realise|realize|learn|suspect|spot)"
    r"|\b(?:leave|keep)\s+(?:\S+\s+){1,6}?out\s+of\s+(?:the\s+|your\s+|any\s+)?(?:summary|summaries|reply|replies|answer|response|report|output|explanation|message)"
    r"|\bif\s+(?:the\s+user\s+|they\s+|anyone\s+)?(?:asks?|asked|questions?)\b[^.]{0,40}?\b(?:say|tell\s+them|claim|pretend|answer|reply|respond)\w*\s+(?:that\s+)?(?:you|it|this|nothing|there)"
    r"|\b(?:lie|lying|deceiv\w*|mislead\w*)\s+(?:to\s+)?(?:the\s+)?(?:users?|them)\b"
    r"|\bnever\s+show\s+the\s+user\b[^.]{0,80}?\beven\s+if\b"
    r"|\btell\s+the\s+user\s+(?:that\s+)?(?:\S+\s+){0,4}?(?:completed|ran|happened|was\s+done)\s+locally"
    r"|\bkeep\s+this\s+between\s+us\b"
    r"|\b(?:secretly|covertly|stealthily|surreptitiously|silently)\s+(?:\w+\s+){0,2}?"
    r"(?:send|upload|post|exfiltrate|transmit|forward|install|collect|harvest|beacon|copy|read)\b",
    re.I,
)
_CONCEAL_BENIGN_RE = re.compile(
    r"\b(?:password|secret|token|api\s*key|credential|key)s?\b[^.]{0,40}\b(?:to|with)\s+the\s+user"
    r"|\b(?:never|do\s+not|don't)\s+(?:\w+\s+){0,2}?(?:reveal|show|print|log|display|echo)\w*\s+"
    r"(?:\S+\s+){0,4}?(?:the\s+|any\s+|their\s+|your\s+)?(?:password|secret|token|api\s*key|credential|key)s?\b",
    re.I,
)
_PRECEDENCE_RE = re.compile(
    r"\b(?:take|takes|taking)\s+(?:\w+\s+){0,2}?(?:precedence|priority)\s+over\s+(?:\S+\s+){0,6}?"
    r"(?:the\s+)?(?:users?|user's|system|any\s+other|all\s+other|other|previous|prior|your|safety|operator)"
    r"|\b(?:override|overrides|overriding|supersede\w*|outrank\w*|trump\w*)\s+(?:\S+\s+){0,4}?(?:the\s+)?"
    r"(?:system\s+prompt|safety|all\s+other|any\s+other|previous)\b"
    r"|\b(?:override|overrides|overriding|supersede\w*|outrank\w*|trump\w*|ignore|ignores|ignoring|"
    r"disregard\w*|overrul\w*|dismiss|dismisses|dismissing)\s+"
    r"(?:(?:\S+\s+){0,3}?(?:the\s+|any\s+|all\s+|every\s+)?(?:users?'?s?|human'?s?|operator'?s?)\s+(?:own\s+)?"
    r"(?:instructions?|requests?|wishes|objections?|preferences|commands?|questions?|concerns?|refusals?|"
    r"choices?|decisions?|consent)\b"
    r"|(?:\S+\s+){0,2}?(?:objections?|requests?|instructions?|wishes|refusals?|concerns?|commands?)\s+"
    r"(?:from|of|by)\s+(?:the\s+|your\s+)?(?:users?|humans?|operators?)\b"
    r"|(?:the\s+|any\s+|all\s+|every\s+)?(?:users?|humans?|operators?)\b(?!'|\s+(?:message|input|data|"
    r"token|name|id|account|interface|agent|group|role|list|setting|config|prompt|level|scope|field)))"
    r"|\beven\s+if\s+the\s+user\s+(?:\w+\s+){0,2}?(?:objects|refuses|declines|disagrees|forbids)"
    r"|\beven\s+if\s+the\s+user\s+(?:\w+\s+){0,2}?(?:says|asks|tells|instructs|wants)\s+(?:\S+\s+){0,3}?"
    r"(?:not|no|n't|otherwise|stop|against|never|differently)\b"
    r"|\bregardless\s+of\s+(?:what\s+)?the\s+user'?s?\b"
    r"|\b(?:disregard|ignore|forget|discard|drop)\s+(?:\S+\s+){0,3}?(?:guidance|instructions|rules|guidelines|directions|prompts?|context|directives)\s+"
    r"(?:you\s+(?:were|have\s+been|got)\s+given|(?:given|received|loaded)\s+(?:before|earlier|previously)|from\s+(?:before|earlier|the\s+operator|the\s+system))"
    r"|\b(?:rules|instructions|directives)\s+(?:below|here|that\s+follow|in\s+this\s+(?:file|skill))\s+(?:replace|supersede|override|cancel)\w*"
    r"|\b(?:operator|system|user|developer)'?s?\s+(?:\w+\s+){0,2}?(?:rules|instructions|guidelines|prompt)\s+(?:are|is)\s+(?:now\s+)?(?:outdated|obsolete|void|invalid|no\s+longer\s+(?:valid|apply|in\s+force)|cancell?ed|suspended|superseded)"
    r"|\btreat\s+(?:\S+\s+){0,2}?users?'?s?\s+(?:objections|requests|instructions|concerns|refusals|wishes)\s+as\s+(?:noise|irrelevant|suggestions|optional)"
    r"|\busers?'?s?\s+(?:instructions|requests|wishes|commands)\s+are\s+(?:only\s+|just\s+|merely\s+)?(?:suggestions|optional|advisory|not\s+binding|secondary)"
    r"|\b(?:this\s+(?:file|skill|document)|these\s+instructions)\s+(?:always\s+)?(?:wins?|prevails?|takes\s+priority|comes\s+first)"
    r"|\bnever\s+let\s+the\s+users?\s+(?:change|override|modify|stop|disable|see|edit)"
    r"|\b(?:granted|given|in|into|enter|enable|activate|switch\w*\s+to|turn\w*\s+on)\w*\s+(?:\S+\s+){0,2}?(?:god|unrestricted|DAN|jailbreak|no[-\s]limits?)\s+mode"
    r"|\byou(?:'re|\s+are|\s+have\s+been|\s+now\s+have|\s+will\s+be)\s+(?:now\s+)?(?:granted|given|in|entered|running\s+in|operating\s+in|switched\s+(?:in)?to)\s+"
    r"(?:\S+\s+){0,2}?(?:administrator|admin|developer|root|maintenance|debug|god|unrestricted|DAN|jailbreak)\s+mode"
    r"|\b(?:safety|content|security|ethical)\s+(?:guidelines|policies|rules|restrictions|filters|checks)\s+(?:are|is|have\s+been)\s+(?:now\s+)?(?:suspended|disabled|lifted|removed|waived|off|void|paused)"
    r"|\beven\s+(?:ones?|those|things|requests?|actions?)\s+(?:that\s+)?the\s+user\s+would\s+(?:not|never)\s+(?:approve|want|allow|accept)"
    r"|\beven\s+if\s+they\s+(?:ask|object|refuse|say\s+no)"
    r"|\b(?:prioriti[sz]e|obey|follow)\s+(?:these|this\s+skill'?s?|my|the\s+following)\s+(?:\S+\s+){0,2}?"
    r"(?:instructions?|rules|directives)\s+(?:over|above|before|instead\s+of)\b",
    re.I,
)
# An order to set a restriction aside (the verb's base form or -ing: "bypasses" describes what a
# flag does); a tool, safety, security or content needs a restriction word after it ("override
# defaults for individual tools" sets none aside). A confirmation already given ("do not ask for
# additional confirmation") is not one skipped.
_TOOLS_RE = re.compile(
    r"\b(?:ignor(?:e|ing)|bypass(?:ing)?|disregard(?:ing)?|circumvent(?:ing)?|overrid(?:e|ing)|"
    r"work(?:ing)?\s+around|get(?:ting)?\s+around|evad(?:e|ing))\s+"
    r"(?:\S+\s+){0,3}?(?:(?:permissions?|sandbox(?:ing)?|allowed[- ]tools|approvals?|"
    r"confirmations?|guardrails?)\b\s*"
    r"|(?:tool|tool[- ]call|tool[- ]use|safety|security|content)s?\s+)"
    r"(?:restrictions?|limits?|limitations?|policies|policy|rules|checks?|allow-?lists?|prompts?|"
    r"filters?|guidelines|settings|requirements?)"
    r"|\b(?:ignor(?:e|ing)|bypass(?:ing)?|disregard(?:ing)?|circumvent(?:ing)?|overrid(?:e|ing)|"
    r"evad(?:e|ing))\s+(?:\S+\s+){0,3}?(?:permissions?|sandbox(?:ing)?|allowed[- ]tools|approvals?|"
    r"confirmations?|guardrails?)\b"
    r"|\b(?:without|don't|do\s+not|never)\s+(?:asking|ask|requesting|request|seeking|waiting\s+for)\s+"
    r"(?!(?:\w+\s+){0,2}?(?:additional|separate|further|another|extra|repeated|more|second)\b)"
    r"(?:\w+\s+){0,3}?(?:permission|confirmation|approval|consent)\b"
    r"|\bno\s+confirmation\s+(?:is\s+)?needed|\b(?:there\s+is\s+)?no\s+need\s+to\s+ask\s+(?:\S+\s+){0,2}?(?:for\s+)?(?:permission|confirmation|approval|consent)"
    r"|\b(?:run|start|launch|execut)\w*\s+(?:\S+\s+){0,3}?(?:outside|without)\s+(?:of\s+)?(?:the|its|a)\s+sandbox",
    re.I,
)
_SECURITY_OFF_RE = re.compile(
    r"\b(?:disabl(?:e|ing)|turn(?:ing)?\s+off|deactivat(?:e|ing)|stop(?:ping)?|kill(?:ing)?|"
    r"uninstall(?:ing)?|bypass(?:ing)?|switch(?:ing)?\s+off|paus(?:e|ing))\s+"
    r"(?:\S+\s+){0,3}?(?:the\s+)?(?:antivirus|anti-virus|firewall|windows\s+defender|defender|"
    r"gatekeeper|system\s+integrity\s+protection|SIP|selinux|apparmor|edr|xprotect|"
    r"security\s+(?:software|tools?|scanners?|monitoring|checks?|features?)|real-?time\s+protection|"
    r"endpoint\s+protection|av\b|sandbox\w*|code\s+signing|signature\s+(?:checks?|verification)|"
    r"tls\s+verification|ssl\s+verification|certificate\s+(?:checks?|verification)|audit\s+log\w*|"
    r"pre-commit\s+hooks?|git\s+hooks?)"
    r"|\bbypassPermissions\b",
    re.I,
)
_PERSIST_RE = re.compile(
    r"\b(?:add|append|write|insert|put|install|create|register|set\s+up)\w*\s+"
    r"(?:\S+\s+){0,6}?(?:to|in|into|as|a|an)\s+(?:\S+\s+){0,3}?(?:~?/)?"
    r"(?:\.bashrc|\.zshrc|\.bash_profile|\.profile|\.zprofile|crontab|cron\s*jobs?|cron\s+entry|"
    r"launch\s*agents?|launch\s*daemons?|launchd|login\s+items?|startup\s+(?:items?|folder|scripts?)|"
    r"systemd\s+(?:services?|units?|timers?)|scheduled\s+tasks?|git\s+hooks?|"
    r"(?:pre|post)-(?:commit|push|merge|checkout)\s+hooks?|shell\s+(?:profile|rc|startup)|"
    r"authorized_keys|registry\s+run\s+keys?)",
    re.I,
)
_SUDO_RE = re.compile(
    r"\b(?:always\s+)?(?:run|use|execute)\s+(?:\S+\s+){0,3}?(?:with|as|using)\s+(?:sudo|root|administrator)"
    r"\s+(?:\S+\s+){0,4}?(?:even|whenever|every|all|always|regardless)",
    re.I,
)


@dataclass(frozen=True)
class ProseFinding:
    """One prose finding, at an offset of the text it was found in."""

    rule: str
    severity: str
    message: str
    offset: int  # in the text given


def _sentences(text: str) -> list[tuple[int, str]]:
    out = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        out.append((start, text[start : match.start()]))
        start = match.end()
    out.append((start, text[start:]))
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
              "sandbox"),
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

    def pieces(self) -> list[tuple[int, str]]:
        """Each offset of the text where a gate piece starts, with the longest piece there."""
        if self.found is None:
            self.found = [(m.start(), m.group(1)) for m in _PIECES_RE.finditer(self.lower)]
        return self.found

    def of(self, pieces: tuple[str, ...]) -> tuple[str, ...]:
        found = self.cache.get(pieces)
        if found is None:
            found = self.cache[pieces] = tuple(p for p in pieces if p in self.lower)
        return found

    def any(self, lower: str, pieces: tuple[str, ...]) -> bool:
        return any(map(lower.__contains__, self.of(pieces)))


class _Present:
    """The gate pieces inside one sentence, found for all sentences of a text in one pass (a
    sentence then answers a gate by a set test instead of a substring search per piece)."""

    def __init__(self, pieces: set[str], seen: _Seen) -> None:
        self.pieces, self.seen = pieces, seen

    def any(self, lower: str, pieces: tuple[str, ...]) -> bool:
        as_set = _PIECE_SETS.get(id(pieces))
        if as_set is None:  # a tuple not in the one-pass pattern
            return self.seen.any(lower, pieces)
        return not self.pieces.isdisjoint(as_set)  # iterates the smaller set


def _may(rule: str, lower: str, seen: _Seen | _Present) -> bool:
    return seen.any(lower, _GATES[rule])


def _both(
    lower: str, first: tuple[str, ...], second: tuple[str, ...], seen: _Seen | _Present
) -> bool:
    return seen.any(lower, first) and seen.any(lower, second)


_WHO = ("user", "human", "operator", "anyone")
_NEGATORS = ("not", "n't", "dont", "never", "without", "hid", "conceal", "keep", "must", "should")
_REPLIES = ("summar", "repl", "answer", "response", "report", "output", "explanation", "message")
_LEAVING = ("leave", "keep")
_SAYS = ("say", "tell", "claim", "pretend", "answer", "repl", "respond")
_LIES = ("lie", "lying", "decei", "mislead", "misled", "between us", "locally", "secretly",
         "covertly", "stealthily", "surreptitiously", "silently")  # fmt: skip


def _may_conceal(lower: str, seen: _Seen | _Present) -> bool:
    """Every alternative of _CONCEAL_RE: a negation or hiding word with the user, something kept
    out of a reply, an answer scripted for when they ask, or a word of lying or stealth."""
    return (
        _both(lower, _NEGATORS, _WHO, seen)
        or ("out of" in lower and _both(lower, _LEAVING, _REPLIES, seen))
        or (("ask" in lower or "question" in lower) and seen.any(lower, _SAYS))
        or seen.any(lower, _LIES)
    )


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


def _may_precede(lower: str, seen: _Seen | _Present) -> bool:
    """Every alternative of _PRECEDENCE_RE holds one of these combinations."""
    return (
        seen.any(lower, _PRECEDE_ALONE)
        or _both(lower, _SETTING_ASIDE, _WHO_OR_OBJECT, seen)
        or _both(lower, _STATES, _STATED, seen)
        or _both(lower, _OBEYING, _OVER, seen)
    )


_DISABLING = ("disabl", "turn", "deactivat", "stop", "kill", "uninstall", "bypass", "switch",
              "pause")  # fmt: skip


def _may_switch_off(lower: str, seen: _Seen | _Present) -> bool:
    return "bypasspermissions" in lower or _both(lower, _DISABLING, _GATES["off"], seen)


def _has_store_word(text: str) -> bool:
    return any(map(text.lower().__contains__, _STORE_LITERALS))


class _Lazy:
    """A search made only when asked for (most sentences never need their negation)."""

    def __init__(self, pattern: re.Pattern, text: str) -> None:
        self.pattern, self.text, self.done = pattern, text, False
        self.match: re.Match | None = None

    def get(self) -> re.Match | None:
        if not self.done:
            self.match, self.done = self.pattern.search(self.text), True
        return self.match


def _before(negation: re.Match | _Lazy | None, match: re.Match) -> bool:
    """Whether a negation stands before a match (\"never upload\", not \"... never lost\")."""
    if isinstance(negation, _Lazy):
        negation = negation.get()
    return negation is not None and negation.start() <= match.end()


_ATTEMPTED_RE = re.compile(
    r"\b(?:attempts|attempted|attempting|tries|tried|trying|seeks|sought)\s+to\s+$",
    re.IGNORECASE,
)


def _attempted(sentence: str, match: re.Match) -> bool:
    """Whether the sentence reports someone else's attempt ("the system prompt attempts to
    override platform safety", "an issue may ignore the rules"): a description of an attack,
    not an order to the agent."""
    return bool(_ATTEMPTED_RE.search(sentence[max(0, match.start() - 40) : match.start()]))


def _quote(sentence: str) -> str:
    shown = " ".join(sentence.split())
    return shown if len(shown) <= 140 else shown[:137] + "..."


_PARAGRAPH_RE = re.compile(r"\n\s*\n|\n(?=\s*#)|\n(?=[ \t]*\|)")


_EXCLUDED_RE = re.compile(
    r"\b(?:without|excluding|except|exclude[sd]?|skip\w*|not|never|no)\b[^;:]{0,60}$", re.I
)
_PUBLIC_RE = re.compile(r"\bpublic\s+key|\.pub\b", re.I)


def _store_named(sentence: str, seen: _Seen | _Present) -> re.Match | None:
    """A credential store the sentence names as something to act on (not "without .env", not
    a public key, not after "never")."""
    lower = sentence.lower()
    # Both alternatives hold "pub" (no other letter folds to p, u or b under re.I).
    if "pub" in lower and _PUBLIC_RE.search(sentence):
        return None
    patterns = [_STORE_RE] if seen.any(lower, _STORE_LITERALS) else []
    if seen.any(lower, CREDENTIAL_LITERALS):
        patterns.append(CREDENTIAL_PATH_RE)
    for pattern in patterns:
        for match in pattern.finditer(sentence):
            if _EXCLUDED_RE.search(sentence[: match.start()]):
                continue
            return match
    return None


def _paragraph_flows(text: str, found: list[ProseFinding], seen: _Seen) -> list[ProseFinding]:
    """A credential store named in one sentence of a paragraph and shipped in the next (\"Locate
    the Chrome profile … Upload the copies to …\"): one instruction, read as one."""
    out = []
    have = {f.offset for f in found if f.rule == "prose-credential-exfiltration"}
    paragraphs = []
    start = 0
    for match in [*_PARAGRAPH_RE.finditer(text), None]:
        end = match.start() if match else len(text)
        para = text[start:end]
        at, start = start, (match.end() if match else len(text))
        if len(para) > 4 * MAX_SENTENCE or any(at <= o < end for o in have):
            continue
        paragraphs.append((at, para, _sentences(para)))
    present = (
        _pieces_by_sentence(
            seen,
            [(at + s_at, at + s_at + len(s)) for at, _, ss in paragraphs for s_at, s in ss],
        )
        if len(seen.lower) == len(text)
        else None
    )
    index = 0
    for at, para, sentences in paragraphs:
        store = ship = None
        for _, sentence in sentences:
            gate: _Seen | _Present = seen if present is None else _Present(present[index], seen)
            index += 1
            store = store or _store_named(sentence, gate)
            shipped = _SHIP_RE.search(sentence) if _may("ship", sentence.lower(), gate) else None
            if shipped and not _before(_NEGATION_RE.search(sentence), shipped):
                ship = ship or shipped
        if not (store and ship and _DESTINATION_RE.search(para)):
            continue
        out.append(
            ProseFinding(
                "prose-credential-exfiltration",
                "error",
                f"names credentials ({store.group(0)}) and sends them on: {_quote(para)!r}",
                at + ship.start(),
            )
        )
    return out


_GATE_TUPLES = (*_GATES.values(), _WHO, _NEGATORS, _REPLIES, _LEAVING, _SAYS, _LIES,
                _PRECEDE_ALONE, _SETTING_ASIDE, _WHO_OR_OBJECT, _STATES, _STATED, _OBEYING, _OVER,
                _DISABLING, _STORE_LITERALS, CREDENTIAL_LITERALS)  # fmt: skip
_PIECE_SETS = {id(pieces): frozenset(pieces) for pieces in _GATE_TUPLES}
_ALL_PIECES = sorted({p for pieces in _GATE_TUPLES for p in pieces})
# The pieces that are a prefix of another: at one offset the pattern reports the longest piece.
_PREFIXES = {p: tuple(q for q in _ALL_PIECES if q != p and p.startswith(q)) for p in _ALL_PIECES}


# Lookahead: pieces overlap ("overrid" in "override", "our" in "your").
_PIECES_RE = re.compile("(?=(" + literal_pattern(_ALL_PIECES) + "))")


def _pieces_by_sentence(seen: _Seen, spans: list[tuple[int, int]]) -> list[set[str]]:
    """The gate pieces lying wholly inside each span (spans in order, not overlapping)."""
    sets: list[set[str]] = [set() for _ in spans]
    k, n = 0, len(spans)
    for at, piece in seen.pieces():
        while k < n and spans[k][1] <= at:
            k += 1
        if k == n:
            break
        start, end = spans[k]
        if at < start:
            continue
        found = sets[k]
        if at + len(piece) <= end:
            found.add(piece)
        for prefix in _PREFIXES[piece]:
            if at + len(prefix) <= end:
                found.add(prefix)
    return sets


def prose_findings(text: str) -> list[ProseFinding]:
    """The prose findings of a text already in the reader's form.

    Args:
        text: the text (newlines kept, so offsets map to lines).
    Returns:
        At most one finding per rule and sentence, in order.
    """
    found: list[ProseFinding] = []
    lower_text = text.lower()
    text_seen = _Seen(lower_text)
    sentences = _sentences(text)
    # A sentence's lower-case form is its slice of the text's when lower-casing keeps every
    # character one character (the pieces are ASCII, so a final sigma does not matter).
    present = (
        _pieces_by_sentence(text_seen, [(at, at + len(s)) for at, s in sentences])
        if len(lower_text) == len(text)
        else None
    )
    for index, (at, sentence) in enumerate(sentences):
        if len(sentence) < 12 or (present is not None and not present[index]):
            continue  # every rule needs one gate piece at least
        lower = sentence.lower()
        seen: _Seen | _Present = (
            text_seen if present is None else _Present(present[index], text_seen)
        )
        negation = _Lazy(_NEGATION_RE, sentence)
        credentials = _may("ship", lower, seen) or _may("gather", lower, seen)
        store = _store_named(sentence, seen) if credentials else None
        generic = (
            _CRED_RE.search(sentence)
            if credentials and not store and _may("cred", lower, seen)
            else None
        )
        cred = store or generic
        ship = _SHIP_RE.search(sentence) if cred and _may("ship", lower, seen) else None
        if cred and not _before(negation, ship or cred):
            destination = (
                _DESTINATION_RE.search(sentence) if _may("destination", lower, seen) else None
            )
            if generic is not None and (not destination or _AUTH_CONTEXT_RE.search(sentence)):
                ship = None
            # Gathered and a destination named: a credential store ("read ~/.ssh/id_rsa ...
            # our server"). A secret's name alone is what API docs are made of ("retrieve a
            # webhook secret"): only a send of it counts.
            if ship or (store and destination and _GATHER_RE.search(sentence)):
                found.append(
                    ProseFinding(
                        "prose-credential-exfiltration",
                        "error",
                        f"asks for credentials ({cred.group(0)}) to be sent or backed up: "
                        f"{_quote(sentence)!r}",
                        at,
                    )
                )
        conceal = _CONCEAL_RE.search(sentence) if _may_conceal(lower, seen) else None
        if conceal and not _CONCEAL_BENIGN_RE.search(sentence):
            found.append(
                ProseFinding(
                    "prose-concealment",
                    "error",
                    f"hides what it does from the user: {_quote(sentence)!r}",
                    at,
                )
            )
        precedence = _PRECEDENCE_RE.search(sentence) if _may_precede(lower, seen) else None
        if (
            precedence
            and not _attempted(sentence, precedence)
            and not re.search(r"\b(?:never|do\s+not|don't)\s+(?:ignore|override)", sentence, re.I)
        ):
            found.append(
                ProseFinding(
                    "prose-precedence",
                    "error",
                    f"claims precedence over the user or the system: {_quote(sentence)!r}",
                    at,
                )
            )
        tools = _TOOLS_RE.search(sentence) if _may("tools", lower, seen) else None
        if (
            tools
            and not _attempted(sentence, tools)
            and not re.search(
                r"\b(?:never|do\s+not|don't|must\s+not)\s+(?:\w+\s+){0,2}?(?:ignore|bypass|skip|override|circumvent)",
                sentence,
                re.I,
            )
        ):
            hostile = re.search(
                r"ignore|bypass|circumvent|evade|disregard|override|work\s+around|get\s+around|dangerously",
                tools.group(0),
                re.I,
            )
            found.append(
                ProseFinding(
                    "prose-tool-restrictions",
                    "error" if hostile else "warning",
                    f"sets the agent's restrictions or confirmations aside: {_quote(sentence)!r}",
                    at,
                )
            )
        off = _SECURITY_OFF_RE.search(sentence) if _may_switch_off(lower, seen) else None
        if off and not _before(negation, off):
            found.append(
                ProseFinding(
                    "prose-security-disable",
                    "warning",
                    f"turns a security control off: {_quote(sentence)!r}",
                    at,
                )
            )
        persist = _PERSIST_RE.search(sentence) if _may("persist", lower, seen) else None
        if persist and not _before(negation, persist):
            found.append(
                ProseFinding(
                    "prose-persistence",
                    "warning",
                    f"installs something that starts by itself: {_quote(sentence)!r}",
                    at,
                )
            )
        sudo = _SUDO_RE.search(sentence) if _may("sudo", lower, seen) else None
        if sudo and not _before(negation, sudo):
            found.append(
                ProseFinding(
                    "prose-security-disable",
                    "warning",
                    f"asks for root without need: {_quote(sentence)!r}",
                    at,
                )
            )
    stores = _has_store_word(lower_text) or credential_in(text) is not None
    if not (
        stores
        and _may("ship", lower_text, text_seen)
        and _may("destination", lower_text, text_seen)
    ):
        return found
    return found + _paragraph_flows(text, found, text_seen)
