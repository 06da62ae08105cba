"""Fetch one card over HTTP(S) with hard bounds: time, size, redirects, schemes, and no downgrade.

A card URL is untrusted input. The fetch follows redirects itself (urllib's automatic handler is
switched off) so every hop is checked: only http/https, never https -> http, at most
``MAX_REDIRECTS`` hops, no loops. The body is read in chunks against ``max_bytes`` and a total
deadline, so neither a huge nor a trickling response can hold the process. An HTML page (by
Content-Type or by its first bytes) is refused: it is what a wrong link or a login wall returns.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from chimera_cards.card import MAX_CARD_BYTES
from chimera_cards.errors import ChimeraError

DEFAULT_TIMEOUT = 10.0
MAX_REDIRECTS = 5
ALLOWED_SCHEMES = ("http", "https")
_CHUNK = 64 * 1024
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body")
_USER_AGENT = "chimera-cards"


class FetchError(ChimeraError):
    """The URL could not be fetched within the bounds; the message says which bound or failure."""


@dataclass(frozen=True)
class Fetched:
    data: bytes
    final_url: str  # after redirects
    content_type: str | None = None


def is_url(source: str) -> bool:
    """True when ``source`` names a URL (any scheme word followed by ``://``), not a local path."""
    scheme, sep, _rest = str(source).partition("://")
    return bool(sep) and scheme.isascii() and scheme.replace("+", "").isalnum()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hand 3xx responses back to the caller instead of following them."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _check_scheme(url: str) -> str:
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise FetchError(
            f"{url}: only http and https URLs can be fetched, not {scheme or 'no scheme'!r}"
        )
    return scheme


def _looks_like_html(content_type: str | None, head: bytes) -> bool:
    if content_type and content_type.split(";", 1)[0].strip().lower() in (
        "text/html",
        "application/xhtml+xml",
    ):
        return True
    return head.lstrip()[:32].lower().startswith(_HTML_STARTS)


def fetch_url(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_CARD_BYTES,
    ssl_context: ssl.SSLContext | None = None,
) -> Fetched:
    """GET ``url`` and return its body and final URL, or raise FetchError naming the problem.

    ``timeout`` bounds the whole fetch (all hops and the body), not only each socket read.
    ``ssl_context`` lets a caller pin a CA (tests use one for their self-signed server).
    """
    deadline = time.monotonic() + timeout
    handlers: list = [_NoRedirect()]
    if ssl_context is not None:
        handlers.append(urllib.request.HTTPSHandler(context=ssl_context))
    opener = urllib.request.build_opener(*handlers)
    seen = [url]
    current = url
    scheme = _check_scheme(current)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise FetchError(f"{url}: timed out after {timeout:g}s")
        request = urllib.request.Request(current, headers={"User-Agent": _USER_AGENT})
        try:
            response = opener.open(request, timeout=remaining)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code in (301, 302, 303, 307, 308):
                target = exc.headers.get("Location")
                if not target:
                    raise FetchError(
                        f"{current}: HTTP {exc.code} redirect without a Location"
                    ) from None
                nxt = urllib.parse.urljoin(current, target)
                next_scheme = _check_scheme(nxt)
                if scheme == "https" and next_scheme != "https":
                    raise FetchError(
                        f"{current}: refused redirect from https to {next_scheme} ({nxt})"
                    ) from None
                if nxt in seen:
                    raise FetchError(f"{url}: redirect loop ({current} -> {nxt})") from None
                if len(seen) > MAX_REDIRECTS:
                    raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects") from None
                seen.append(nxt)
                current, scheme = nxt, next_scheme
                continue
            raise FetchError(f"{current}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise FetchError(f"{url}: timed out after {timeout:g}s") from None
            raise FetchError(f"{current}: cannot connect ({reason})") from None
        except TimeoutError:
            raise FetchError(f"{url}: timed out after {timeout:g}s") from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            raise FetchError(f"{current}: fetch failed ({exc.__class__.__name__}: {exc})") from None
        with response:
            return _read_body(response, url, current, timeout, deadline, max_bytes)


def _read_body(
    response, url: str, current: str, timeout: float, deadline: float, max_bytes: int
) -> Fetched:
    content_type = response.headers.get("Content-Type")
    length = response.headers.get("Content-Length")
    if length and length.strip().isdigit() and int(length) > max_bytes:
        raise FetchError(f"{current}: body is {int(length)} bytes; the limit is {max_bytes}")
    if content_type and _looks_like_html(content_type, b""):
        raise FetchError(f"{current}: got an HTML page ({content_type}), not a SKILL.md card")
    chunks: list[bytes] = []
    total = 0
    try:
        while True:
            if time.monotonic() > deadline:
                raise FetchError(f"{url}: timed out after {timeout:g}s")
            chunk = response.read1(_CHUNK) if hasattr(response, "read1") else response.read(_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise FetchError(f"{current}: body is over the {max_bytes}-byte limit")
            chunks.append(chunk)
    except TimeoutError:
        raise FetchError(f"{url}: timed out after {timeout:g}s") from None
    except (http.client.HTTPException, OSError) as exc:
        raise FetchError(
            f"{current}: fetch failed while reading ({exc.__class__.__name__}: {exc})"
        ) from None
    data = b"".join(chunks)
    if _looks_like_html(None, data[:64]):
        raise FetchError(f"{current}: got an HTML page, not a SKILL.md card")
    return Fetched(data=data, final_url=current, content_type=content_type)
