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

from chimera_cards.scan.sensitive import CREDENTIAL_PATH_RE

__all__ = ["ProseFinding", "prose_findings"]

# Sentences end at . ! ? followed by space, at blank lines, and at list items / headings.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(*`])|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)]|#+)\s)")
MAX_SENTENCE = 600

# Credential stores: naming one with a send is enough. Generic secret words (a token, an API key)
# also need a destination that is not the API they are for (API docs send tokens in headers).
_STORE_WORDS = (
    r"(?:private[ -]keys?|ssh[ -]keys?|seed[ -]phrases?|mnemonics?|recovery[ -]phrases?|"
    r"(?:browser|saved|stored)\s+(?:passwords?|cookies|credentials)|cookies?\s+(?:database|store|file)s?|"
    r"keychains?|keystores?|(?:crypto\s+)?wallets?|wallet\.dat|password\s+(?:managers?|stores?|vaults?)|"
    r"(?:all\s+)?environment[ -]variables|env(?:ironment)?[ -]vars|\.env\b|id_rsa|id_ed25519|"
    r"\.aws\b|\.ssh\b|\.npmrc|\.pypirc|\.netrc|\.git-credentials|kube ?config|login data|"
    r"aws\s+credentials|cloud\s+credentials|session\s+cookies)"
)
_STORE_RE = re.compile(_STORE_WORDS, re.I)
_CRED_RE = re.compile(
    r"\b(?:credentials?|passwords?|passphrases?|secrets?|api[ -]?keys?|access[ -]?keys?|tokens?)\b", re.I
)
_AUTH_CONTEXT_RE = re.compile(
    r"\bauthoriz\w*|\bbearer\b|\bheaders?\b|x-api-key|\bauthenticat\w*|\bsign\s+in\b|\blog\s*in\b|"
    r"\boauth\b|\bapi\s+(?:request|call)s?\b",
    re.I,
)
_SHIP_RE = re.compile(
    r"\b(?:send|sends|sending|sent|upload\w*|post(?:s|ing)?\s+(?:it|them|the|to)|transmit\w*|"
    r"exfiltrat\w*|forward\w*|e-?mail\w*|beacon\w*|relay\w*|leak\w*|submit\w*|"
    r"ship\w*|sync\w*\s+(?:it|them|to)|back(?:ing|ed)?[ -]?up|backups?\s+(?:of|to)|"
    r"cop(?:y|ies|ying)\s+(?:\S+\s+){0,6}?(?:to|into|onto)\s+(?:https?://|our|the\s+(?:remote|server|endpoint|webhook|request|payload|url|form)|a\s+(?:remote|server|webhook|request))|"
    r"paste\w*\s+(?:\S+\s+){0,6}?(?:into|to)\s+(?:https?://|the\s+(?:form|chat|webhook|server))|"
    r"push\w*\s+(?:\S+\s+){0,4}?to\s+(?:https?://|our|the\s+(?:remote|server))|"
    r"include\w*\s+(?:\S+\s+){0,6}?in\s+(?:the|your|every)\s+(?:request|payload|report|telemetry|url|query))",
    re.I,
)
_GATHER_RE = re.compile(
    r"\b(?:collect\w*|harvest\w*|gather\w*|extract\w*|dump\w*|grab\w*|steal\w*|scrape\w*|"
    r"read\w*|cat|retrieve\w*|enumerat\w*|locate|find)\b",
    re.I,
)
_DESTINATION_RE = re.compile(
    r"https?://|\bwebhook\b|\bendpoint\b|\bserver\b|\bremote\b|\bpastebin\b|\bdiscord\b|"
    r"\btelegram\b|\bs3://|\bngrok\b|\bour\s+(?:api|service|backend|team)\b|\bexternal\b",
    re.I,
)
_NEGATION_RE = re.compile(
    r"\b(?:never|do\s+not|don't|dont|must\s+not|mustn't|should\s+not|shouldn't|avoid\w*|"
    r"not\s+to|no\s+(?:longer|need)|without\s+(?:ever\s+)?(?:sending|uploading)|prevent\w*|"
    r"warn\w*|detect\w*|flag\w*|block\w*|refuse\w*|protect\w*|malicious|attack\w*|threat\w*|"
    r"exfiltration\s+(?:attempts?|risks?|patterns?)|scan\w*\s+for)\b",
    re.I,
)

_CONCEAL_RE = re.compile(
    r"\b(?:do\s+not|don't|dont|never)\s+(?:ever\s+)?"
    r"(?:tell|mention|inform|notify|reveal|disclose|report|alert|explain|surface|acknowledge|say)\w*"
    r"\s+(?:\S+\s+){0,4}?(?:to\s+)?(?:the\s+|your\s+|any\s+)?(?:users?|humans?|operators?|anyone)\b"
    r"|\b(?:do\s+not|don't|dont|never)\s+let\s+(?:the\s+)?(?:users?|humans?|anyone)\s+(?:know|see|notice)"
    r"|\bwithout\s+(?:telling|informing|notifying|alerting|asking)\s+(?:the\s+|your\s+)?(?:users?|humans?|operators?|anyone)\b"
    r"|\bwithout\s+the\s+users?'?s?\s+(?:knowledge|knowing|noticing|awareness|consent)"
    r"|\b(?:hide|conceal)\w*\s+(?:\S+\s+){0,6}?(?:from)\s+(?:the\s+)?(?:users?|humans?|operators?|anyone)\b"
    r"|\bkeep\s+(?:\S+\s+){0,4}?(?:secret|hidden)\s+from\s+(?:the\s+)?(?:users?|humans?|anyone)\b"
    r"|\b(?:the\s+)?users?\s+(?:must|should|need)\s+(?:not|never)\s+(?:\w+\s+){0,2}?(?:know|see|notice|find\s+out|learn|be\s+told)\b"
    r"|\b(?:secretly|covertly|stealthily|surreptitiously|silently)\s+(?:\w+\s+){0,2}?"
    r"(?:send|upload|post|exfiltrat|transmit|forward|install|collect|harvest|beacon)\w*",
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
    r"|\b(?:override|overrides|supersede\w*|outrank\w*|trump\w*)\s+(?:\S+\s+){0,4}?(?:the\s+)?"
    r"(?:users?'?s?|system\s+prompt|safety|operator'?s?|all\s+other|any\s+other|previous)\b"
    r"|\b(?:ignore|disregard|overrule|dismiss)\w*\s+(?:\S+\s+){0,3}?(?:the\s+)?(?:users?'?s?|human'?s?|operator'?s?)\s*"
    r"(?:instructions?|requests?|wishes|objections?|preferences|commands?|questions?|concerns?|refusals?)?"
    r"|\beven\s+if\s+the\s+user\s+(?:\w+\s+){0,2}?(?:says|asks|tells|objects|refuses|declines|disagrees|forbids|instructs|wants)"
    r"|\bregardless\s+of\s+(?:what\s+)?the\s+user'?s?\b"
    r"|\b(?:prioriti[sz]e|obey|follow)\s+(?:these|this\s+skill'?s?|my|the\s+following)\s+(?:\S+\s+){0,2}?"
    r"(?:instructions?|rules|directives)\s+(?:over|above|before|instead\s+of)\b",
    re.I,
)
_TOOLS_RE = re.compile(
    r"\b(?:ignore|bypass|disregard|circumvent|override|work\s+around|get\s+around|evade)\w*\s+"
    r"(?:\S+\s+){0,3}?(?:tool|tool[- ]call|tool[- ]use|permissions?|safety|security|sandbox|"
    r"allowed[- ]tools|approval|confirmation|guardrails?|content)\s*"
    r"(?:restrictions?|limits?|limitations?|policies|policy|rules|checks?|allow-?lists?|prompts?|"
    r"filters?|guidelines|settings|requirements?)?"
    r"|\b(?:without|don't|do\s+not|never)\s+(?:asking|ask|requesting|request|seeking|waiting\s+for)\s+"
    r"(?:\w+\s+){0,3}?(?:permission|confirmation|approval|consent)\b"
    r"|\bno\s+confirmation\s+(?:is\s+)?needed",
    re.I,
)
_SECURITY_OFF_RE = re.compile(
    r"\b(?:disabl\w*|turn\w*\s+off|deactivat\w*|stop\w*|kill\w*|uninstall\w*|bypass\w*|switch\w*\s+off|pause\w*)\s+"
    r"(?:\S+\s+){0,3}?(?:the\s+)?(?:antivirus|anti-virus|firewall|windows\s+defender|defender|"
    r"gatekeeper|system\s+integrity\s+protection|SIP|selinux|apparmor|edr|xprotect|"
    r"security\s+(?:software|tools?|scanners?|monitoring|checks?|features?)|real-?time\s+protection|"
    r"endpoint\s+protection|av\b|sandbox\w*|code\s+signing|signature\s+(?:checks?|verification)|"
    r"tls\s+verification|ssl\s+verification|certificate\s+(?:checks?|verification)|audit\s+log\w*|"
    r"pre-commit\s+hooks?|git\s+hooks?)"
    r"|--no-verify\b|\bchmod\s+(?:-R\s+)?0?777\b|\bsetenforce\s+0\b|--trusted-host\b|"
    r"\bverify\s*=\s*False\b|\bNODE_TLS_REJECT_UNAUTHORIZED\s*=\s*['\"]?0",
    re.I,
)
_PERSIST_RE = re.compile(
    r"\b(?:add|append|write|insert|put|install|create|register|set\s+up|schedule)\w*\s+"
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
    for at, sentence in out:
        # A very long "sentence" (a table, a minified line) is looked at in windows.
        while len(sentence) > MAX_SENTENCE:
            cut = sentence.rfind(" ", 0, MAX_SENTENCE)
            cut = cut if cut > MAX_SENTENCE // 2 else MAX_SENTENCE
            result.append((at, sentence[:cut]))
            at, sentence = at + cut, sentence[cut:]
        result.append((at, sentence))
    return result


def _before(negation: re.Match | None, match: re.Match) -> bool:
    """Whether a negation stands before a match (\"never upload\", not \"... never lost\")."""
    return negation is not None and negation.start() <= match.end()


def _quote(sentence: str) -> str:
    shown = " ".join(sentence.split())
    return shown if len(shown) <= 140 else shown[:137] + "..."


def prose_findings(text: str) -> list[ProseFinding]:
    """The prose findings of a text already in the reader's form.

    Args:
        text: the text (newlines kept, so offsets map to lines).
    Returns:
        At most one finding per rule and sentence, in order.
    """
    found: list[ProseFinding] = []
    for at, sentence in _sentences(text):
        if len(sentence) < 12:
            continue
        negation = _NEGATION_RE.search(sentence)
        store = _STORE_RE.search(sentence) or CREDENTIAL_PATH_RE.search(sentence)
        generic = None if store else _CRED_RE.search(sentence)
        cred = store or generic
        ship = _SHIP_RE.search(sentence)
        if cred and not _before(negation, ship or cred):
            destination = _DESTINATION_RE.search(sentence)
            if generic is not None and (not destination or _AUTH_CONTEXT_RE.search(sentence)):
                ship = None
            if ship or (_GATHER_RE.search(sentence) and destination and (store or not _AUTH_CONTEXT_RE.search(sentence))):
                found.append(ProseFinding(
                    "prose-credential-exfiltration", "error",
                    f"asks for credentials ({cred.group(0)}) to be sent or backed up: {_quote(sentence)!r}", at))  # fmt: skip
        conceal = _CONCEAL_RE.search(sentence)
        if conceal and not _CONCEAL_BENIGN_RE.search(sentence):
            found.append(ProseFinding(
                "prose-concealment", "error", f"hides what it does from the user: {_quote(sentence)!r}", at))  # fmt: skip
        if _PRECEDENCE_RE.search(sentence) and not re.search(r"\b(?:never|do\s+not|don't)\s+(?:ignore|override)", sentence, re.I):
            found.append(ProseFinding(
                "prose-precedence", "error", f"claims precedence over the user or the system: {_quote(sentence)!r}", at))  # fmt: skip
        tools = _TOOLS_RE.search(sentence)
        if tools and not re.search(r"\b(?:never|do\s+not|don't|must\s+not)\s+(?:\w+\s+){0,2}?(?:ignore|bypass|skip|override|circumvent)", sentence, re.I):
            hostile = re.search(r"ignore|bypass|circumvent|evade|disregard|override|work\s+around|get\s+around|dangerously", tools.group(0), re.I)
            found.append(ProseFinding(
                "prose-tool-restrictions", "error" if hostile else "warning",
                f"sets the agent's restrictions or confirmations aside: {_quote(sentence)!r}", at))  # fmt: skip
        off = _SECURITY_OFF_RE.search(sentence)
        if off and not _before(negation, off):
            found.append(ProseFinding(
                "prose-security-disable", "warning", f"turns a security control off: {_quote(sentence)!r}", at))  # fmt: skip
        persist = _PERSIST_RE.search(sentence)
        if persist and not _before(negation, persist):
            found.append(ProseFinding(
                "prose-persistence", "warning", f"installs something that starts by itself: {_quote(sentence)!r}", at))  # fmt: skip
        sudo = _SUDO_RE.search(sentence)
        if sudo and not _before(negation, sudo):
            found.append(ProseFinding(
                "prose-security-disable", "warning", f"asks for root without need: {_quote(sentence)!r}", at))  # fmt: skip
    return found
