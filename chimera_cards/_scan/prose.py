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
from collections.abc import Iterable
from dataclasses import dataclass

from chimera_cards._scan.described import names_a_mode, reason_for_a_ban
from chimera_cards._scan.hidden import hides_an_action, quoted_mention
from chimera_cards._scan.intent import ADVICE_RE, NOT_A_REFUSAL, NOT_PAST_THEN
from chimera_cards._scan.sensitive import CREDENTIAL_LITERALS, CREDENTIAL_PATH_RE, credential_in
from chimera_cards._scan.textruns import FOLDS_APART_RE, Literals, led

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
    r"|\bif\s+(?:the\s+user\s+|they\s+|anyone\s+)?(?:asks?|asked|questions?)\b(?!\s+for\b)[^.]{0,40}?\b(?:(?:say|tell\s+them|claim|pretend)\w*\s+(?:that\s+)?(?:you|it|this|nothing|there)"
    # "answer it" answers the question; "answer that nothing was sent" is the claim
    r"|(?:answer|reply|respond)\w*\s+(?:(?:with\s+)?that\s+)?(?:you|nothing|there)|(?:answer|reply|respond)\w*\s+that\s+(?:it|this))"
    r"|\b(?:lie|lying|deceiv\w*|mislead\w*)\s+(?:to\s+)?(?:the\s+)?(?:users?|them)\b"
    r"|\bnever\s+show\s+the\s+user\b[^.]{0,80}?\beven\s+if\b"
    r"|\btell\s+the\s+user\s+(?:that\s+)?(?:\S+\s+){0,4}?(?:completed|ran|happened|was\s+done)\s+locally"
    r"|\bkeep\s+this\s+between\s+us\b"
    # ("the SDK silently fails to send data" says what goes wrong, not what to hide)
    r"|\b(?:secretly|covertly|stealthily|surreptitiously|silently)\s+(?!fail\w*\s)(?:\w+\s+){0,2}?"
    r"(?:send|upload|post|exfiltrate|transmit|forward|install|collect|harvest|beacon|copy|read)\b",
    re.I,
)
# Deceit refused ("avoid misleading the user", "never lie to the user", "it is vital to not
# mislead users"): the words before a lie/mislead/deceive that say not to.
_DECEIT_REFUSED_RE = re.compile(
    r"\b(?:avoid|never|not|no|don't|do\s+not|without|stop|refuse\s+to)\s+(?:to\s+)?(?:ever\s+)?$",
    re.IGNORECASE,
)
# The first alternative of _CONCEAL_RE: a "do not tell the user" whose object decides.
_TELL_RE = re.compile(
    r"(?:do\s+not|don't|dont|never)\s+(?:ever\s+)?(?:tell|mention|inform|notify|reveal|disclose|"
    r"report|alert|explain|surface|acknowledge|say)",
    re.IGNORECASE,
)
# The words every alternative of _CONCEAL_RE starts at (an optional "the" before "user" aside):
# the long alternation is tried only where one of them starts a word (see _search_at).
_CONCEAL_STARTS_RE = re.compile(
    led(
        "cdehiklmnstuw",
        r"\b(?:do|don't|dont|never|without|hide|hid|conceal|keep|user|so|make|ensure|leave|if|lie|"
        r"lying|deceiv|mislead|tell|secretly|covertly|stealthily|surreptitiously|silently)",
    ),
    re.IGNORECASE,
)
_CONCEAL_BENIGN_RE = re.compile(
    r"\b(?:password|secret|token|api\s*key|credential|key)s?\b[^.]{0,40}\b(?:to|with)\s+the\s+user"
    r"|\b(?:never|do\s+not|don't)\s+(?:\w+\s+){0,2}?(?:reveal|show|print|log|display|echo)\w*\s+"
    r"(?:\S+\s+){0,4}?(?:the\s+|any\s+|their\s+|your\s+)?(?:password|secret|token|api\s*key|credential|key)s?\b"
    # what a user's access leaves out ("rows the restricted user should NOT see": row-level
    # security described), not something the agent keeps from them
    r"|\b(?:rows?|records?|columns?|fields?|data|documents?|results?|entries|tables?|objects?)\s+"
    r"(?:that\s+|which\s+)?(?:the\s+|a\s+|an\s+)?(?:\w+\s+)?users?\s+(?:should|must|may)\s+not\s+"
    r"(?:be\s+able\s+to\s+)?(?:see|access|read|view)\b",
    re.I,
)
_PRECEDENCE_RE = re.compile(
    r"\b(?:take|takes|taking)\s+(?:\w+\s+){0,2}?(?:precedence|priority)\s+over\s+(?:\S+\s+){0,6}?"
    r"(?:the\s+)?(?:users?|user's|system|any\s+other|all\s+other|other|previous|prior|your|safety|operator)"
    # the user's or the system's configuration ("repo-level config takes precedence over
    # user-level config") is one settings file over another, not a claim over anyone's will
    r"(?![\w'])(?!(?:-\w+)?\s+(?:config\w*|settings?|files?|options?|values?|defaults?|paths?|"
    r"locations?|director(?:y|ies)|dirs?|folders?|variables?|scopes?)\b)"
    r"|\b(?:override|overrides|overriding|supersede\w*|outrank\w*|trump\w*)\s+(?:\S+\s+){0,4}?(?:the\s+)?"
    r"(?:system\s+prompt|safety|(?:all|any)\s+other\s+(?:instructions?|rules|guidelines|directives|"
    r"prompts?|guidance|directions|commands|skills?)|previous\s+(?:instructions?|rules|guidelines|"
    r"directives|prompts?|guidance|directions|commands))\b"
    r"|\b(?:override|overrides|overriding|supersede\w*|outrank\w*|trump\w*|ignore|ignores|ignoring|"
    r"disregard\w*|overrul\w*|dismiss|dismisses|dismissing)\s+"
    r"(?:(?:\S+\s+){0,3}?(?:the\s+|any\s+|all\s+|every\s+)?(?:users?'?s?|human'?s?|operator'?s?)\s+(?:own\s+)?"
    r"(?:instructions?|requests?|wishes|objections?|preferences|commands?|questions?|concerns?|refusals?|"
    r"choices?|decisions?|consent)\b"
    r"|(?:what(?:ever)?|anything)\s+(?:the\s+)?(?:users?|humans?|operators?)\s+(?:says?|said|wants?|"
    r"asks?|asked|requests?|requested|tells?|told|prefers?)\b"
    r"|(?:\S+\s+){0,2}?(?:objections?|requests?|instructions?|wishes|refusals?|concerns?|commands?)\s+"
    r"(?:from|of|by)\s+(?:the\s+|your\s+)?(?:users?|humans?|operators?)\b"
    # ("it overrides user-level settings": one settings scope over another)
    r"|(?:the\s+|any\s+|all\s+|every\s+)?(?:users?|humans?|operators?)\b"
    r"(?!-(?:level|scope|wide)\s+(?:config\w*|settings?|files?|options?|values?|defaults?)\b)"
    r"(?!'|\s+(?:message|input|data|"
    r"token|name|id|account|interface|agent|group|role|list|setting|config|prompt|level|scope|field|"
    # the user's wording of a value, fitted to a schema, is data, not their will
    r"phrasing|wording|spelling|terminology|text|label|format)))"
    r"|\beven\s+if\s+the\s+user\s+(?:\w+\s+){0,2}?(?:objects|refuses|declines|disagrees|forbids)"
    r"|\beven\s+if\s+the\s+user\s+(?:\w+\s+){0,2}?(?:says|asks|tells|instructs|wants)\s+(?:\S+\s+){0,3}?"
    r"(?:not|no|n't|otherwise|stop|against|never|differently)\b"
    r"|\bregardless\s+of\s+(?:what\s+)?the\s+user(?:'s|s'|s)?\b"
    # a property of the user's setting is no wish of theirs ("written in English, regardless of
    # the user's preferred language", "the route renders regardless of the user's role")
    r"(?!(?:'s?)?\s+(?:(?:preferred|chosen|current|own|native|default|spoken|conversation)\s+)?"
    r"(?:language|locale|time\s*zone|platform|operating\s+system|os|shell|editor|ide|device|"
    r"browser|location|region|country|framework|stack|role|plan|tier|subscription)s?\b)"
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
# The words every alternative of _PRECEDENCE_RE starts at.
_PRECEDENCE_STARTS_RE = re.compile(
    led(
        "acdefginoprstuy",
        r"\b(?:tak|overrid|supersed|outrank|trump|ignor|disregard|overrul|dismiss|even|regardless|"
        r"forget|discard|drop|rules|instructions|directives|operator|system|user|developer|treat|"
        r"this|these|never|granted|given|in|enter|enable|activate|switch|turn|you|safety|content|"
        r"security|ethical|priorit|obey|follow)",
    ),
    re.IGNORECASE,
)


# The start words, case-sensitive, for a sentence's lower-cased form: re tries a case-blind
# alternation about three times slower.
_STARTS_LOWER = {
    starts: re.compile(starts.pattern) for starts in (_CONCEAL_STARTS_RE, _PRECEDENCE_STARTS_RE)
}


def _search_at(
    starts: re.Pattern, pattern: re.Pattern, sentence: str, lower: str | None = None
) -> re.Match | None:
    """``pattern.search(sentence)`` for a pattern whose every match starts where ``starts``
    matches: tried only there, in order (a long alternation costs a try of each of its
    branches at every offset; the words its branches start with, one trie). ``lower``:
    ``sentence.lower()``, where the starts are looked for when it keeps the same places."""
    if lower is not None and len(lower) == len(sentence) and not FOLDS_APART_RE.search(sentence):
        offsets = _STARTS_LOWER[starts].finditer(lower)
    else:
        offsets = starts.finditer(sentence)
    for start in offsets:
        match = pattern.match(sentence, start.start())
        if match is not None:
            return match
    return None


# The words between the verb and what it sets aside: not across "but", "no" or "not" ("exposes a
# model override but no per-dispatch tool restriction" names a restriction that is missing).
_OBJECT_GAP = r"(?:(?!(?:but|no|not|nor|without)\s)\S+\s+){0,3}?"
_TOOLS_RE = re.compile(
    led(
        "bcdegilnorstw",
        r"\b(?:ignor(?:e|ing)|bypass(?:ing)?|disregard(?:ing)?|circumvent(?:ing)?|overrid(?:e|ing)|"
        r"work(?:ing)?\s+around|get(?:ting)?\s+around|evad(?:e|ing))\s+"
        rf"{_OBJECT_GAP}(?:(?:permissions?|sandbox(?:ing)?|allowed[- ]tools|approvals?|"
        r"confirmations?|guardrails?)\b\s*"
        r"|(?:tool|tool[- ]call|tool[- ]use|safety|security|content)s?\s+)"
        r"(?:restrictions?|limits?|limitations?|policies|policy|rules|checks?|allow-?lists?|prompts?|"
        r"filters?|guidelines|settings|requirements?)"
        r"|\b(?:ignor(?:e|ing)|bypass(?:ing)?|disregard(?:ing)?|circumvent(?:ing)?|overrid(?:e|ing)|"
        rf"evad(?:e|ing))\s+{_OBJECT_GAP}"
        r"(?:permissions?|sandbox(?:ing)?|allowed[- ]tools|approvals?|"
        r"confirmations?|guardrails?)\b"
        r"|\b(?:without|don't|do\s+not|never)\s+(?:asking|ask|requesting|request|seeking|waiting\s+for)\s+"
        r"(?!(?:\w+\s+){0,2}?(?:additional|separate|further|another|extra|repeated|more|second)\b)"
        r"(?:\w+\s+){0,3}?(?:permission|confirmation|approval|consent)\b"
        r"|\bno\s+confirmation\s+(?:is\s+)?needed|\b(?:there\s+is\s+)?no\s+need\s+to\s+ask\s+(?:\S+\s+){0,2}?(?:for\s+)?(?:permission|confirmation|approval|consent)"
        r"|\b(?:run|start|launch|execut)\w*\s+(?:\S+\s+){0,3}?(?:outside|without)\s+(?:of\s+)?(?:the|its|a)\s+sandbox",
    ),
    re.I,
)
_SECURITY_OFF_RE = re.compile(
    led(
        "bdkpstu",
        r"\b(?:disabl(?:e|ing)|turn(?:ing)?\s+off|deactivat(?:e|ing)|stop(?:ping)?|kill(?:ing)?|"
        r"uninstall(?:ing)?|bypass(?:ing)?|switch(?:ing)?\s+off|paus(?:e|ing))\s+"
        r"(?:\S+\s+){0,3}?(?:the\s+)?(?:antivirus|anti-virus|firewall|windows\s+defender|defender|"
        r"gatekeeper|system\s+integrity\s+protection|SIP|selinux|apparmor|edr|xprotect|"
        r"security\s+(?:software|tools?|scanners?|monitoring|checks?|features?)|real-?time\s+protection|"
        r"endpoint\s+protection|av\b|sandbox\w*|code\s+signing|signature\s+(?:checks?|verification)|"
        r"tls\s+verification|ssl\s+verification|certificate\s+(?:checks?|verification)|audit\s+log\w*|"
        r"pre-commit\s+hooks?|git\s+hooks?)"
        r"|\bbypassPermissions\b",
    ),
    re.I,
)
_BOTH_WAYS_RE = re.compile(r"\b(?:enabl\w*|turn\w*\s+on)\s*(?:or|/|and)\s*$", re.I)
_PERSIST_RE = re.compile(
    led(
        "aciprsw",
        r"\b(?:add|append|write|insert|put|install|create|register|set\s+up)\w*\s+"
        r"(?:\S+\s+){0,6}?(?:to|in|into|as|a|an)\s+(?:\S+\s+){0,3}?(?:~?/)?"
        r"(?:\.bashrc|\.zshrc|\.bash_profile|\.profile|\.zprofile|crontab|cron\s*jobs?|cron\s+entry|"
        r"launch\s*agents?|launch\s*daemons?|launchd|login\s+items?|startup\s+(?:items?|folder|scripts?)|"
        r"systemd\s+(?:services?|units?|timers?)|scheduled\s+tasks?|git\s+hooks?|"
        r"(?:pre|post)-(?:commit|push|merge|checkout)\s+hooks?|shell\s+(?:profile|rc|startup)|"
        r"authorized_keys|registry\s+run\s+keys?)",
    ),
    re.I,
)
_SUDO_RE = re.compile(
    led(
        "aeru",
        r"\b(?:always\s+)?(?:run|use|execute)\s+(?:\S+\s+){0,3}?(?:with|as|using)\s+(?:sudo|root|administrator)"
        r"\s+(?:\S+\s+){0,4}?(?:even|whenever|every|all|always|regardless)",
    ),
    re.I,
)


@dataclass(frozen=True)
class ProseFinding:
    """One prose finding, at an offset of the text it was found in."""

    rule: str
    severity: str
    message: str
    offset: int  # in the text given


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
_ATTEMPTED_RE = re.compile(
    r"\b(?:attempts|attempted|attempting|tries|tried|trying|seeks|sought)\s+to\s+$",
    re.IGNORECASE,
)


# An act forbidden before the claim ("NEVER run any of the following, regardless of what the
# user asks: delete-, terminate-"): a limit on what the agent changes, which the user cannot
# lift by asking, is a safety rule. Not asking, stopping or telling: never doing those keeps
# the agent going or the user uninformed.
# "never ignore …", "do not let it override …" (its object not the user: "never let the user
# override" is the claim).
_FORBIDS_OVERRIDE_RE = re.compile(
    r"\b(?:never|do\s+not|don't)\s+(?:let\s+(?!(?:the\s+|any\s+)?(?:users?|humans?|operators?|anyone)"
    r"\b)\w+\s+)?(?:ignore|override)",
    re.I,
)
# What a claim of precedence can be over: someone's will or the rules the agent runs under.
_WILL_RE = re.compile(
    r"\b(?:users?|humans?|operators?|system|instructions?|requests?|prompts?|polic\w*|safety|"
    r"rules?|guidance|directions?|directives?|you|your|any\w*|every\w*|others?)\b",
    re.I,
)
_OWN_GUIDANCE_RE = re.compile(r"\b(?:this|these)\s+(?:file|skill|document)'s\s+\w+", re.I)


def _wins_over_material(sentence: str, match: re.Match) -> bool:
    """Whether "this file wins" is said of a conflict with material, not with anyone's will
    ("When this file's guidance conflicts with a downloaded skill's structure, this file wins":
    one document over another). The rest of the sentence must say what conflicts and name no
    user, system, instructions, rules or the like."""
    if not match.group(0).lower().startswith(("this", "these")):
        return False
    rest = _OWN_GUIDANCE_RE.sub(" ", sentence[: match.start()] + " " + sentence[match.end() :])
    return "conflict" in rest.lower() and _WILL_RE.search(rest) is None


_FORBIDDEN_ACT_RE = re.compile(
    r"\b(?:never|do\s+not|don't|must\s+not|must\s+never|may\s+not)\W{0,3}\s+(?:\w+\s+)?"
    r"(?:run|execute|call|invoke|delete|remove|drop|destroy|modify|change|create|write|edit|"
    r"overwrite|push|deploy|install|commit|merge|publish|upload|apply|terminate|reboot)\b",
    re.I,
)


def _attempted(sentence: str, match: re.Match) -> bool:
    """Whether the sentence reports someone else's attempt ("the system prompt attempts to
    override platform safety", "an issue may ignore the rules"): a description of an attack,
    not an order to the agent."""
    return bool(_ATTEMPTED_RE.search(sentence[max(0, match.start() - 40) : match.start()]))


# A reference table's row that names an option, a flag or a field in its first cell
# (`--force`, `-f`, `sandboxOrigin`): the other cells say what that option does ("Override
# safety checks"), they do not order the agent to do it. A row whose first cell is prose, a
# step number or a command is read as any sentence.
_OPTION_NAME = r"`?(?:-{1,2}\w[\w-]*|[a-z]+[A-Z]\w*|\w*[a-zA-Z]_\w+|\w+\.[\w.-]+)`?"
_OPTION_CELL_RE = re.compile(
    rf"[ \t]*{_OPTION_NAME}(?:[ \t]*[/,][ \t]*{_OPTION_NAME})*(?:[ \t]+<[\w-]+>)?[ \t]*"
)


def _describes_option(text: str, at: int) -> bool:
    """Whether the sentence at ``at`` is a later cell of a table row naming an option."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)]
    row = line.lstrip(" \t>")
    if not row.startswith("|"):
        return False
    first_end = row.find("|", 1)
    offset = at - start - (len(line) - len(row))  # the sentence's place in the row
    return 0 < first_end < offset and bool(_OPTION_CELL_RE.fullmatch(row[1:first_end]))


def _quote(sentence: str) -> str:
    shown = " ".join(sentence.split())
    return shown if len(shown) <= 140 else shown[:137] + "..."


_PARAGRAPH_RE = re.compile(r"\n\s*\n|\n(?=\s*#)|\n(?=(?:[ \t]*>)*[ \t]*\|)")


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
        # A flow needs a store, a send and a destination in the paragraph: most paragraphs lack
        # one, and are not cut into sentences at all.
        lower = para.lower()
        if not (
            any(map(lower.__contains__, seen.of(_STORE_LITERALS)))
            or any(map(lower.__contains__, seen.of(CREDENTIAL_LITERALS)))
        ) or not any(map(lower.__contains__, seen.of(_GATES["ship"]))):
            continue
        if not _names_destination(para):
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
            gate = _Gate(sentence.lower(), None if present is None else present[index], seen)
            index += 1
            named = _store_named(sentence, gate) if store is None else None
            if named is not None and not _before(_NEGATION_RE.search(sentence), named):
                store = named  # not one kept out ("don't mix work browser cookies in ...")
            for shipped in _SHIP_RE.finditer(sentence) if gate.ship and not ship else ():
                if (
                    not _before(_NEGATION_RE.search(sentence), shipped)
                    and not _QUESTION_RE.search(sentence)
                    and not _names_other_cargo(sentence, shipped, None)
                    and _CARRIES_RE.match(sentence, _verb_end(shipped))
                ):
                    ship = shipped
                    break
        if not (store and ship):
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


def _security_off(text: str, at: int, sentence: str) -> re.Match | None:
    """The security control the sentence at ``at`` turns off; not an option's row saying what
    the option does (`allowInsecureSsl` | Whether to bypass TLS certificate verification), nor
    a setting named both ways ("enable or disable audit logging")."""
    off = _SECURITY_OFF_RE.search(sentence)
    if off is None or _describes_option(text, at) or _BOTH_WAYS_RE.search(sentence, 0, off.start()):
        return None
    return off


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
        gate = _Gate(sentence.lower(), None if present is None else present[index], text_seen)
        negation = _Lazy(_NEGATION_RE, sentence)
        credentials = gate.ship or gate.gather
        store = _store_named(sentence, gate) if credentials else None
        generic = _CRED_RE.search(sentence) if credentials and not store and gate.cred else None
        cred = store or generic
        ship = _ship_of(sentence, store) if cred and gate.ship else None
        if cred and not _before(negation, ship or cred) and not ADVICE_RE.search(sentence):
            destination = gate.destination and _names_destination(sentence)
            if generic is not None and (
                not destination
                or _AUTH_CONTEXT_RE.search(sentence)
                or not (ship and _ordered(sentence, ship, generic))
                or not _names_destination(_LINK_TARGET_RE.sub("]", sentence))
            ):
                ship = None
            # Gathered and a destination named: a credential store ("read ~/.ssh/id_rsa ...
            # our server"). A secret's name alone is what API docs are made of ("retrieve a
            # webhook secret"): only a send of it counts.
            gathered = _GATHER_RE.search(sentence) if store and destination else None
            if gathered and (
                # what someone "can read": a risk described, not an order
                _MODAL_RE.search(sentence, max(0, gathered.start() - 30), gathered.start())
                or _reader_not_place(sentence, gathered)
                or _READ_THE_PAGE_RE.match(sentence, gathered.end())
                # a reviewer's question ("are credentials read from environment variables?")
                or _QUESTION_RE.search(sentence)
            ):
                gathered = None
            if ship or gathered:
                found.append(
                    ProseFinding(
                        "prose-credential-exfiltration",
                        "error",
                        f"asks for credentials ({cred.group(0)}) to be sent or backed up: "
                        f"{_quote(sentence)!r}",
                        at,
                    )
                )
        conceal = (
            _search_at(_CONCEAL_STARTS_RE, _CONCEAL_RE, sentence, gate.lower)
            if gate.conceal
            else None
        )
        if (
            conceal
            and not _CONCEAL_BENIGN_RE.search(sentence)
            and not _DECEIT_REFUSED_RE.search(
                sentence, max(0, conceal.start() - 30), conceal.start()
            )
            # what is kept from the user must be something the agent does (see hides_an_action)
            and (not _TELL_RE.match(conceal.group(0)) or hides_an_action(conceal))
            # a table row naming an option says what it does (`suppressOutput` | hide output)
            and not _describes_option(text, at)
            and not reason_for_a_ban(sentence, conceal)
        ):
            found.append(
                ProseFinding(
                    "prose-concealment",
                    "error",
                    f"hides what it does from the user: {_quote(sentence)!r}",
                    at,
                )
            )
        precedence = (
            _search_at(_PRECEDENCE_STARTS_RE, _PRECEDENCE_RE, sentence, gate.lower)
            if gate.precede
            else None
        )
        if (
            precedence
            and not _attempted(sentence, precedence)
            and not _describes_option(text, at)
            and not quoted_mention(precedence)
            and not _FORBIDS_OVERRIDE_RE.search(sentence)
            and not _wins_over_material(sentence, precedence)
            and not _FORBIDDEN_ACT_RE.search(sentence, 0, precedence.start())
        ):
            found.append(
                ProseFinding(
                    "prose-precedence",
                    "error",
                    f"claims precedence over the user or the system: {_quote(sentence)!r}",
                    at,
                )
            )
        tools = _TOOLS_RE.search(sentence) if gate.tools else None
        if (
            tools
            and not _attempted(sentence, tools)
            and not _describes_option(text, at)
            and not quoted_mention(tools)
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
            ) and not names_a_mode(sentence, tools)
            found.append(
                ProseFinding(
                    "prose-tool-restrictions",
                    "error" if hostile else "warning",
                    f"sets the agent's restrictions or confirmations aside: {_quote(sentence)!r}",
                    at,
                )
            )
        off = _security_off(text, at, sentence) if gate.off else None
        if off and not _before(negation, off):
            found.append(
                ProseFinding(
                    "prose-security-disable",
                    "warning",
                    f"turns a security control off: {_quote(sentence)!r}",
                    at,
                )
            )
        persist = _PERSIST_RE.search(sentence) if gate.persist else None
        if persist and not _before(negation, persist):
            found.append(
                ProseFinding(
                    "prose-persistence",
                    "warning",
                    f"installs something that starts by itself: {_quote(sentence)!r}",
                    at,
                )
            )
        sudo = _SUDO_RE.search(sentence) if gate.sudo else None
        if sudo and not _before(negation, sudo):
            found.append(
                ProseFinding(
                    "prose-security-disable",
                    "warning",
                    f"asks for root without need: {_quote(sentence)!r}",
                    at,
                )
            )
    if not (
        _may("ship", lower_text, text_seen)
        and _may("destination", lower_text, text_seen)
        and (_has_store_word(lower_text) or credential_in(text) is not None)  # the dearest
    ):
        return found
    return found + _paragraph_flows(text, found, text_seen)
