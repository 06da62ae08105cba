"""CLI for review and retrieval: keys, trust, review, approve, reject, retire, match.

Thin click skins over ``keys``, ``review`` and ``retrieve``; nothing here decides anything.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from chimera_cards._cli.common import (
    echo_json,
    file_option,
    folder_option,
    json_option,
    renamed,
    reports_errors,
    store_option,
)
from chimera_cards._cli.install import target_dir
from chimera_cards._cli.plain import open_store
from chimera_cards._install.available import available_skills, render_skills_xml
from chimera_cards._retrieve.matching import held_back, match
from chimera_cards._retrieve.render import MatchList, render_for_prompt
from chimera_cards._review.decisions import (
    Decision,
    add_trust,
    approve,
    reject,
    remove_trust,
    retire,
    set_threshold,
    trust_status,
)
from chimera_cards._review.trustfile import (
    apply_trust_file,
    read_trust_file,
    store_trust_file,
    write_trust_file,
)
from chimera_cards._review.view import expiring_approvals, format_view, review_queue, review_view

# The store commands' --store/--json options and opener, so both areas behave identically.
from chimera_cards._trust.keys import (
    find_private_key,
    generate_key,
    load_private_key,
    read_passphrase_file,
    read_public_key,
)
from chimera_cards.errors import UsageError

MAX_THRESHOLD = 10_000

passphrase_option = file_option(
    "--passphrase-file",
    help="File holding the key's passphrase.",
)


key_option = click.option(
    "--key",
    "keyfile",
    required=True,
    metavar="NAME|FILE",
    help="Your private key: the NAME given to `keys generate`, or the key file.",
)


def digest_option(help_text: str, required: bool = True):
    """``--digest``: a version's bundle digest, a unique prefix of 12+ hex digits of it, or the
    SKILL.md SHA-256 of a one-file bundle (``--sha256`` is its old spelling)."""

    def add(fn):
        fn = renamed("--sha256", "--digest")(fn)
        return click.option(
            "--digest",
            "digest",
            required=required,
            metavar="DIGEST",
            help=help_text,
        )(fn)

    return add


def _load_key(keyfile: str, passphrase_file: Path | None, store_path: Path | None = None):
    passphrase = read_passphrase_file(passphrase_file) if passphrase_file else None
    return load_private_key(find_private_key(keyfile, store_path), passphrase=passphrase)


def _print_changes(changes) -> None:
    for c in changes:
        click.echo(f"{c.name} {c.sha256[:12]}: {c.old} -> {c.new} ({c.reason})")


# --- keys -----------------------------------------------------------------------------------


@click.group("keys")
def keys_group() -> None:
    """Reviewer signing keys (Ed25519)."""


@keys_group.command("generate")
@click.argument("name")
@file_option(
    "-o",
    "--output",
    "keyfile",
    help="Private key file (default: $CHIMERA_CARDS_HOME/keys/NAME.key).",
)
@passphrase_option
@store_option
@json_option
@reports_errors
def keys_generate(name, keyfile, passphrase_file, store_path, as_json) -> None:
    """Make a key pair: KEYFILE (0600) and KEYFILE.pub; the new key joins the store's trust list."""
    passphrase = read_passphrase_file(passphrase_file) if passphrase_file else None
    with open_store(store_path, create=True) as store:
        gen = generate_key(name, keyfile, passphrase=passphrase)
        try:
            _, changes = add_trust(store, name, gen.public)
        except BaseException:
            # Leave nothing half-made: a key that could not be trusted is removed again.
            gen.keyfile.unlink(missing_ok=True)
            gen.pubfile.unlink(missing_ok=True)
            raise
    if as_json:
        echo_json({**gen.to_dict(), "trusted": True, "changes": [c.to_dict() for c in changes]})
        return
    click.echo(gen.public.text(name))
    click.echo(
        f"private key: {gen.keyfile} (0600); public key: {gen.pubfile}; key id {gen.public.keyid}",
        err=True,
    )
    click.echo(f"trusted in {store.path} as {name!r}", err=True)


@keys_group.command("list")
@store_option
@json_option
@reports_errors
def keys_list(store_path, as_json) -> None:
    """The private keys `--key NAME` finds here, and whether the store trusts each one.

    Looked for as keys/NAME.key beside the store in use, then beside the default store (where
    `keys generate` writes them).
    """
    from chimera_cards._store.location import default_store_path, existing_store_path
    from chimera_cards._trust.keys import list_private_keys

    # A named store must be there; without one, keys are listed even before the first import.
    path = existing_store_path(store_path) if store_path is not None else default_store_path()
    found = list_private_keys(store_path)
    trusted: dict[str, str] = {}
    if path.is_file():
        with open_store(path) as store:
            keys, _ = trust_status(store)
        trusted = {k.keyid: k.name for k in keys}
    rows = [
        {**k.to_dict(), "trusted_as": trusted.get(k.public.keyid) if k.public else None}
        for k in found
    ]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("no keys here (`chimera-cards keys generate NAME` makes one)", err=True)
    for row in rows:
        trust = f"trusted as {row['trusted_as']}" if row["trusted_as"] else "not trusted"
        click.echo(f"{row['name']}\t{row['keyid'] or '-'}\t{trust}\t{row['keyfile']}")


# --- trust ----------------------------------------------------------------------------------


@click.group("trust")
def trust_group() -> None:
    """The store's trust list of reviewer keys, and how many must approve (threshold)."""


@trust_group.command("add")
@click.argument("name")
@click.argument("pubkey")
@store_option
@json_option
@reports_errors
def trust_add(name, pubkey, store_path, as_json) -> None:
    """Trust PUBKEY (a .pub file or the key text) as NAME."""
    public = read_public_key(pubkey)
    with open_store(store_path, create=True) as store:
        key, changes = add_trust(store, name, public)
    if as_json:
        echo_json({**key.to_dict(), "changes": [c.to_dict() for c in changes]})
        return
    click.echo(f"trusted {name} ({key.keyid})")
    _print_changes(changes)


@trust_group.command("list")
@store_option
@json_option
@reports_errors
def trust_list(store_path, as_json) -> None:
    """The trusted keys and the threshold."""
    with open_store(store_path) as store:
        keys, threshold = trust_status(store)
    if as_json:
        echo_json({"threshold": threshold, "keys": [k.to_dict() for k in keys]})
        return
    click.echo(f"threshold: {threshold}")
    for k in keys:
        click.echo(f"{k.name}\t{k.keyid}\t{k.public.text()}")


@trust_group.command("remove")
@click.argument("name")
@store_option
@json_option
@reports_errors
def trust_remove(name, store_path, as_json) -> None:
    """Stop trusting NAME's key; its approvals no longer count."""
    with open_store(store_path) as store:
        key, changes = remove_trust(store, name)
    if as_json:
        echo_json({**key.to_dict(), "changes": [c.to_dict() for c in changes]})
        return
    click.echo(f"removed {name} ({key.keyid})")
    _print_changes(changes)


@trust_group.command("threshold")
# No team has more reviewers than this; a larger number is a typo (and overflows SQLite).
@click.argument("k", type=click.IntRange(min=1, max=MAX_THRESHOLD), required=False)
@store_option
@json_option
@reports_errors
def trust_threshold(k, store_path, as_json) -> None:
    """Show, or set to K, how many distinct trusted reviewers must approve a version."""
    with open_store(store_path, create=k is not None) as store:
        changes = set_threshold(store, k) if k is not None else []
        _, threshold = trust_status(store)
    if as_json:
        echo_json({"threshold": threshold, "changes": [c.to_dict() for c in changes]})
        return
    click.echo(f"threshold: {threshold}")
    _print_changes(changes)


@trust_group.command("sync")
@click.argument("trust_file", type=click.Path(dir_okay=False, path_type=Path))
@store_option
@json_option
@reports_errors
def trust_sync(trust_file, store_path, as_json) -> None:
    """Make the trust list and threshold equal to TRUST_FILE (a team's file kept in git)."""
    trust = read_trust_file(trust_file)
    with open_store(store_path, create=True) as store:
        changes = apply_trust_file(store, trust)
    if as_json:
        echo_json({**trust.to_dict(), "changes": [c.to_dict() for c in changes]})
        return
    click.echo(
        f"trust list now: {', '.join(sorted(trust.keys)) or 'empty'}; threshold {trust.threshold}"
    )
    _print_changes(changes)


@trust_group.command("export")
@click.argument("trust_file", type=click.Path(dir_okay=False, path_type=Path))
@store_option
@json_option
@reports_errors
def trust_export(trust_file, store_path, as_json) -> None:
    """Write the trust list and threshold to TRUST_FILE, for a team's git repository."""
    with open_store(store_path) as store:
        trust = store_trust_file(store)
    write_trust_file(trust_file, trust)
    if as_json:
        echo_json({"path": str(trust_file), **trust.to_dict()})
    else:
        click.echo(f"wrote {len(trust.keys)} key(s), threshold {trust.threshold}, to {trust_file}")


# --- review / approve / reject / retire ------------------------------------------------------


@click.command("review")
@click.argument("name", required=False)
@digest_option(
    "Review this version (its digest or 12+ digits of it; default: the newest pending).",
    required=False,
)
@click.option(
    "--files",
    "all_files",
    is_flag=True,
    help="Also print every file in full (an update shows "
    "the diff against the last approved version instead).",
)
@click.option(
    "--expiring",
    default=None,
    metavar="DURATION",
    help="With no NAME: also list active versions whose approvals expire within DURATION "
    "(default 14d; with --json, the output becomes {pending, expiring}).",
)
@store_option
@json_option
@reports_errors
def review_cmd(name, digest, all_files, expiring, store_path, as_json) -> None:
    """The queue of pending versions, or (NAME) everything needed to decide on one."""
    if digest and name is None:
        raise UsageError("--digest picks a version of NAME; give the card's NAME too")
    if expiring is not None and name is not None:
        raise UsageError("--expiring lists the whole store; give no NAME")
    from chimera_cards._trust.freshness import parse_duration

    within = parse_duration(expiring or "14d")
    with open_store(store_path) as store:
        if name is None:
            queue = review_queue(store)
            soon = expiring_approvals(store, within)
            for line in queue.skipped:
                click.echo(f"warning: {line}", err=True)
            if as_json:
                pending = [q.to_dict() for q in queue]
                if expiring is None:
                    echo_json(pending)
                else:
                    echo_json({"pending": pending, "expiring": [e.to_dict() for e in soon]})
                return
            for q in queue:
                why = f"  ({q.reason})" if q.reason else ""
                mark = f"  [{q.downgrade}]" if q.downgrade else ""
                click.echo(
                    f"{q.name}\t{q.sha256}\t{q.provenance}\t{q.approvals}/{q.threshold}\t"
                    f"{q.origin}{why}{mark}"
                )
            for e in soon:
                click.echo(e.line())
            if not queue and not soon:
                click.echo("nothing pending", err=True)
            return
        view = review_view(store, name, digest)
    if as_json:
        echo_json(view.to_dict())
        return
    screen = format_view(view, files=all_files)
    if sys.stdin.isatty() and sys.stdout.isatty():
        click.echo_via_pager(screen + "\n")  # $PAGER, else less/more, as git does
    else:
        click.echo(screen)


def _decision_output(d: Decision, as_json: bool) -> None:
    if as_json:
        echo_json(d.to_dict())
        return
    verb = "approved" if d.decision == "approve" else "rejected"
    note = "" if d.recorded else " (already recorded)"
    who = f"{d.reviewer_name} ({d.reviewer})" if d.reviewer_name else d.reviewer
    click.echo(f"{verb} {d.name} {d.sha256[:12]} as {who}{note}: status {d.status}")
    if d.decision == "approve" and d.status != "active":
        v = d.verdict
        click.echo(f"{len(v['approvers'])} of {v['threshold']} required trusted approvals so far")
    _print_changes([c for c in d.changes if not (c.sha256 == d.sha256 and c.new == d.status)])


@click.command("approve")
@click.argument("name")
@key_option
@digest_option(
    "The version you reviewed: its bundle digest as `review` prints it (12+ digits do), or "
    "the SKILL.md SHA-256 of a one-file skill."
)
@click.option("--note", default="", help="A note kept in the signed statement.")
@click.option(
    "--accept",
    "accept",
    multiple=True,
    metavar="FINDING-ID",
    help="Accept this error finding as read (repeat for each); kept in the signed statement.",
)
@click.option(
    "--allow-downgrade",
    is_flag=True,
    help="The version is older than what the name has been: move the name back to it "
    "(the approval says so, signed).",
)
@click.option(
    "--expires",
    default=None,
    metavar="DURATION",
    help="The approval stops counting after this long (90d, 12h, 2w; `never`). "
    "Default: the trust file's `expires`, else never.",
)
@passphrase_option
@store_option
@json_option
@reports_errors
def approve_cmd(
    name,
    keyfile,
    digest,
    note,
    accept,
    allow_downgrade,
    expires,
    passphrase_file,
    store_path,
    as_json,
) -> None:
    """Sign an approval of NAME's version with this digest."""
    until = _expiry(expires)
    private = _load_key(keyfile, passphrase_file, store_path)
    with open_store(store_path) as store:
        d = approve(
            store,
            name,
            digest,
            private,
            note,
            accept=accept,
            allow_downgrade=allow_downgrade,
            expires=until,
        )
    _decision_output(d, as_json)


def _expiry(text: str | None) -> str | None:
    """--expires as approve takes it: None (the store's default), "" (never) or a time."""
    if text is None:
        return None
    if text.strip() == "never":
        return ""
    from chimera_cards._trust.freshness import expiry_after, parse_duration

    return expiry_after(parse_duration(text))


@click.command("reject")
@click.argument("name")
@key_option
@digest_option("The version you reject: its bundle digest (12+ digits do), as for approve.")
@click.option("--reason", required=True, help="Why (kept in the signed statement).")
@passphrase_option
@store_option
@json_option
@reports_errors
def reject_cmd(name, keyfile, digest, reason, passphrase_file, store_path, as_json) -> None:
    """Sign a rejection: the version (and any later import of the same bytes) stays rejected."""
    private = _load_key(keyfile, passphrase_file, store_path)
    with open_store(store_path) as store:
        d = reject(store, name, digest, private, reason)
    _decision_output(d, as_json)


@click.command("retire")
@click.argument("name")
@digest_option("Retire this version (default: the active one).", required=False)
@click.option("--reason", default="", help="Why it is withdrawn.")
@store_option
@json_option
@reports_errors
def retire_cmd(name, digest, reason, store_path, as_json) -> None:
    """Withdraw a version from use. Not a security verdict (that is reject)."""
    with open_store(store_path) as store:
        change = retire(store, name, digest, reason)
    if as_json:
        echo_json(change.to_dict())
        return
    click.echo(f"retired {change.name} {change.sha256[:12]} (was {change.old})")


# --- match -----------------------------------------------------------------------------------


# Why an approved match is not offered from the folder, by its check state.
_ABSENT_NOTES = (
    ("not installed", "approved but not installed", "see `chimera-cards install`"),
    ("missing", "recorded as installed but its folder is gone", "see `chimera-cards sync`"),
    ("modified", "installed but modified since it was approved", "see `chimera-cards check`"),
    ("revoked", "installed bytes are no longer approved", "see `chimera-cards check`"),
    ("unknown", "installed bytes are no stored bundle", "see `chimera-cards check`"),
)


def _absent_notes(directory, absent: list[str], states: dict[str, str]) -> None:
    """One ``note:`` line per reason an approved match is left out of the skills-xml block."""
    told = set()
    for state, text, hint in _ABSENT_NOTES:
        names = [n for n in absent if states.get(n) == state]
        told.update(names)
        if names:
            click.echo(f"note: {text} in {directory}: {', '.join(names)} ({hint})", err=True)
    rest = [n for n in absent if n not in told]
    if rest:  # a folder check calls ok whose SKILL.md could not be read
        click.echo(f"note: not offered from {directory}: {', '.join(rest)}", err=True)


@click.command("match")
@click.argument("query", nargs=-1, required=True)
@click.option(
    "-k",
    "k",
    type=click.IntRange(min=1, max=100),
    default=5,
    show_default=True,
    help="At most this many cards.",
)
@click.option(
    "--level",
    type=click.IntRange(1, 2),
    default=2,
    show_default=True,
    help="1: name, description, triggers; 2: + the body.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["cards", "skills-xml"]),
    default="cards",
    show_default=True,
    help="cards: <skill-card> text for the reference loop; skills-xml: the Agent Skills "
    "<available_skills> block pointing at the installed SKILL.md (needs --to or --agent).",
)
@folder_option(
    "--to",
    help="With skills-xml: the skills folder they are installed in.",
)
@click.option("--agent", default=None, help="With skills-xml: the agent they are installed for.")
@click.option("--global", "global_", is_flag=True, help="With --agent: its user-wide folder.")
@store_option
@json_option
@reports_errors
def match_cmd(query, k, level, fmt, to, agent, global_, store_path, as_json) -> None:
    """Approved cards for QUERY (one or more words), ready for a prompt. Pending, rejected,
    retired or tampered cards are never shown (a pending one that would have matched is named on
    stderr). Exit 1 when nothing matches, like grep."""
    if fmt != "skills-xml" and (to is not None or agent is not None or global_):
        raise UsageError("--to, --agent and --global go with --format skills-xml")
    directory = target_dir(to, agent, global_) if fmt == "skills-xml" else None
    text = " ".join(query)
    with open_store(store_path) as store:
        matches = match(store, text, k=k, level=level)
        shown = {m.name for m in matches}
        waiting = [n for n in held_back(store, text, k) if n not in shown]
        if directory is not None:
            skills, absent = available_skills(store, [m.name for m in matches], directory)
            from chimera_cards._runtime.to_prompt import installed_states

            states = installed_states(store, directory, absent)
    for line in matches.skipped:
        click.echo(f"warning: {line}", err=True)
    pending = f"pending review, not shown: {', '.join(waiting)}" if waiting else ""
    if waiting and matches:
        click.echo(f"note: {pending} (see `chimera-cards review`)", err=True)
    if directory is not None:
        _absent_notes(directory, absent, states)
        matches = MatchList(m for m in matches if m.name not in absent)
    if as_json:
        payload: dict[str, object] = {"matches": [m.to_dict() for m in matches]}
        if directory is not None:
            payload["skills"] = [s.to_dict() for s in skills]
            payload["prompt"] = render_skills_xml(skills)
        else:
            payload["prompt"] = render_for_prompt(matches)
        echo_json(payload)
    elif matches and directory is not None:
        click.echo(render_skills_xml(skills))
    elif matches:
        click.echo(render_for_prompt(matches))
    else:
        click.echo("no approved card matches" + (f"; {pending}" if pending else ""), err=True)
    if not matches:
        raise SystemExit(1)


COMMANDS = [keys_group, trust_group, review_cmd, approve_cmd, reject_cmd, retire_cmd, match_cmd]
