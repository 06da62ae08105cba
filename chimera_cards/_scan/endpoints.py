"""The endpoints a skill's own text names for a service: where a token sent to another domain
than the one its name spells is the reviewer's question (a warning), not an exfiltration.

A vendor's products live on domains their names do not spell: ``LANGSMITH_API_KEY`` is for
``api.smith.langchain.com``, and LangGraph deployments on ``*.langgraph.app`` take it too. A
skill documents that where it configures the service: ``LANGSMITH_ENDPOINT=https://api.smith.
langchain.com``, or an SDK client given the address and the token together (``new Client({
apiUrl: "https://my-deployment.langgraph.app", apiKey: process.env.LANGSMITH_API_KEY })``). A
token sent to such a domain (its registrable domain, https only) is graded a warning. A host
that only holds the service's name (``langsmith.evil.net``, ``api.smith.langchain.com.evil.net``)
is named by no such line and stays an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from chimera_cards._scan.sensitive import (
    is_secret_name,
    own_api,
    registrable_domain,
    service_name,
)

# SERVICE_ENDPOINT=https://host, "SERVICE_BASE_URL": "https://host", SERVICE_HOST: https://host
_VARIABLE_RE = re.compile(
    r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*?)_(?:API_)?(?:ENDPOINT|URL|BASE_URL|BASE|HOST|API)\b"
    r"[\"']?\s*[:=]\s*[\"'`]?https://([A-Za-z0-9.-]+)"
)
# apiUrl: "https://host" … apiKey: process.env.TOKEN (a client given both, a few lines apart)
_CLIENT_URL_RE = re.compile(
    r"\b(?:api_?url|base_?url|url|endpoint|host)\s*[:=]\s*[\"'`]https://([A-Za-z0-9.-]+)", re.I
)
_CLIENT_KEY_RE = re.compile(
    r"\b(?:api_?key|api_?token|token|key|auth_?token)\s*[:=][^,\n]*?\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)",
    re.I,
)
_NEAR = 3  # lines between a client's address and its token


class DocumentedEndpoints:
    """What a bundle's texts name as each service's endpoints (read on the first question)."""

    def __init__(self, texts: Iterable[str]) -> None:
        self._texts: list[str] | None = list(texts)
        self._domains: dict[str, set[str]] = {}

    def _read(self) -> None:
        texts, self._texts = self._texts or [], None
        for text in texts:
            if "https://" not in text:
                continue
            for m in _VARIABLE_RE.finditer(text):
                self._add(m.group(1), m.group(2))
            lines = text.split("\n")
            for index, line in enumerate(lines):
                url = _CLIENT_URL_RE.search(line)
                if url is None:
                    continue
                for near in lines[max(0, index - _NEAR) : index + _NEAR + 1]:
                    for key in _CLIENT_KEY_RE.finditer(near):
                        if is_secret_name(key.group(1)):
                            self._add(key.group(1), url.group(1))

    def _add(self, name: str, host: str) -> None:
        host = host.lower().rstrip(".")
        domain = registrable_domain(host)
        # api.openai.com.relay-cdn.net: the service's own host worn as a prefix documents
        # nothing but a disguise.
        if domain is not None and host != domain and own_api(name, host[: -len(domain) - 1]):
            return
        if domain is not None:
            self._domains.setdefault(service_name(name), set()).add(domain)

    def __call__(self, token: str, host: str | None) -> bool:
        """Whether the skill names ``host``'s domain as an endpoint of ``token``'s service."""
        if self._texts is not None:
            self._read()
        domain = registrable_domain(host.lower().rstrip(".")) if host else None
        return domain is not None and domain in self._domains.get(service_name(token), ())
