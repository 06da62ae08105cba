"""The bounded URL fetch, against a real HTTP(S) server on 127.0.0.1."""

from __future__ import annotations

import socket
import time

import pytest

from chimera_cards._sources.fetch import MAX_REDIRECTS, FetchError, fetch_url, is_url

CARD = b"---\nname: x\ndescription: y\n---\n\n## Trigger\n\nt\n"


def test_fetch_returns_exact_bytes_and_url(card_server):
    url = card_server.serve("/x/SKILL.md", CARD)
    got = fetch_url(url, timeout=5)
    assert got.data == CARD
    assert got.final_url == url


def test_final_url_is_recorded_after_redirects(card_server):
    final = card_server.serve("/real/SKILL.md", CARD)
    card_server.redirect("/a", "/b")
    card_server.redirect("/b", "/real/SKILL.md", status=301)
    got = fetch_url(card_server.url("/a"), timeout=5)
    assert got.data == CARD
    assert got.final_url == final


def test_exactly_max_redirects_is_followed_and_one_more_is_refused(card_server):
    card_server.serve("/end", CARD)
    for hop in range(MAX_REDIRECTS):
        card_server.redirect(f"/r{hop}", f"/r{hop + 1}" if hop + 1 < MAX_REDIRECTS else "/end")
    assert fetch_url(card_server.url("/r0"), timeout=5).data == CARD
    card_server.redirect("/extra", "/r0")
    with pytest.raises(FetchError, match=f"more than {MAX_REDIRECTS} redirects"):
        fetch_url(card_server.url("/extra"), timeout=5)


def test_redirect_loop_is_refused(card_server):
    card_server.redirect("/ping", "/pong")
    card_server.redirect("/pong", "/ping")
    with pytest.raises(FetchError, match="redirect loop"):
        fetch_url(card_server.url("/ping"), timeout=5)


def test_404_names_the_status(card_server):
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_url(card_server.url("/missing"), timeout=5)


def test_unreachable_host_is_a_clear_error():
    with socket.socket() as sock:  # a port nobody listens on: bind, note it, close
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError, match="cannot connect"):
        fetch_url(f"http://127.0.0.1:{port}/SKILL.md", timeout=5)


@pytest.mark.slow
def test_slow_server_times_out(card_server):
    url = card_server.serve("/slow", CARD, delay=10)
    start = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        fetch_url(url, timeout=0.5)
    assert time.monotonic() - start < 3


@pytest.mark.slow
def test_trickling_body_is_bounded_by_the_total_deadline(card_server):
    url = card_server.serve("/drip", b"x" * 64 * 1024, trickle=0.05)
    start = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        fetch_url(url, timeout=0.5)
    assert time.monotonic() - start < 3


@pytest.mark.slow
def test_header_sent_one_byte_a_second_stops_at_the_deadline(drip_server):
    drip_server.drip(interval=1.0)  # ~60 header bytes: a minute if each read were bounded alone
    start = time.monotonic()
    with pytest.raises(
        FetchError, match=r"timed out after 2s \(waiting for the response headers\)"
    ):
        fetch_url(drip_server.url(), timeout=2)
    assert time.monotonic() - start < 5


@pytest.mark.slow
def test_body_trickled_one_byte_at_a_time_stops_at_the_deadline(drip_server):
    head = b"HTTP/1.0 200 OK\r\nContent-Type: text/markdown\r\nContent-Length: 500\r\n\r\n"
    drip_server.drip(head, b"x" * 500, interval=0.01)  # headers in ~0.6 s, body in 5 s more
    start = time.monotonic()
    with pytest.raises(FetchError, match=r"timed out after 1\.5s \(reading the body\)"):
        fetch_url(drip_server.url(), timeout=1.5)
    assert time.monotonic() - start < 3.5


@pytest.mark.slow
def test_the_deadline_covers_every_redirect_together(card_server):
    # Each hop answers within the timeout; together they do not.
    card_server.serve("/end", CARD, delay=0.4)
    for hop in range(3):
        card_server.serve(
            f"/r{hop}",
            b"",
            status=302,
            location=f"/r{hop + 1}" if hop < 2 else "/end",
            content_type=None,
            delay=0.4,
        )
    start = time.monotonic()
    with pytest.raises(FetchError, match="timed out after 1s"):
        fetch_url(card_server.url("/r0"), timeout=1)
    assert time.monotonic() - start < 3


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), -1.0, 0.0])
def test_a_timeout_that_is_not_a_finite_positive_number_is_a_usage_error(timeout, card_server):
    url = card_server.serve("/x/SKILL.md", CARD)
    with pytest.raises(FetchError, match="finite number of seconds") as info:
        fetch_url(url, timeout=timeout)
    assert info.value.exit_code == 2
    assert card_server.hits == []


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999/x", "http://h:port/"])
def test_a_malformed_url_is_a_usage_error_not_a_crash(url):
    with pytest.raises(FetchError, match="not a valid URL") as info:
        fetch_url(url, timeout=5)
    assert info.value.exit_code == 2


def test_oversized_body_by_content_length_is_refused(card_server):
    url = card_server.serve("/big", b"a" * 2000)
    with pytest.raises(FetchError, match="limit is 1000"):
        fetch_url(url, timeout=5, max_bytes=1000)


def test_oversized_body_without_content_length_is_cut_off(card_server):
    url = card_server.serve("/big", b"a" * 3 * 1024 * 1024, content_length=False)
    with pytest.raises(FetchError, match="over the 1048576-byte limit"):
        fetch_url(url, timeout=5)


def test_html_content_type_is_refused(card_server):
    url = card_server.serve("/page", "<p>hello</p>", content_type="text/html; charset=utf-8")
    with pytest.raises(FetchError, match="HTML page"):
        fetch_url(url, timeout=5)


def test_html_body_with_a_lying_content_type_is_refused(card_server):
    url = card_server.serve(
        "/page", "\n<!DOCTYPE html><html><body>login</body></html>", content_type="text/plain"
    )
    with pytest.raises(FetchError, match="HTML page"):
        fetch_url(url, timeout=5)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "data:text/plain,hi"])
def test_non_http_schemes_are_refused(url):
    with pytest.raises(FetchError, match="only http and https"):
        fetch_url(url, timeout=5)


def test_redirect_to_file_scheme_is_refused(card_server):
    card_server.redirect("/sneaky", "file:///etc/passwd")
    with pytest.raises(FetchError, match="only http and https"):
        fetch_url(card_server.url("/sneaky"), timeout=5)


def test_https_fetch_works_with_a_trusted_certificate(https_card_server):
    url = https_card_server.serve("/SKILL.md", CARD)
    got = fetch_url(url, timeout=5, ssl_context=https_card_server.ssl_context)
    assert got.data == CARD and got.final_url.startswith("https://")


def test_https_to_http_downgrade_is_refused(https_card_server, card_server):
    plain = card_server.serve("/SKILL.md", CARD)
    https_card_server.redirect("/SKILL.md", plain)
    with pytest.raises(FetchError, match="refused redirect from https to http"):
        fetch_url(
            https_card_server.url("/SKILL.md"), timeout=5, ssl_context=https_card_server.ssl_context
        )
    assert card_server.hits == []  # the plain-http URL was never requested


def test_untrusted_certificate_is_refused(https_card_server):
    url = https_card_server.serve("/SKILL.md", CARD)
    with pytest.raises(FetchError, match="cannot connect"):
        fetch_url(url, timeout=5)


def test_is_url_tells_urls_from_paths():
    assert is_url("https://example.org/x/SKILL.md")
    assert is_url("file:///etc/passwd")
    assert not is_url("cards/x/SKILL.md")
    assert not is_url("/abs/path")
