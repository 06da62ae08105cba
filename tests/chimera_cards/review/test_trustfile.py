"""The team trust file: parsed strictly (a bad line is one usage error naming it), written back
byte-stable, and applied so the store's trust list equals the file; removing a key from the file
withdraws that reviewer's approvals."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from chimera_cards._cli.app import main
from chimera_cards._importer.pipeline import import_source
from chimera_cards._review.decisions import approve
from chimera_cards._review.trustfile import (
    TrustFile,
    TrustFileError,
    apply_trust_file,
    format_trust_file,
    parse_trust_file,
    read_trust_file,
    store_trust_file,
)
from chimera_cards._store.facade import Store
from chimera_cards._trust.keys import generate_key, load_private_key


@pytest.fixture
def keys(tmp_path):
    made = {n: generate_key(n, tmp_path / "keys" / f"{n}.key") for n in ("alice", "bob")}
    return made


def test_format_and_parse_round_trip(keys):
    trust = TrustFile(2, {n: g.public for n, g in keys.items()})
    text = format_trust_file(trust)
    assert parse_trust_file(text).keys == trust.keys
    assert parse_trust_file(text).threshold == 2
    assert format_trust_file(parse_trust_file(text)) == text


@pytest.mark.parametrize(
    "bad",
    [
        "threshold 0\n",
        "threshold two\n",
        "threshold 1\nthreshold 2\n",
        "alice\n",
        "alice ed25519 notbase64!!\n",
        "../evil ed25519 " + "A" * 43 + "=\n",
    ],
)
def test_a_malformed_line_is_a_usage_error_naming_it(bad):
    with pytest.raises(TrustFileError) as info:
        parse_trust_file("# comment\n" + bad, source="team.trust")
    assert info.value.exit_code == 2
    assert str(info.value).startswith("team.trust: line ")


def test_a_name_or_key_listed_twice_is_refused(keys):
    a = keys["alice"].public.text()
    with pytest.raises(TrustFileError, match="listed twice"):
        parse_trust_file(f"alice {a}\nalice {a}\n")
    with pytest.raises(TrustFileError, match="already listed as alice"):
        parse_trust_file(f"alice {a}\ncarol {a}\n")


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(TrustFileError) as info:
        read_trust_file(tmp_path / "nope.trust")
    assert info.value.exit_code == 2


def test_applying_the_file_activates_and_removing_a_key_withdraws_approvals(
    tmp_path, keys, card_factory
):
    card = card_factory("team-card")
    with Store(tmp_path / "cards.db") as store:
        (result,) = import_source(store, str(card), taint=True)
        assert result.status == "pending"
        apply_trust_file(store, TrustFile(1, {"alice": keys["alice"].public}))
        approve(store, "team-card", result.sha256, load_private_key(keys["alice"].keyfile))
        assert store.active("team-card") is not None
        # A second key and threshold 2: alice's approval alone no longer suffices.
        both = TrustFile(2, {n: g.public for n, g in keys.items()})
        apply_trust_file(store, both)
        assert store.active("team-card") is None
        apply_trust_file(store, TrustFile(1, {"alice": keys["alice"].public}))
        assert store.active("team-card") is not None
        assert store_trust_file(store).keys == {"alice": keys["alice"].public}
        apply_trust_file(store, TrustFile(1, {"bob": keys["bob"].public}))
        assert store.active("team-card") is None
        assert store_trust_file(store).keys == {"bob": keys["bob"].public}


def test_trust_export_then_sync_on_another_store(tmp_path, keys):
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    runner = CliRunner()
    pub = tmp_path / "keys" / "alice.pub"
    pub.write_text(keys["alice"].public.text() + "\n")
    assert (
        runner.invoke(main, ["trust", "add", "alice", str(pub), "--store", str(first)]).exit_code
        == 0
    )
    out = tmp_path / "team.trust"
    result = runner.invoke(main, ["trust", "export", str(out), "--store", str(first)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["trust", "sync", str(out), "--store", str(second)])
    assert result.exit_code == 0, result.output
    with Store(second) as store:
        assert store_trust_file(store).keys == {"alice": keys["alice"].public}
    out.write_text("alice ed25519 nope\n")
    result = runner.invoke(main, ["trust", "sync", str(out), "--store", str(second)])
    assert result.exit_code == 2
    assert (
        result.stderr.startswith(f"error: {out}: line 1:") and len(result.stderr.splitlines()) == 1
    )
