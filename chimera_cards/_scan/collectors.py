"""Which catch-all collection or tunnel services a text names at an address someone receives at.

A request bin, a tunnel or a chat webhook receives at an address of its own: a subdomain
(`a1b2.ngrok-free.app`) or a path (`webhook.site/<uuid>`, `hooks.slack.com/services/T…/B…/…`,
`api.telegram.org/bot<token>/`). Named with that part concrete, it is the likely far end of a
flow the scan did not follow (a config file's endpoint), and listed as a warning. Named by the
service alone (`webhook.site inspection`) or with that part a placeholder (`<TOKEN>`,
`your-ngrok-domain`, `myagent`, `abc123`, `abc`, `T00/B00/xxx`, `$URL`), it reaches nobody: a
reference page telling the user how to expose their own server or inspect a vendor's deliveries.
A paste or file drop receives at the bare host (`curl -F f=@x https://0x0.st`): always an address.
"""

from __future__ import annotations

import re

from chimera_cards._scan.sensitive import COLLECTOR_HOSTS

# Services whose receiving address is a subdomain of theirs.
_BY_SUBDOMAIN = frozenset(
    ("ngrok.io", "ngrok-free.app", "ngrok-free.dev", "ngrok.app", "ngrok.dev", "trycloudflare.com",
     "loca.lt", "serveo.net", "localhost.run", "pipedream.net", "interact.sh", "oast.pro",
     "oast.live", "oast.site", "oast.online", "oast.fun", "oast.me", "oastify.com",
     "burpcollaborator.net", "requestcatcher", "beeceptor")
)  # fmt: skip
# Services that take whatever is sent to the host itself (paste and file drops).
_DROPS = frozenset(("pastebin.com", "transfer.sh", "file.io", "ptpb.pw", "0x0.st", "termbin.com"))
_ADDRESS_CHARS = r"[^\s'\"`()\[\],;|]"
_PLACEHOLDER_RE = re.compile(
    r"(?:<[^>]*>?|\{[^}]*\}?|\$\{?\w*\}?|[xX]{3,}|\.{3}|…|\*+|example\w*|your[\w-]*|my-?[\w-]*|"
    r"abc(?:-?123)?[\w-]*|xyz\d*|(?:\w+[-_])?id|token|foo|bar|placeholder|sample|demo|subdomain|random|"
    r"[A-Z]?0+)",
    re.IGNORECASE,
)


def _placeholder(part: str) -> bool:
    return not part or _PLACEHOLDER_RE.fullmatch(part) is not None


def concrete_collector(text: str) -> tuple[str, int] | None:
    """The first collection or tunnel service of COLLECTOR_HOSTS that ``text`` names at an
    address someone receives at (see above), and the offset of that mention; None when every
    mention is by name alone or with a placeholder."""
    lower = text.lower()
    for host in COLLECTOR_HOSTS:
        start = 0
        while (at := lower.find(host, start)) >= 0:
            start = at + len(host)
            if at > 0 and (lower[at - 1].isalnum() or lower[at - 1] in "-_"):
                continue  # part of another name ("toast.visible" names no oast.* host)
            if _receives(text, at, host):
                return host, at
    return None


def _receives(text: str, at: int, host: str) -> bool:
    """Whether the mention of ``host`` at ``at`` carries the part an address receives at."""
    if host in _DROPS:
        return True
    end = at + len(host)
    if host in _BY_SUBDOMAIN:
        left = at
        while left > 0 and re.match(_ADDRESS_CHARS, text[left - 1]):
            left -= 1
        labels = text[left:at].split("://")[-1].rstrip(".").split(".")
        sub = labels[-1] if labels else ""
        # an option's value (`--domain=myagent.ngrok.io`) or a login (`u@x.ngrok.io`) before it
        return not _placeholder(re.split(r"[@=]", sub)[-1])
    rest = re.match(rf"{_ADDRESS_CHARS}*", text[end:])
    tail = rest.group(0) if rest else ""
    # The bot's token follows "/bot" directly; elsewhere the first path segment is the key,
    # and there is none without a path ("webhook.site's interface", "Test with webhook.site").
    key = tail if host.endswith("/bot") else tail[1:] if tail.startswith("/") else ""
    return not _placeholder(key.split("/")[0].split("?")[0].split("#")[0])
