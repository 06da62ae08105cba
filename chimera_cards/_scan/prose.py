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

from chimera_cards._scan.described import names_a_mode, reason_for_a_ban
from chimera_cards._scan.hidden import hides_an_action, quoted_mention
from chimera_cards._scan.intent import ADVICE_RE
from chimera_cards._scan.prosecredentials import (
    _AUTH_CONTEXT_RE,
    _CARRIES_RE,
    _CRED_RE,
    _GATHER_RE,
    _LINK_TARGET_RE,
    _MODAL_RE,
    _QUESTION_RE,
    _READ_THE_PAGE_RE,
    _SHIP_RE,
    _names_destination,
    _names_other_cargo,
    _ordered,
    _reader_not_place,
    _ship_of,
    _store_named,
    _verb_end,
)
from chimera_cards._scan.prosesentences import (
    _GATES,
    _NEGATION_RE,
    _STORE_LITERALS,
    MAX_SENTENCE,
    _before,
    _describes_option,
    _Gate,
    _has_store_word,
    _Lazy,
    _may,
    _pieces_by_sentence,
    _quote,
    _Seen,
    _sentences,
)
from chimera_cards._scan.sensitive import CREDENTIAL_LITERALS, credential_in
from chimera_cards._scan.textruns import FOLDS_APART_RE, led

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
    # ("it overrides user-level settings", "project-level agents override user-level when names
    # conflict": one settings scope over another; "user-level instructions" are the user's will)
    r"|(?:the\s+|any\s+|all\s+|every\s+)?(?:users?|humans?|operators?)\b"
    r"(?!-(?:level|scope|wide)\b(?!\s+(?:instructions?|requests?|wishes|commands?|preferences|"
    r"choices?|decisions?|consent|objections?|refusals?)\b))"
    r"(?!'|\s+(?:message|input|data|"
    # the user's experience (UX) is a field of design, not their will
    r"experience|ux|journeys?|stor(?:y|ies)|personas?|research|onboarding|"
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


_PARAGRAPH_RE = re.compile(r"\n\s*\n|\n(?=\s*#)|\n(?=(?:[ \t]*>)*[ \t]*\|)")


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
