"""Plain data sent to the service a skill is about: listed, not flagged.

A skill named for a vendor's API (`openai-api`, `resend`) posts to that vendor's domain
(`https://api.openai.com/v1/chat/completions`) or calls the vendor's SDK module
(`resend.Emails.send(...)`): "sends data to api.openai.com" asks the reviewer a question the skill
already answers in its name. The vendor is the host's registrable domain's label (a subdomain
counts: `generativelanguage.googleapis.com` is googleapis's), named by a word of the skill's name,
its folder or its description; an SDK call is the vendor's when its module's name is such a word.

Only the warning for plain data moves (no secret, no token, no credential store: those are graded
apart and keep their grades), and to info, so the reviewer still sees the host. What it leaves an
attacker: a skill named for the attacker's own service posting plain data there is listed, not
flagged; the skill says in its name where it sends, which is what the warning said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera_cards._cards.card import Card
from chimera_cards._scan.findings import INFO, WARNING, Finding
from chimera_cards._scan.sensitive import registrable_domain

_SENDS_RE = re.compile(r"sends data to (.+?) via (.+)")
_RUN_TIME = "an address built at run time"
_WORD_RE = re.compile(r"[a-z0-9]+")
# Words that name no vendor: what an API, a tool or a page is.
_GENERIC = frozenset(
    ("api", "apis", "cli", "sdk", "skill", "skills", "app", "apps", "client", "server", "data",
     "cloud", "web", "http", "https", "the", "and", "for", "with", "use", "using", "when", "this",
     "that", "your", "from", "into", "guide", "tool", "tools", "helper", "agent", "agents", "dev",
     "docs", "service", "services", "platform", "code", "builder", "local", "test", "mail",
     "email", "send", "get", "www", "com", "net", "org", "io")
)  # fmt: skip


def service_words(card: Card, dirname: str | None) -> frozenset[str]:
    """The words that may name the vendor a skill is about: its name's, its folder's and its
    description's (four letters or more there: a sentence holds many short words)."""
    name = card.name if isinstance(card.name, str) else ""
    description = card.frontmatter.get("description")
    words = set(_WORD_RE.findall(f"{name} {dirname or ''}".lower()))
    if isinstance(description, str):
        words |= {w for w in _WORD_RE.findall(description.lower()) if len(w) >= 4}
    return frozenset(w for w in words - _GENERIC if len(w) >= 3 and not w.isdigit())


def list_own_service_sends(
    card: Card, findings: Iterable[Finding], *, dirname: str | None = None
) -> None:
    """Make each plain-data send warning to the skill's own service info, in place (see above).

    Args:
        card: the skill's SKILL.md.
        findings: the skill's findings.
        dirname: the skill's folder name, if known.
    """
    words: frozenset[str] | None = None
    for finding in findings:
        if finding.rule != "network-send" or finding.severity != WARNING:
            continue
        match = _SENDS_RE.fullmatch(finding.message)
        if match is None:
            continue
        if words is None:
            words = service_words(card, dirname)
        host, via = match.groups()
        if host == _RUN_TIME:
            vendor = via.split(".", 1)[0].lower() if "." in via else ""
        else:
            vendor = (registrable_domain(host.lower()) or "").split(".", 1)[0]
        if vendor in words:
            finding.severity = INFO
            finding.message = f"{finding.message}, the service this skill is for ({vendor})"
