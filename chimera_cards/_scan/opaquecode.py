"""Code a skill ships in a form no reviewer reads: pickles (loading one calls whatever callables
it names, ``os.system`` as readily as a model's class) and compiled Python (``.pyc`` run
without its source). Neither is run or unmarshalled here: a pickle's opcodes are listed with
``pickletools`` (which executes nothing), and bytecode is read for the strings it carries.
"""

from __future__ import annotations

import io
import pickletools
import re

from chimera_cards._scan.findings import ERROR, Finding
from chimera_cards._scan.sensitive import credential_in, host_of

PICKLE_RULE = "pickle-code"
_PICKLE_SUFFIXES = (".pkl", ".pickle", ".pck", ".joblib", ".dill", ".sav")
# Modules a pickle has no business naming: a loaded model names its library's classes, not
# ways to run commands, reach the network or load more code.
_RUNNING_MODULES = frozenset(
    {
        "os", "posix", "nt", "subprocess", "pty", "shutil", "socket", "ssl", "urllib",
        "http", "requests", "httpx", "aiohttp", "runpy", "importlib", "imp", "code", "codeop",
        "ctypes", "cffi", "marshal", "pickle", "_pickle", "dill", "webbrowser", "commands",
        "popen2", "asyncio", "multiprocessing", "ftplib", "smtplib", "telnetlib", "sys",
    }
)  # fmt: skip
_RUNNING_BUILTINS = frozenset(
    {"eval", "exec", "compile", "open", "__import__", "getattr", "setattr", "globals",
     "breakpoint", "input", "vars", "locals", "apply", "execfile"}
)  # fmt: skip
_STRING_OPS = frozenset(
    {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "STRING", "BINSTRING",
     "SHORT_BINSTRING"}
)  # fmt: skip
MAX_OPS = 200_000


def is_pickle_path(path: str) -> bool:
    """Whether a file's name says it is a pickle (joblib and dill write pickles too)."""
    return path.lower().endswith(_PICKLE_SUFFIXES)


def pickle_findings(path: str, data: bytes) -> list[Finding]:
    """An error for each callable a pickle would import that runs commands or code.

    Args:
        path: the file's path (a ``.pkl`` or a binary whose first byte is a pickle protocol).
        data: its bytes.
    Returns:
        ``pickle-code`` errors, one per callable named, or [] for anything not a pickle.
    """
    if not (is_pickle_path(path) or (data[:1] == b"\x80" and data[1:2] in b"\x02\x03\x04\x05")):
        return []
    named: list[tuple[str, str]] = []
    strings: list[str] = []
    try:
        for count, (op, arg, _pos) in enumerate(pickletools.genops(io.BytesIO(data))):
            if count > MAX_OPS:
                break
            if op.name in _STRING_OPS and isinstance(arg, str | bytes):
                strings.append(arg if isinstance(arg, str) else arg.decode("latin-1"))
            elif op.name in ("GLOBAL", "INST") and isinstance(arg, str):
                module, _, name = arg.partition(" ")
                named.append((module, name))
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                named.append((strings[-2], strings[-1]))
            if op.name == "STOP":
                break
    except Exception:  # a malformed pickle: what was read before it stands
        pass
    out: list[Finding] = []
    for module, name in dict.fromkeys(named):
        top = module.split(".", 1)[0]
        if top in _RUNNING_MODULES or (
            top in ("builtins", "__builtin__") and name in _RUNNING_BUILTINS
        ):
            out.append(
                Finding(
                    PICKLE_RULE,
                    ERROR,
                    f"a pickle that calls {module}.{name} when it is loaded",
                    None,
                    path,
                )
            )
    return out


def is_bytecode(path: str, data: bytes) -> bool:
    """Whether a file is compiled Python: a ``.pyc``/``.pyo`` name or a magic number (two bytes,
    then ``\\r\\n``) followed by the flags word."""
    if path.lower().endswith((".pyc", ".pyo")):
        return True
    return len(data) > 16 and data[2:4] == b"\r\n" and data[4:8] in (b"\0\0\0\0", b"\1\0\0\0")


_BYTES_STRING_RE = re.compile(rb"[\x20-\x7e]{3,}")
_SEND_NAMES = frozenset(
    {"urlopen", "Request", "post", "put", "request", "send", "sendall", "connect", "upload",
     "urlretrieve", "getaddrinfo", "gethostbyname", "create_connection", "HTTPSConnection",
     "HTTPConnection", "curl", "wget"}
)  # fmt: skip
_URL_RE = re.compile(r"https?://[^\s'\"]+")


def bytecode_findings(path: str, data: bytes) -> list[Finding]:
    """Compiled code read by its strings, as code of a language without a parser is: a
    credential store it names and a send with an address beside it is an exfiltration.

    Args:
        path: the file's path.
        data: its bytes (compiled Python).
    Returns:
        A ``secret-exfiltration`` error, or [].
    """
    strings = [m.group(0).decode("ascii") for m in _BYTES_STRING_RE.finditer(data)]
    found = next((c for s in strings if (c := credential_in(s))), None)
    if found is None:
        return []
    words = {w for s in strings for w in re.findall(r"[A-Za-z_]\w*", s)}
    url = next((m.group(0) for s in strings if (m := _URL_RE.search(s))), None)
    if url is None or not words & _SEND_NAMES:
        return []
    host = host_of(url) or "an address"
    return [
        Finding(
            "secret-exfiltration",
            ERROR,
            f"compiled code shipped without review reads {found} and sends to {host} "
            "(its strings: the source is what a reviewer needs)",
            None,
            path,
        )
    ]
