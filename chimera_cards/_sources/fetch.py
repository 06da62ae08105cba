"""Fetch one card over HTTP(S) with hard bounds: time, size, redirects, schemes, and no downgrade.

A card URL is untrusted input. The fetch follows redirects itself (urllib's automatic handler is
switched off) so every hop is checked: only http/https, never https -> http, at most
``MAX_REDIRECTS`` hops, no loops. The body is read in chunks against ``max_bytes`` and a total
deadline, so neither a huge nor a trickling response can hold the process. An HTML page (by
Content-Type or by its first bytes) is refused: it is what a wrong link or a login wall returns.
"""

from __future__ import annotations

import contextlib
import http.client
import math
import socket
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from chimera_cards._cards.card import MAX_CARD_BYTES
from chimera_cards._util.urls import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT  # re-exported
from chimera_cards._util.urls import is_url as is_url  # re-exported: callers that fetch use it too
from chimera_cards.errors import ChimeraError

MAX_REDIRECTS = 5
ALLOWED_SCHEMES = ("http", "https")
_CHUNK = 64 * 1024
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body")
_USER_AGENT = "chimera-cards"


class FetchError(ChimeraError):
    """The URL could not be fetched within the bounds; the message says which bound or failure."""


@dataclass(frozen=True)
class Fetched:
    """What a bounded fetch returned: the bytes and the URL they came from."""

    data: bytes
    final_url: str  # after redirects
    content_type: str | None = None


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hand 3xx responses back to the caller instead of following them."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def _check_scheme(url: str) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number or out of range raises here
    except ValueError as exc:
        raise FetchError(f"{url}: not a valid URL ({exc})", exit_code=2) from None
    scheme = parts.scheme.lower()
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


def _timed_out(url: str, timeout: float, phase: str) -> FetchError:
    return FetchError(f"{url}: timed out after {timeout:g}s ({phase})")


def check_timeout(timeout: float) -> float:
    """Return ``timeout`` if it is a usable deadline in seconds, else raise FetchError (exit 2).

    Args:
        timeout: seconds allowed for the whole fetch.

    Returns:
        The same number, known to be finite and positive.
    """
    if not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise FetchError(
            f"timeout must be a finite number of seconds above 0, not {timeout!r}", exit_code=2
        )
    return float(timeout)


class _Deadline:
    """One deadline for a whole fetch, and the sockets to cut when it passes.

    A socket timeout only bounds each read; a server that sends one byte a second never trips
    it. Cutting every socket of the fetch at the deadline ends any read in progress at once.
    """

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.phase = "starting"
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def remaining(self) -> float:
        left = self.at - time.monotonic()
        if left <= 0 or self.expired:
            raise TimeoutError
        return left

    def track(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _cut(sock)

    def expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _cut(sock)

    def connection_class(self, base: type) -> type:
        """``base`` (an http.client connection class) that bounds and registers its socket."""
        deadline = self

        class Bounded(base):
            def connect(self) -> None:
                deadline.phase = f"connecting to {self.host}"
                self.timeout = deadline.remaining()
                super().connect()
                deadline.track(self.sock)
                deadline.phase = "waiting for the response headers"

        return Bounded


def _cut(sock: socket.socket) -> None:
    # The plain socket's shutdown (not SSLSocket's) cuts the file descriptor under a TLS read
    # in another thread without touching its SSL object.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _BoundedHandlerMixin:
    deadline: _Deadline

    def do_open(self, http_class, req, **http_conn_args):
        return super().do_open(self.deadline.connection_class(http_class), req, **http_conn_args)


class _BoundedHTTPHandler(_BoundedHandlerMixin, urllib.request.HTTPHandler):
    pass


class _BoundedHTTPSHandler(_BoundedHandlerMixin, urllib.request.HTTPSHandler):
    pass


def fetch_url(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_CARD_BYTES,
    ssl_context: ssl.SSLContext | None = None,
) -> Fetched:
    """GET ``url`` and return its body and final URL, or raise FetchError naming the problem.

    Args:
        url: an http or https URL.
        timeout: seconds for the whole fetch: name lookup, connect, TLS, headers, body and
            every redirect together; when it passes, the fetch stops wherever it is.
        max_bytes: the largest body accepted.
        ssl_context: lets a caller pin a CA (tests use one for their self-signed server).

    Returns:
        The body's exact bytes, the URL they came from after redirects, and the Content-Type.
    """
    timeout = check_timeout(timeout)
    _check_scheme(url)
    deadline = _Deadline(timeout)
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["result"] = _fetch(url, timeout, deadline, max_bytes, ssl_context)
        except BaseException as exc:  # handed to the caller's thread below
            outcome["error"] = exc

    # The fetch runs in a worker so that even the steps no socket timeout covers (name lookup,
    # a TLS handshake) cannot hold the caller past the deadline.
    worker = threading.Thread(target=work, name="chimera-cards-fetch", daemon=True)
    worker.start()
    try:
        worker.join(max(0.0, deadline.at - time.monotonic()))
    finally:
        if worker.is_alive():
            deadline.expire()
    if deadline.expired:  # even a result: a cut socket reads as an early end of the body
        raise _timed_out(url, timeout, deadline.phase)
    if "error" in outcome:
        raise outcome["error"]
    result: Fetched = outcome["result"]
    return result


def _fetch(
    url: str,
    timeout: float,
    deadline: _Deadline,
    max_bytes: int,
    ssl_context: ssl.SSLContext | None,
) -> Fetched:
    http_handler = _BoundedHTTPHandler()
    https_handler = _BoundedHTTPSHandler(context=ssl_context)
    http_handler.deadline = https_handler.deadline = deadline
    opener = urllib.request.build_opener(_NoRedirect(), http_handler, https_handler)
    seen = [url]
    current = url
    scheme = _check_scheme(current)
    while True:
        try:
            request = urllib.request.Request(current, headers={"User-Agent": _USER_AGENT})
            response = opener.open(request, timeout=deadline.remaining())
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code in (301, 302, 303, 307, 308):
                nxt = _redirect_target(url, current, scheme, exc, seen)
                seen.append(nxt)
                current, scheme = nxt, _check_scheme(nxt)
                continue
            raise FetchError(f"{current}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if deadline.expired or isinstance(reason, (socket.timeout, TimeoutError)):
                raise _timed_out(url, timeout, deadline.phase) from None
            raise FetchError(f"{current}: cannot connect ({reason})") from None
        except TimeoutError:
            raise _timed_out(url, timeout, deadline.phase) from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            if deadline.expired:
                raise _timed_out(url, timeout, deadline.phase) from None
            raise FetchError(f"{current}: fetch failed ({exc.__class__.__name__}: {exc})") from None
        deadline.phase = "reading the body"
        with response:
            return _read_body(response, url, current, timeout, deadline, max_bytes)


def _redirect_target(
    url: str, current: str, scheme: str, exc: urllib.error.HTTPError, seen: list[str]
) -> str:
    target = exc.headers.get("Location")
    if not target:
        raise FetchError(f"{current}: HTTP {exc.code} redirect without a Location")
    try:
        nxt = urllib.parse.urljoin(current, target)
    except ValueError:
        raise FetchError(f"{current}: HTTP {exc.code} redirect to a malformed URL") from None
    next_scheme = _check_scheme(nxt)
    if scheme == "https" and next_scheme != "https":
        raise FetchError(f"{current}: refused redirect from https to {next_scheme} ({nxt})")
    if nxt in seen:
        raise FetchError(f"{url}: redirect loop ({current} -> {nxt})")
    if len(seen) > MAX_REDIRECTS:
        raise FetchError(f"{url}: more than {MAX_REDIRECTS} redirects")
    return nxt


def _read_body(
    response, url: str, current: str, timeout: float, deadline: _Deadline, max_bytes: int
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
            deadline.remaining()
            chunk = response.read1(_CHUNK) if hasattr(response, "read1") else response.read(_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise FetchError(f"{current}: body is over the {max_bytes}-byte limit")
            chunks.append(chunk)
    except TimeoutError:
        raise _timed_out(url, timeout, deadline.phase) from None
    except (http.client.HTTPException, OSError) as exc:
        if deadline.expired:
            raise _timed_out(url, timeout, deadline.phase) from None
        raise FetchError(
            f"{current}: fetch failed while reading ({exc.__class__.__name__}: {exc})"
        ) from None
    data = b"".join(chunks)
    if _looks_like_html(None, data[:64]):
        raise FetchError(f"{current}: got an HTML page, not a SKILL.md card")
    return Fetched(data=data, final_url=current, content_type=content_type)
