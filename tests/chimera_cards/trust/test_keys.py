"""Reviewer keys: generation, file permissions, loading, public-key text, DSSE signing."""

from __future__ import annotations

import base64
import os
import stat

import pytest

from chimera_cards._trust.keys import (
    KeyFileError,
    generate_key,
    load_private_key,
    pae,
    parse_public_key,
    public_of,
    read_public_key,
    sign_envelope,
    verify_envelope,
)
from chimera_cards.errors import KeyExistsError, UsageError


def test_private_key_file_is_created_0600_and_pub_beside_it(tmp_path):
    old = os.umask(0o022)
    try:
        gen = generate_key("alice", tmp_path / "alice.key")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(gen.keyfile).st_mode) == 0o600
    assert gen.pubfile == tmp_path / "alice.key.pub"
    pub_text = gen.pubfile.read_text()
    assert pub_text.startswith("ed25519 ") and pub_text.strip().endswith(" alice")
    assert parse_public_key(pub_text) == gen.public
    assert len(gen.public.keyid) == 16


def test_default_keyfile_is_under_chimera_home(tmp_path, monkeypatch):
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "home"))
    gen = generate_key("bob")
    assert gen.keyfile == tmp_path / "home" / "keys" / "bob.key"
    assert gen.keyfile.exists()


def test_generate_refuses_to_overwrite_an_existing_key(tmp_path):
    generate_key("alice", tmp_path / "k")
    before = (tmp_path / "k").read_bytes(), (tmp_path / "k.pub").read_bytes()
    with pytest.raises(KeyExistsError):
        generate_key("alice", tmp_path / "k")
    assert ((tmp_path / "k").read_bytes(), (tmp_path / "k.pub").read_bytes()) == before


def test_key_name_that_could_escape_a_directory_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path))
    with pytest.raises(UsageError):
        generate_key("../evil")


def test_passphrase_protected_key_needs_the_passphrase(tmp_path):
    gen = generate_key("carol", tmp_path / "c.key", passphrase=b"s3cret")
    assert b"ENCRYPTED" in gen.keyfile.read_bytes()
    with pytest.raises(KeyFileError, match="passphrase"):
        load_private_key(gen.keyfile)
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        load_private_key(gen.keyfile, passphrase=b"nope")
    key = load_private_key(gen.keyfile, passphrase=b"s3cret")
    assert public_of(key) == gen.public


def test_a_file_that_is_not_a_key_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.key"
    bad.write_text("hello")
    with pytest.raises(KeyFileError, match="not a PEM private key"):
        load_private_key(bad)
    with pytest.raises(UsageError):
        load_private_key(tmp_path / "missing.key")


def test_public_key_from_file_or_text_or_ssh_form(tmp_path):
    gen = generate_key("dave", tmp_path / "d.key")
    assert read_public_key(str(gen.pubfile)) == gen.public
    assert read_public_key(gen.pubfile.read_text()) == gen.public
    from cryptography.hazmat.primitives import serialization

    ssh = (
        load_private_key(gen.keyfile)
        .public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode()
    )
    assert parse_public_key(ssh + " dave@host") == gen.public


@pytest.mark.parametrize(
    "text",
    ["ed25519 not-base64!!", "ed25519 " + base64.b64encode(b"x" * 31).decode(), "rsa AAAA b c"],
)
def test_malformed_public_key_text_is_refused(text):
    with pytest.raises(KeyFileError):
        parse_public_key(text)


def test_pae_is_the_dsse_encoding():
    assert pae("t", b"hello") == b"DSSEv1 1 t 5 hello"


def test_envelope_verifies_only_under_the_signing_key_and_exact_payload(tmp_path):
    a = generate_key("a", tmp_path / "a")
    b = generate_key("b", tmp_path / "b")
    ka = load_private_key(a.keyfile)
    env = sign_envelope(ka, "text/plain", b"payload")
    ok = verify_envelope(env, {a.public.keyid: a.public})
    assert ok is not None and ok.payload == b"payload" and ok.keyids == (a.public.keyid,)
    assert verify_envelope(env, {b.public.keyid: b.public}) is None
    changed = dict(env, payload=base64.b64encode(b"payloaD").decode())
    assert verify_envelope(changed, {a.public.keyid: a.public}) is None
    retyped = dict(env, payloadType="text/html")
    assert verify_envelope(retyped, {a.public.keyid: a.public}) is None


def test_relabelled_keyid_does_not_make_a_signature_count_for_another_key(tmp_path):
    a = generate_key("a", tmp_path / "a")
    b = generate_key("b", tmp_path / "b")
    env = sign_envelope(load_private_key(a.keyfile), "t", b"p")
    env["signatures"][0]["keyid"] = b.public.keyid
    assert verify_envelope(env, {b.public.keyid: b.public}) is None
