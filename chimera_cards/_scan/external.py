"""Other scanners as plug-ins: run any command that writes SARIF over a skill folder.

A scanner is a command line with ``{dir}`` (the folder to scan) and, if it writes its log to a
file rather than standard output, ``{output}`` (a path in a private temporary folder). Its SARIF
results become findings named ``SCANNER/RULE``, their severity mapped from the SARIF level
(configurable per scanner). The run fails closed: a scanner that cannot be started, runs past
its timeout, or leaves no readable SARIF log is one error finding (``SCANNER/scanner-failed``),
so the version it was asked to vet is held like one with any other error.

Scanners are configured, by name, in a YAML or JSON file (``scanners:`` mapping names to
settings) or in the store's settings; a few well-known tools have presets.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from chimera_cards._bundles.bundle import Bundle
from chimera_cards._scan.findings import ERROR, SEVERITIES, Finding
from chimera_cards._scan.sarif import DEFAULT_LEVELS, MAX_SARIF_BYTES, SarifError, read_sarif
from chimera_cards._store.facade import Store
from chimera_cards._store.scanners import SCANNER_SETTING_PREFIX
from chimera_cards._store.verify import Problem
from chimera_cards.errors import ChimeraError

DEFAULT_TIMEOUT = 300.0
FAILED_RULE = "scanner-failed"
# How much of a failing scanner's standard error the reason quotes.
STDERR_QUOTE = 400


class ScannerConfigError(ChimeraError):
    """A scanner's configuration that cannot be used (no {dir}, a bad level, bad YAML)."""

    exit_code = 2


class UnknownScannerError(ChimeraError):
    """A scanner name that no configuration file, store setting or preset defines."""

    exit_code = 2


@dataclass(frozen=True)
class ScannerConfig:
    """How to run one scanner and read what it says."""

    name: str
    command: tuple[str, ...]  # argv, with {dir} and optionally {output}
    timeout: float = DEFAULT_TIMEOUT
    levels: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_LEVELS))
    description: str = ""
    on_import: bool = False  # configured in a store: every import into it runs this scanner

    @property
    def writes_file(self) -> bool:
        """Whether the log goes to ``{output}`` (else the scanner prints it)."""
        return any("{output}" in part for part in self.command)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "command": list(self.command),
            "timeout": self.timeout,
            "levels": dict(self.levels),
            "description": self.description,
            "on_import": self.on_import,
        }


# Offline and static: cisco-ai-skill-scanner's default analyzers need no key and no network
# (its LLM, VirusTotal and cloud analyzers run only when asked for). Its SARIF levels follow its
# severities: CRITICAL/HIGH -> error, MEDIUM -> warning, LOW/INFO -> note.
PRESETS: dict[str, ScannerConfig] = {
    "cisco": ScannerConfig(
        "cisco",
        ("skill-scanner", "scan", "{dir}", "--format", "sarif", "--output-sarif", "{output}"),
        timeout=DEFAULT_TIMEOUT,
        description="cisco-ai-skill-scanner, static analyzers only (pip install "
        "'chimera-cards[scanners]')",
    ),
}
_ALIASES = {"cisco-ai-skill-scanner": "cisco", "skill-scanner": "cisco"}


def _check_name(name: object) -> str:
    # ASCII only: the name prefixes finding ids a reviewer types (`approve --accept`).
    if (
        not isinstance(name, str)
        or not name.isascii()
        or not name[:1].isalnum()
        or not all(c.isalnum() or c in "-_." for c in name)
    ):
        raise ScannerConfigError(
            f"scanner name {name!r}: a letter or digit, then letters, digits, '-', '_' and '.'"
        )
    return name


def parse_scanner(name: str, settings: Mapping | str | list) -> ScannerConfig:
    """A scanner's configuration from its settings.

    Args:
        name: the scanner's name (its findings are named ``NAME/RULE``).
        settings: a command (a string, split as a shell would, or a list), or a mapping with
            ``command`` and optionally ``timeout`` (seconds), ``levels`` (SARIF level ->
            error|warning|info; levels not named keep their default), ``description``,
            ``on_import`` (in a store's settings: every import into it runs the scanner), or
            ``preset`` (start from a preset's settings).
    Returns:
        The configuration.
    Raises:
        ScannerConfigError: no command, no ``{dir}`` in it, a bad timeout or level.
    """
    _check_name(name)
    if isinstance(settings, (str, list)):
        settings = {"command": settings}
    if not isinstance(settings, Mapping):
        raise ScannerConfigError(f"scanner {name}: settings must be a command or a mapping")
    base: ScannerConfig | None = None
    if "preset" in settings:
        preset = _ALIASES.get(str(settings["preset"]), str(settings["preset"]))
        if preset not in PRESETS:
            raise ScannerConfigError(
                f"scanner {name}: no preset {settings['preset']!r} (presets: "
                + ", ".join(sorted(PRESETS))
                + ")"
            )
        base = PRESETS[preset]
    command = settings.get("command", list(base.command) if base else None)
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as exc:
            raise ScannerConfigError(f"scanner {name}: command: {exc}") from None
    if not isinstance(command, list) or not command or not all(isinstance(c, str) for c in command):
        raise ScannerConfigError(f"scanner {name}: needs a command")
    if not any("{dir}" in part for part in command):
        raise ScannerConfigError(f"scanner {name}: the command must name the folder as {{dir}}")
    timeout = settings.get("timeout", base.timeout if base else DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ScannerConfigError(f"scanner {name}: timeout must be a positive number of seconds")
    levels = dict(base.levels if base else DEFAULT_LEVELS)
    given = settings.get("levels") or {}
    if not isinstance(given, Mapping):
        raise ScannerConfigError(f"scanner {name}: levels must map SARIF levels to severities")
    for level, severity in given.items():
        if level not in DEFAULT_LEVELS or severity not in SEVERITIES:
            raise ScannerConfigError(
                f"scanner {name}: levels: {level!r} -> {severity!r} (SARIF levels "
                f"{', '.join(DEFAULT_LEVELS)} map to {', '.join(SEVERITIES)})"
            )
        levels[level] = severity
    description = str(settings.get("description", base.description if base else ""))
    on_import = settings.get("on_import", False)
    if not isinstance(on_import, bool):
        raise ScannerConfigError(f"scanner {name}: on_import must be true or false")
    return ScannerConfig(name, tuple(command), float(timeout), levels, description, on_import)


def read_scanner_file(path: str | os.PathLike) -> dict[str, ScannerConfig]:
    """The scanners a configuration file defines (YAML or JSON: ``scanners: {NAME: ...}``).

    Args:
        path: the file.
    Returns:
        Configuration by name.
    Raises:
        ScannerConfigError: unreadable, not YAML, no ``scanners`` mapping, or a bad entry.
    """
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ScannerConfigError(f"{path}: cannot read ({exc.strerror})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ScannerConfigError(f"{path}: not YAML or JSON ({exc})") from None
    scanners = data.get("scanners") if isinstance(data, dict) else None
    if not isinstance(scanners, dict):
        raise ScannerConfigError(f"{path}: expected a 'scanners:' mapping of names to settings")
    return {str(n): parse_scanner(str(n), s) for n, s in scanners.items()}


@dataclass
class ScannerRun:
    """One scanner's verdict on one folder."""

    scanner: str
    status: str  # "ok" | "failed"
    findings: list[Finding]
    tool: str | None = None
    tool_version: str | None = None
    reason: str = ""  # why it failed
    exit_code: int | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def holds(self) -> bool:
        """Whether this run keeps a version pending: it failed, or reported an error."""
        return any(f.severity == ERROR for f in self.findings)

    def to_dict(self) -> dict:
        return {
            "scanner": self.scanner,
            "status": self.status,
            "tool": self.tool,
            "tool_version": self.tool_version,
            "reason": self.reason,
            "exit_code": self.exit_code,
            "seconds": round(self.seconds, 3),
            "findings": [{**f.to_dict(), "scanner": self.scanner} for f in self.findings],
        }


def _executable(argv0: str) -> str | None:
    if os.sep in argv0 or (os.altsep and os.altsep in argv0):
        return argv0 if os.access(argv0, os.X_OK) else None
    # A scanner installed with this package (the `scanners` extra) sits beside its Python even
    # when that environment's bin folder is not on PATH.
    beside = Path(sys.executable).parent
    path = os.pathsep.join([str(beside), os.environ.get("PATH", os.defpath)])
    return shutil.which(argv0, path=path)


def _failed(config: ScannerConfig, reason: str, start: float, code: int | None = None):
    finding = Finding(f"{config.name}/{FAILED_RULE}", ERROR, f"{config.name}: {reason}", None)
    return ScannerRun(
        config.name,
        "failed",
        [finding],
        reason=reason,
        exit_code=code,
        seconds=time.monotonic() - start,
    )


def _stop(proc: subprocess.Popen) -> None:
    # The scanner may have started children of its own: end its whole process group.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - STDERR_QUOTE))
            text = fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""
    return " ".join(text.split())


def run_scanner(config: ScannerConfig, directory: str | os.PathLike) -> ScannerRun:
    """Run a scanner over a folder and read its SARIF log.

    Args:
        config: the scanner.
        directory: the folder to scan (the scanner runs inside it, so relative paths in its log
            are relative to it).
    Returns:
        The run: ``ok`` with a finding per SARIF result, or ``failed`` (not found, timed out,
        no or unreadable log) with one error finding saying why.
    """
    start = time.monotonic()
    folder = Path(directory).resolve()
    exe = _executable(config.command[0])
    if exe is None:
        return _failed(config, f"command not found: {config.command[0]}", start)
    with tempfile.TemporaryDirectory(prefix="chimera-scanner-") as tmp:
        output = Path(tmp) / "results.sarif"
        out_path = Path(tmp) / "stdout"
        err_path = Path(tmp) / "stderr"
        argv = [exe] + [
            part.replace("{dir}", str(folder)).replace("{output}", str(output))
            for part in config.command[1:]
        ]
        argv[0] = exe
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            try:
                proc = subprocess.Popen(
                    argv,
                    cwd=folder,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                )
            except OSError as exc:
                return _failed(config, f"cannot start {config.command[0]} ({exc.strerror})", start)
            try:
                code = proc.wait(timeout=config.timeout)
            except subprocess.TimeoutExpired:
                _stop(proc)
                return _failed(config, f"timed out after {config.timeout:g} s", start)
            except BaseException:
                _stop(proc)
                raise
        log_path = output if config.writes_file else out_path
        try:
            size = log_path.stat().st_size
        except OSError:
            why = _tail(err_path)
            return _failed(
                config, f"exited {code} and wrote no SARIF log" + (f": {why}" if why else ""),
                start, code,
            )  # fmt: skip
        if size > MAX_SARIF_BYTES:
            return _failed(config, f"SARIF log over {MAX_SARIF_BYTES} bytes", start, code)
        try:
            log = read_sarif(log_path.read_bytes(), base=folder)
        except SarifError as exc:
            why = _tail(err_path)
            return _failed(
                config, f"exited {code}; unreadable SARIF ({exc})" + (f": {why}" if why else ""),
                start, code,
            )  # fmt: skip
    findings = []
    for r in log.results:
        severity = config.levels.get(r.level, DEFAULT_LEVELS[r.level])
        message = r.message
        if r.suppressed:
            # The tool's own policy suppressed it: shown, but it holds nothing.
            severity, message = "info", f"(suppressed by {config.name}) {message}"
        findings.append(Finding(f"{config.name}/{r.rule}", severity, message, r.line, r.path))
    return ScannerRun(
        config.name, "ok", findings, log.tool, log.version, "", code, time.monotonic() - start
    )


def _write_bundle(bundle: Bundle, folder: Path) -> None:
    for f in bundle.files:
        rel = PurePosixPath(f.path)
        if rel.is_absolute() or ".." in rel.parts:
            raise ScannerConfigError(f"bundle path {f.path!r} leaves its folder")
        target = folder.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(bundle.contents[f.path])
        if f.executable:
            target.chmod(0o755)


def scan_bundle_with(
    configs: Iterable[ScannerConfig], bundle: Bundle, *, dirname: str
) -> list[ScannerRun]:
    """Run scanners over a bundle's exact files (what the store keeps), in a private folder.

    Args:
        configs: the scanners, run one after another.
        bundle: the bundle.
        dirname: the folder name the skill is written under (its name, so a scanner that checks
            name against folder sees them agree).
    Returns:
        One run per scanner, in order.
    """
    configs = list(configs)
    if not configs:
        return []
    with tempfile.TemporaryDirectory(prefix="chimera-scan-") as tmp:
        folder = Path(tmp) / (dirname or "skill")
        folder.mkdir()
        _write_bundle(bundle, folder)
        return [run_scanner(c, folder) for c in configs]


def setting_key(name: str) -> str:
    """The store setting that holds scanner NAME's configuration."""
    return SCANNER_SETTING_PREFIX + _check_name(name)


def config_from_setting(name: str, value: str) -> ScannerConfig:
    """A scanner's configuration from its store setting (JSON of its settings)."""
    import json

    try:
        settings = json.loads(value)
    except ValueError as exc:
        raise ScannerConfigError(f"scanner {name}: stored setting is not JSON ({exc})") from None
    return parse_scanner(name, settings)


def resolve_scanner(
    name: str,
    *,
    configured: Mapping[str, ScannerConfig] | None = None,
    stored: Mapping[str, str] | None = None,
) -> ScannerConfig:
    """The scanner a name means: from a configuration file first, then the store's settings,
    then the presets.

    Args:
        name: the scanner's name (a preset's alias also works: ``cisco-ai-skill-scanner``).
        configured: scanners read from a configuration file.
        stored: the store's scanner settings, by name (JSON text).
    Returns:
        The configuration.
    Raises:
        UnknownScannerError: nothing defines the name.
        ScannerConfigError: its configuration is unusable.
    """
    if configured and name in configured:
        return configured[name]
    if stored and name in stored:
        return config_from_setting(name, stored[name])
    preset = _ALIASES.get(name, name)
    if preset in PRESETS:
        return PRESETS[preset]
    known = sorted({*(configured or {}), *(stored or {}), *PRESETS})
    raise UnknownScannerError(
        f"no scanner named {name!r} (known: {', '.join(known)}; configure one with "
        "`chimera-cards scanner set NAME --command '... {dir} ...'`)"
    )


def save_scanner(store: Store, config: ScannerConfig) -> None:
    """Keep a scanner's configuration in the store's settings, and say so in the audit log.

    Args:
        store: the open store.
        config: the scanner (its name is the setting's).
    """
    import json

    settings = {k: v for k, v in config.to_dict().items() if k != "name"}
    with store.transaction() as conn:
        store.set_setting(setting_key(config.name), json.dumps(settings, sort_keys=True))
        store.append_audit(conn, "scanner-set", None, None, {"scanner": config.name, **settings})


def remove_scanner(store: Store, name: str) -> bool:
    """Forget a scanner configured in the store (audited). False if it was not configured."""
    with store.transaction() as conn:
        gone = store.delete_setting(setting_key(name))
        if gone:
            store.append_audit(conn, "scanner-remove", None, None, {"scanner": name})
    return gone


def configured_scanners(
    store: Store | None, config_file: str | os.PathLike | None = None
) -> list[tuple[ScannerConfig, str]]:
    """Every scanner a name can mean here, each with where it is defined ("file", "store",
    "preset"); a name defined in several places appears once, as ``resolve_scanner`` finds it."""
    found: dict[str, tuple[ScannerConfig, str]] = {}
    for name, config in PRESETS.items():
        found[name] = (config, "preset")
    for name, value in (store.scanner_settings() if store is not None else {}).items():
        found[name] = (config_from_setting(name, value), "store")
    if config_file is not None:
        for name, config in read_scanner_file(config_file).items():
            found[name] = (config, "file")
    return [found[n] for n in sorted(found)]


def import_scanners(store: Store, named: Sequence[ScannerConfig] = ()) -> list[ScannerConfig]:
    """What an import into this store runs: the scanners named for it, then every scanner the
    store configures ``on_import`` (each once, by name), so ``update`` and a plain ``import``
    are vetted as a team decided once.

    Raises:
        ScannerConfigError: a stored scanner setting is unusable (nothing is imported unvetted).
    """
    chosen = {c.name: c for c in named}
    for name, value in store.scanner_settings().items():
        config = config_from_setting(name, value)
        if config.on_import and name not in chosen:
            chosen[name] = config
    return list(chosen.values())


def resolve_scanners(
    names: Iterable[str],
    *,
    store: Store | None = None,
    config_file: str | os.PathLike | None = None,
) -> list[ScannerConfig]:
    """The scanners some names mean (see ``resolve_scanner``), in order, each once.

    Args:
        names: scanner names.
        store: the store whose settings configure scanners (None: none configured there).
        config_file: a scanners file (YAML or JSON).
    Returns:
        The configurations.
    Raises:
        UnknownScannerError, ScannerConfigError: a name nothing defines, or a bad definition.
    """
    configured = read_scanner_file(config_file) if config_file is not None else None
    stored = store.scanner_settings() if store is not None else None
    return [resolve_scanner(n, configured=configured, stored=stored) for n in dict.fromkeys(names)]


def verify_check(store: Store, conn: sqlite3.Connection) -> list[Problem]:
    """``verify``'s check of the scanner results (registered in ``EXTRA_VERIFY_CHECKS``): every
    stored run must be the one the audit log recorded (its status and the ids of its errors and
    warnings), so a row deleted or edited to unblock an approval is named.

    Returns:
        One Problem per run the log never recorded (``scanner-unrecorded``), recorded but gone
        (``scanner-missing``) or changed (``scanner-mismatch``).
    """
    recorded: dict[tuple, dict] = {}
    for entry in store.audit_entries():
        if entry.event == "scan" and isinstance(entry.detail, dict):
            recorded[(entry.name, entry.sha256, str(entry.detail.get("scanner")))] = entry.detail
    problems: list[Problem] = []
    seen: set[tuple] = set()
    for name, sha, scanner, status, findings in store.all_scanner_results():
        key = (name, sha, scanner)
        seen.add(key)
        label = f"{name} {sha[:12]}: scanner {scanner}"
        detail = recorded.get(key)
        if detail is None:
            problems.append(
                Problem(
                    "scanner-unrecorded", f"{label}: a run the audit log never recorded", name, sha
                )
            )
            continue
        ids = sorted(
            str(f.get("id")) for f in findings if f.get("severity") in ("error", "warning")
        )
        if detail.get("status") != status or sorted(map(str, detail.get("findings") or [])) != ids:
            problems.append(
                Problem(
                    "scanner-mismatch",
                    f"{label}: stored {status} with {len(ids)} error/warning finding(s), the audit "
                    f"log recorded {detail.get('status')} with {len(detail.get('findings') or [])}",
                    name,
                    sha,
                )
            )
    for name, sha, scanner in sorted(recorded.keys() - seen, key=str):
        problems.append(
            Problem(
                "scanner-missing",
                f"{name} {str(sha)[:12]}: scanner {scanner}: the audit log recorded a run that is "
                "not stored",
                name,
                sha,
            )
        )
    return problems
