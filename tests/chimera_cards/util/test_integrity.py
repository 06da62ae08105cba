"""Card hashes: hex and SRI forms of SHA-256 over raw bytes, and refusing a mismatch."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys

import pytest

from chimera_cards._util.integrity import (
    IntegrityError,
    check_integrity,
    expected_hex,
    sha256_hex,
    sri,
)
from chimera_cards.errors import UsageError

DATA = b"---\nname: x\n---\n"
HEX = hashlib.sha256(DATA).hexdigest()
SRI = "sha256-" + base64.b64encode(hashlib.sha256(DATA).digest()).decode()


def test_sha256_hex_and_sri_of_known_bytes():
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert sri(b"") == "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    assert sha256_hex(DATA) == HEX
    assert sri(DATA) == SRI


def test_one_byte_changes_the_hash():
    assert sha256_hex(DATA + b" ") != HEX
    assert sha256_hex(DATA.replace(b"\n", b"\r\n")) != HEX


def test_expected_hex_normalises_either_form():
    assert expected_hex(HEX.upper(), None) == HEX
    assert expected_hex(None, SRI) == HEX
    assert expected_hex(f"sha256:{HEX}", None) == HEX
    assert expected_hex(SRI, None) == HEX
    assert expected_hex(HEX, SRI) == HEX
    assert expected_hex(None, None) is None


def test_expected_hex_refuses_two_different_pins():
    with pytest.raises(UsageError, match="different"):
        expected_hex(HEX, sri(b"other"))


@pytest.mark.parametrize(
    "bad",
    [
        "abc",
        "sha256-!!!",
        "sha512-" + base64.b64encode(b"x" * 64).decode(),
        "sha256-" + base64.b64encode(b"short").decode(),
        "g" * 64,
    ],
)
def test_malformed_pins_are_usage_errors(bad):
    with pytest.raises(UsageError):
        expected_hex(bad, None)


def test_check_integrity_accepts_match_and_refuses_mismatch():
    check_integrity(DATA, HEX)
    check_integrity(DATA, SRI)
    with pytest.raises(IntegrityError, match="mismatch") as exc:
        check_integrity(DATA + b"tampered", HEX)
    assert exc.value.exit_code == 1


def _probe(body: str) -> list:
    """Run ``body`` in a fresh process (no OpenSSL loaded yet) and return what it printed as JSON:
    ``row(size, h)`` records a hash of its data plus ``b'more'`` and whether OpenSSL's made it."""
    prelude = (
        "import sys, json\n"
        "from chimera_cards._util.integrity import OPENSSL_AFTER_BYTES, HashBudget, sha256_of\n"
        "out = []\n"
        "def data(size): return bytes(i % 251 for i in range(size))\n"
        "def row(size, h):\n"
        "    h.update(b'more')\n"
        "    out.append([size, h.hexdigest(), type(h).__module__ == '_hashlib'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + body + "print(json.dumps(out))\n"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    rows = json.loads(done.stdout)
    for size, hexdigest, _ in rows:
        data = bytes(i % 251 for i in range(size))
        assert hexdigest == hashlib.sha256(data + b"more").hexdigest(), size
    return rows


def test_a_job_hashes_with_cpythons_sha256_until_its_budget_is_spent_then_with_openssl():
    # The digests are SHA-256's either way, including across the switch.
    rows = _probe(
        "budget = HashBudget()\n"
        "for size in (0, 1, 64, 1000, OPENSSL_AFTER_BYTES - 1067, 2, 3 * OPENSSL_AFTER_BYTES):\n"
        "    row(size, sha256_of(data(size), budget))\n"
    )
    # Exactly OPENSSL_AFTER_BYTES hashed use CPython's own; the hash that would pass it OpenSSL's.
    assert [openssl for *_, openssl in rows] == [False] * 6 + [True]


def test_one_jobs_hashing_does_not_decide_how_the_next_job_hashes():
    # Two scans of 0.9 MiB each: each has its own budget, so neither loads OpenSSL; a lone hash
    # without a budget is judged by its own size.
    rows = _probe(
        "for job in range(2):\n"
        "    budget = HashBudget()\n"
        "    tenth = OPENSSL_AFTER_BYTES // 10\n"
        "    for _ in range(9):\n"
        "        row(tenth, sha256_of(data(tenth), budget))\n"
        "row(OPENSSL_AFTER_BYTES, sha256_of(data(OPENSSL_AFTER_BYTES)))\n"
        "row(OPENSSL_AFTER_BYTES + 1, sha256_of(data(OPENSSL_AFTER_BYTES + 1)))\n"
        "row(5, sha256_of(data(5), HashBudget()))\n"
    )
    # Once OpenSSL's is loaded it is used for everything, budget or not.
    assert [openssl for *_, openssl in rows] == [False] * 19 + [True, True]
