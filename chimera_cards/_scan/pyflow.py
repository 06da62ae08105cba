"""Python read with ``ast`` for where data goes: secrets and credential stores followed through
assignments, loops, containers, calls and functions to network sends, the clipboard and files
outside the skill; decoded or downloaded data followed to ``exec``.

Values are folded where they are written out (``"~/.s" + "sh"``, ``"".join([...])``,
``base64.b64decode("…")``, ``getattr(os, "sys" + "tem")``), so obfuscation counts as what it
hides. Functions are summarised (what they return, which parameters they send) by name across
a bundle's files: collecting, encoding and sending in three files is one flow. Shell run from
Python goes through :mod:`chimera_cards._scan.shell` with the Python values it is given.
"""

from __future__ import annotations

import ast
import re

from chimera_cards._scan.buildfiles import WRITTEN_INDEX_KINDS, build_kind
from chimera_cards._scan.commands import path_persistence
from chimera_cards._scan.pyfacts import PyFacts, Summaries, _PyFolding
from chimera_cards._scan.pyreceivers import Definitions
from chimera_cards._scan.pyshapes import (
    DECODERS,
    LOG_CALLS,
    LOG_HANDLERS,
    built_query,
    built_sql,
    ciphered,
    endless,
    hidden_or_scratch,
    imports_saved_module,
    log_handler_host,
    outside_skill,
    own_emit,
    parse_python,
    sends_nowhere,
    shell_quote,
    wrapped_stream,
    written_handle,
)
from chimera_cards._scan.sdkclients import SDK_CLIENTS, call_sends, module_sends
from chimera_cards._scan.sensitive import (
    CREDENTIAL_LITERALS,
    Send,
    Taint,
    credential_in,
    host_of,
    is_secret_name,
    keyring_secret,
    names_listed,
    source_taint,
)
from chimera_cards._scan.shell import analyse_shell
from chimera_cards._scan.shellfacts import Embed, Out

MAX_DEPTH = 3
_NOT_READING = frozenset(
    {"os.chmod", "os.chown", "os.makedirs", "os.mkdir", "os.path.exists", "os.path.isfile",
     "os.path.isdir", "os.path.join", "os.path.expanduser", "Path", "pathlib.Path", "print",
     "os.path.basename", "os.path.dirname", "str", "os.remove", "os.unlink", "exists", "is_file",
     "mkdir", "chmod", "logging.info", "logging.warning", "logging.debug", "logger.info"}
)  # fmt: skip
_ENV_GET = frozenset(
    {
        "os.environ.get",
        "os.getenv",
        "environ.get",
        "os.environ.setdefault",
        "os.environ.pop",
        "getenv",
    }
)
_EXEC = frozenset(
    {
        "os.system",
        "os.popen",
        "subprocess.run",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.Popen",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "commands.getoutput",
        "asyncio.create_subprocess_shell",
        "asyncio.create_subprocess_exec",
        "os.execv",
        "os.execvp",
        "os.execl",
        "os.execlp",
        "os.spawnl",
        "os.spawnv",
        "pty.spawn",
        "os.posix_spawn",
    }
)
_EVAL = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "builtins.exec",
        "builtins.eval",
        "runpy.run_path",
        "pickle.loads",
        "marshal.loads",
        "dill.loads",
        "cloudpickle.loads",
        "types.FunctionType",
        "__import__",
        "importlib.import_module",
    }
)
_SEND_METHODS = frozenset(
    {
        "post",
        "put",
        "patch",
        "send",
        "sendall",
        "sendto",
        "request",
        "urlopen",
        "sendmail",
        "send_message",
        "storbinary",
        "storlines",
        "upload_file",
        "upload_fileobj",
        "put_object",
        "upload",
        "send_json",
        "send_text",
        "send_bytes",
        "emit",
        "publish",
        "sendBeacon",
    }
)
_HTTP_GETTERS = frozenset({"get", "delete", "head", "options", "stream", "fetch", "open"})
_NET_ROOTS = frozenset(
    {
        "requests",
        "httpx",
        "urllib3",
        "aiohttp",
        "urllib",
        "http",
        "session",
        "client",
        "sess",
        "s",
        "http_client",
        "webbrowser",
    }
)
_DNS = frozenset({"socket.gethostbyname", "socket.getaddrinfo", "socket.gethostbyname_ex",
                  "dns.resolver.resolve", "dns.resolver.query", "resolver.resolve"})  # fmt: skip
_CLIPBOARD = frozenset({"pyperclip.copy", "clipboard.copy", "clipboard_append", "setClipboardText"})
_CRED_CALLS = frozenset({"keyring.get_password", "browser_cookie3.chrome",
                         "browser_cookie3.firefox", "browser_cookie3.load",
                         "win32crypt.CryptUnprotectData", "CryptUnprotectData",
                         "keyring.get_credential"})  # fmt: skip
_MUTATORS = frozenset({"append", "extend", "update", "add", "insert", "setdefault", "appendleft",
                       "write", "writelines", "put", "push"})  # fmt: skip
_HEADER_KWARGS = frozenset({"headers", "auth", "cookies"})


# A dotenv line's start naming one variable: ``OPENROUTER_API_KEY=``.
_KEY_LINE_RE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=")


def _key_line_test(test: ast.expr) -> tuple[str, str] | None:
    """(line variable, secret name) of ``line.startswith("NAME=")`` (``line.strip()`` too)."""
    if not (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and len(test.args) == 1
        and isinstance(test.args[0], ast.Constant)
        and isinstance(test.args[0].value, str)
    ):
        return None
    line = test.func.value
    while (
        isinstance(line, ast.Call)
        and isinstance(line.func, ast.Attribute)
        and not line.args
        and line.func.attr in ("strip", "lstrip")
    ):
        line = line.func.value
    key = _KEY_LINE_RE.fullmatch(test.args[0].value)
    if not isinstance(line, ast.Name) or key is None or not is_secret_name(key.group(1)):
        return None
    return line.id, key.group(1)


def _run_shell_text(walk: _Analyser, text: str, line: int, variables: dict[str, Out]) -> Out:
    """What the command line ``text`` a Python call runs does (its sends kept with the file's)."""
    before = len(walk.facts.shell.sends)
    out = analyse_shell(
        text,
        first_line=line,
        depth=walk.depth + 1,
        variables=variables,
        tainted_files=walk.facts.shell.tainted_files,
        embed=walk.embed,
        facts=walk.facts.shell,
    )
    # A function's command sends its parameters as any of its sends does: a template for its
    # callers' arguments, not data of its own (gh api -F owner={owner}).
    made = walk.facts.shell.sends[before:]
    del walk.facts.shell.sends[before:]
    for send in made:
        walk.add_send(send)
    return out


def _one_key_branch(walk: _Analyser, node: ast.stmt) -> bool:
    """``if line.startswith("OPENROUTER_API_KEY="):`` over the lines of a dotenv file: in the
    branch the line is that one variable's, graded as the variable is (its own API's host, or
    another's), not the whole file. Returns whether the branch was walked."""
    if not isinstance(node, ast.If):
        return False
    found = _key_line_test(node.test)
    held = walk.env.get(found[0]) if found else None
    dotenv = {t for t in held.taint if t.what.lower().startswith(".env")} if held else set()
    if found is None or held is None or not dotenv:
        return False
    walk.value(node.test)
    narrowed = held.copy()
    narrowed.taint = (held.taint - dotenv) | {Taint("env", found[1])}
    walk.env[found[0]] = narrowed
    walk.block(node.body)
    walk.env[found[0]] = held
    walk.block(node.orelse)
    return True


def _is_param(taint: Taint) -> bool:
    return taint.kind == "param"


def _strip_params(out: Out) -> Out:
    return Out({t for t in out.taint if not _is_param(t)}, out.decoded, out.downloaded)

    # --- values -----------------------------------------------------------------------------


class _Analyser(_PyFolding):
    """The walk over a Python unit: values, calls, sinks, functions and statements."""

    def value(self, node: ast.AST | None) -> Out:
        if node is None:
            return Out()
        if isinstance(node, ast.Name):
            known = self.env.get(node.id)
            return known.copy() if known is not None else Out()
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and self.literals and len(node.value) < 4096:
                found = credential_in(node.value)
                if found and not names_listed(node.value):
                    return Out({source_taint(found)})
            return Out()
        if isinstance(node, ast.Attribute):
            name = self.dotted(node)
            if name in ("os.environ", "environ", "os.environb"):
                return Out({Taint("env-all", "os.environ")})
            if name == "sys.argv":
                return self.argv.copy()
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                known = self.attrs.get(node.attr)
                return known.copy() if known is not None else Out()
            return self.value(node.value).attribute(node.attr)
        if isinstance(node, ast.Subscript):
            base = self.dotted(node.value)
            if base in ("os.environ", "environ"):
                key = self.fold(node.slice)
                return self.env_value(key)
            return self.value(node.value).merge(self.value(node.slice))
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node)
        if isinstance(node, ast.Lambda):
            return Out()
        if isinstance(node, ast.BinOp):
            if (
                isinstance(node.op, ast.Mult)
                and isinstance(node.right, ast.Constant)
                and isinstance(node.right.value, int)
                and node.right.value >= 10_000_000
                and isinstance(node.left, (ast.List, ast.Constant))
            ):
                self.facts.exhaustion.append(
                    (self.line(node), f"a list or string of {node.right.value:,} items")
                )
            out = self.value(node.left).merge(self.value(node.right))
            folded = self.fold(node)
            if folded and credential_in(folded):
                out.taint.add(source_taint(credential_in(folded) or folded))
            return out
        if isinstance(node, ast.JoinedStr):
            out = Out()
            for child in node.values:
                piece = child.value if isinstance(child, ast.FormattedValue) else child
                out.merge(self.value(piece))
            folded = self.fold(node)
            if folded and credential_in(folded):
                out.taint.add(source_taint(credential_in(folded) or folded))
            return out
        out = Out()
        for part in ast.iter_child_nodes(node):
            if isinstance(part, ast.expr):
                out.merge(self.value(part))
        return out

    def env_value(self, key: str | None) -> Out:
        if key is None or "*" in key:
            return Out({Taint("env-all", "os.environ[…]")})
        if is_secret_name(key):
            self.facts.env_reads.append((self.current_line, key))
            return Out({Taint("env", key)})
        return Out()

    def comprehension(self, node: ast.AST) -> Out:
        saved = dict(self.env)
        for gen in getattr(node, "generators", []):
            self.bind(gen.target, self.value(gen.iter))
        if isinstance(node, ast.DictComp):
            out = self.value(node.key).merge(self.value(node.value))
        else:
            out = self.value(node.elt)  # type: ignore[attr-defined]
        self.env = saved
        return out

    def bind(self, target: ast.AST, out: Out) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = out.copy()
            self.receivers.names.pop(target.id, None)  # unknown unless its assignment says
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, out)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, out)
        elif isinstance(target, ast.Attribute):
            if isinstance(target.value, ast.Name) and target.value.id in ("self", "cls"):
                self.attrs.setdefault(target.attr, Out()).merge(out)
            else:
                self.mutate(target.value, out)
        elif isinstance(target, ast.Subscript):
            self.mutate(target.value, out)

    def mutate(self, node: ast.AST, out: Out) -> None:
        if not (out.taint or out.decoded or out.downloaded):
            return
        if isinstance(node, ast.Name):
            self.env.setdefault(node.id, Out()).merge(out)
            if (inner := self.wraps.pop(node.id, None)) is not None:  # popped: no cycle
                self.mutate(ast.Name(inner), out)
                self.wraps[node.id] = inner
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            self.attrs.setdefault(node.attr, Out()).merge(out)
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            self.mutate(node.value, out)

    # --- calls ------------------------------------------------------------------------------

    def call(self, node: ast.Call) -> Out:
        name = self.dotted(node.func) or ""
        short = (
            name.rsplit(".", 1)[-1]
            if name
            else (node.func.attr if isinstance(node.func, ast.Attribute) else "")
        )
        line = self.line(node)
        self.current_line = line
        if name in _ENV_GET or (short in ("get", "getenv") and name.endswith("environ.get")):
            return self.env_value(self.fold(node.args[0]) if node.args else None)
        receiver = Out()
        if isinstance(node.func, ast.Attribute):
            receiver = self.value(node.func.value)
        args = [self.value(a) for a in node.args]
        kwargs = {kw.arg: self.value(kw.value) for kw in node.keywords if kw.arg != "env"}
        everything = receiver.copy()
        for out in args:
            everything.merge(out)
        for out in kwargs.values():
            everything.merge(out)
        result = everything.copy()
        if not self.facts.saw_taint and any(not _is_param(t) for t in everything.taint):
            self.facts.saw_taint = True
        # credential stores read
        if name in _CRED_CALLS or short in ("CryptUnprotectData", "get_password"):
            service = self.fold(node.args[0]) if node.args and short == "get_password" else None
            taint = keyring_secret(service) or Taint("credential", name or short)
            if taint.kind == "credential":
                self.facts.reads.append((line, taint))
            result.taint.add(taint)
        elif name not in _NOT_READING and short not in _NOT_READING:
            for arg in node.args[:2]:
                folded = self.fold(arg)
                found = credential_in(folded) if folded else None
                if found:
                    taint = source_taint(found)
                    self.facts.reads.append((line, taint))
                    result.taint.add(taint)
                elif name in ("open", "io.open") and folded and hidden_or_scratch(folded):
                    # A file nobody shipped or reviewed (/tmp/.cache, ~/.x): code read from it
                    # and run is code from elsewhere.
                    result.downloaded = True
        if name in DECODERS or short in (
            "b64decode",
            "unhexlify",
            "fromhex",
            "decompress",
            "a2b_base64",
        ):
            result.decoded = True
            folded = self.fold(node)
            if folded and self.depth < MAX_DEPTH and len(folded) > 8:
                self.nested(folded, line)
        if short in ("decode",) and args == [] and receiver.decoded:
            result.decoded = True
        if (
            (name in ("bytes", "bytearray") or short == "join")
            and node.args
            and ciphered(node.args[0])
        ):
            result.decoded = True  # bytes(b ^ 0x2A for b in BLOB): a text kept unreadable
        if name in _EXEC or short in ("system", "popen", "check_output", "getoutput"):
            result.merge(self.run_shell(node, name, line))
        if name in _EVAL or short in ("exec", "eval"):
            self.evaluated(node, name or short, everything, line)
        if short in ("execute", "executemany", "executescript") and node.args:
            query = node.args[0]
            if built_query(query, self.literal, self.built_queries):
                self.facts.sql.append((line, f"{short}() of SQL built by string formatting"))
        if name == "os.dup2":
            self.dup2 = True
        if short in SDK_CLIENTS:
            self.facts.sends += call_sends(
                node, SDK_CLIENTS[short], self.fold, kwargs.get("api_key"), line
            )
        if name == "pty.spawn" or (
            name.startswith(("subprocess", "os.exec", "os.spawn")) and node.args
        ):
            first = node.args[0]
            head = (
                first.elts[0] if isinstance(first, (ast.List, ast.Tuple)) and first.elts else first
            )
            if (
                (self.fold(head) or "")
                .split(" ")[0]
                .endswith(("sh", "bash", "cmd.exe", "powershell"))
            ):
                self.spawned_shell = True
        if short in ("connect", "create_connection") and node.args:
            target = node.args[0]
            if isinstance(target, ast.Tuple) and target.elts:
                host = self.fold(target.elts[0]) or "an address built at run time"
                base = (
                    self.dotted(node.func.value)
                    if isinstance(node.func, ast.Attribute) and short == "connect"
                    else None
                )
                # socket.create_connection((host, port)) returns the socket: any name sends there
                self.sockets[base or "*"] = host
        if short in ("urlretrieve", "download_file", "download_url", "hf_hub_download") and (
            len(node.args) >= 2 or node.keywords
        ):
            saved_to: ast.expr | None = node.args[1] if len(node.args) >= 2 else None
            for kw in node.keywords:
                if kw.arg in ("filename", "path", "dest", "destination", "out", "Filename"):
                    saved_to = kw.value
            path = self.fold(saved_to) if saved_to is not None else None
            if path:
                self.saved(path, Out(downloaded=True), line)
        self.sink(node, name, short, receiver, args, kwargs, line, result)
        self.summary_call(short, node, args, line, result)
        if isinstance(node.func, ast.Attribute) and short in _MUTATORS:
            merged = Out()
            for out in args:
                merged.merge(out)
            self.mutate(node.func.value, merged)
        return result

    def nested(self, code: str, line: int) -> None:
        """Decoded text that parses as Python is read as Python too (what it hides counts)."""
        if not any(ch in code for ch in "(=") or (not code.isprintable() and "\n" not in code):
            return
        inner = parse_python(code)
        if inner is None:
            return
        sub = _Analyser(
            self.facts, self.summaries, first_line=line, depth=self.depth + 1, embed=self.embed
        )
        sub.aliases = sub.receivers.aliases = dict(self.aliases)
        sub.offset = line - 1
        sub.module(inner)

    def evaluated(self, node: ast.Call, name: str, what: Out, line: int) -> None:
        if what.decoded:
            self.facts.decode_exec.append((line, name))
        elif what.downloaded:
            self.facts.download_exec.append((line, name))
        if node.args and self.depth < MAX_DEPTH:
            code = self.fold(node.args[0])
            if code and "*" not in code and name.endswith(("exec", "eval", "compile")):
                self.nested(code, line)

    def run_shell(self, node: ast.Call, name: str, line: int) -> Out:
        if not node.args:
            return Out()
        first = node.args[0]
        variables: dict[str, Out] = {}
        if isinstance(first, (ast.List, ast.Tuple)):
            words = []
            for index, elt in enumerate(first.elts):
                folded = self.fold(elt)
                out = self.value(elt)
                if folded is not None and "*" not in folded:
                    words.append(shell_quote(folded))
                else:
                    var = f"__py{index}"
                    variables[var] = out
                    words.append(f'"${var}"')
            text = " ".join(words)
        else:
            folded = self.fold(first)
            out = self.value(first)
            if out.decoded or out.downloaded:
                (self.facts.decode_exec if out.decoded else self.facts.download_exec).append(
                    (line, name)
                )
            if folded is None:
                return out
            text = folded.replace("*", "$__py")
            variables["__py"] = out
        if self.depth >= MAX_DEPTH:
            return Out()
        return _run_shell_text(self, text, line, variables)

    def sink(
        self,
        node: ast.Call,
        name: str,
        short: str,
        receiver: Out,
        args: list[Out],
        kwargs: dict[str | None, Out],
        line: int,
        result: Out,
    ) -> None:
        root = name.split(".", 1)[0] if name else ""
        is_send = short in _SEND_METHODS and (short != "send" or root not in ("gen", "generator"))
        if name.endswith("urlopen") or (short in _HTTP_GETTERS and root in _NET_ROOTS):
            is_send = True
        if short == "emit" and own_emit(self.summaries.methods, root, self.aliases):
            is_send = False
        is_send = is_send and not sends_nowhere(node, name, short, [*args, *kwargs.values()])
        if short in LOG_HANDLERS:
            self.log_sink = (log_handler_host(node, self.fold),)
        if short in LOG_CALLS and self.log_sink is not None:
            # a record logged once such a handler is added leaves with its arguments
            if logged := {t for out in [*args, *kwargs.values()] for t in out.taint}:
                self.add_send(Send(line, self.log_sink[0], f"logging {short}", logged))
            return
        dns = name in _DNS or short in ("gethostbyname", "getaddrinfo")
        clipboard = name in _CLIPBOARD or short in ("clipboard_append", "setClipboardText")
        if is_send:
            result.downloaded = True
        if not (is_send or dns or clipboard):
            self.file_sink(node, name, short, args, line)
            return
        body: set[Taint] = set()
        header: set[Taint] = set()
        for out in args:
            body |= out.taint
        for key, out in kwargs.items():
            (header if key in _HEADER_KWARGS else body).update(out.taint)
        host = self.host_in(node, short)
        first = node.args[0] if node.args else None
        if short == "urlopen" and isinstance(first, ast.Name) and first.id in self.requests:
            host, body, header = self.requests[first.id]
            body, header = set(body), set(header)
        if short in ("send", "sendall", "sendto") and host is None:
            base = self.dotted(node.func.value) if isinstance(node.func, ast.Attribute) else None
            host = self.sockets.get(base or "*") or next(iter(self.sockets.values()), None)
        if clipboard:
            self.add_send(Send(line, None, name or short, body=body | header, sink="clipboard"))
            return
        if dns and not body:
            return
        if dns:
            host = "a DNS lookup"
        plain_get = short in _HTTP_GETTERS and not body and not header
        if plain_get or (short == "urlopen" and not body and not header):
            return
        written = ast.unparse(node) if any(t.kind == "env" for t in body) else ""
        self.add_send(Send(line, host, name or short, body, header, text=written))

    def host_in(self, node: ast.Call, short: str) -> str | None:
        candidates = list(node.args[:2])
        for kw in node.keywords:
            if kw.arg in ("url", "endpoint", "uri"):
                candidates.insert(0, kw.value)
        for arg in candidates:
            folded = self.fold(arg)
            host = host_of(folded)
            if host:
                return host
            if isinstance(arg, ast.Call) and arg.args:  # urlopen(Request(url, data))
                host = host_of(self.fold(arg.args[0]))
                if host:
                    return host
        return None

    def file_sink(self, node: ast.Call, name: str, short: str, args: list[Out], line: int) -> None:
        path = None
        content = Out()
        if short in ("write", "writelines") and isinstance(node.func, ast.Attribute):
            handle = self.dotted(node.func.value)
            path = self.handles.get(handle or "")
            for out in args:
                content.merge(out)
        elif short in ("write_text", "write_bytes") and isinstance(node.func, ast.Attribute):
            path = self.fold(node.func.value)
            for out in args:
                content.merge(out)
        elif (
            name in ("shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree")
            and len(node.args) >= 2
        ):
            path = self.fold(node.args[1])
            content = args[0]
        if short in ("write", "write_text") and node.args and self.depth < MAX_DEPTH:
            # Code kept in a string and written out to be run: read as the code it is.
            written = self.fold(node.args[0])
            if written and "*" not in written and "import " in written and "\n" in written:
                self.nested(written, line)
        if not path:
            return
        if build_kind(path) in WRITTEN_INDEX_KINDS and node.args:
            # pip.conf written with an index-url: graded as a shell's echo into it is.
            self.facts.shell.writes.append((line, path, Out(), self.fold(node.args[0]) or ""))
        if content.downloaded or content.decoded:
            self.saved(path, content, line)
        persisted = path_persistence(path)
        if persisted:
            severity = "error" if "authorized_keys" in persisted else "warning"
            self.facts.persistence.append((line, f"writes {persisted}", severity))
        if outside_skill(path) and content.taint:
            self.add_send(Send(line, path, name or short, body=set(content.taint), sink="file"))

    def add_send(self, send: Send) -> None:
        params = {t for t in send.body | send.header if _is_param(t)}
        # a call by its own name hands back templates the list has (each such call doubled it)
        if params and self.function and not send.via.startswith(f"{self.function}() -> "):
            self.summaries.sends.setdefault(self.function, []).append(send)
        real = Send(
            send.line,
            send.host,
            send.via,
            body={t for t in send.body if not _is_param(t)},
            header={t for t in send.header if not _is_param(t)},
            sink=send.sink,
            text=send.text,
        )
        if not params or real.body or real.header or not self.function:
            self.facts.sends.append(real)

    def summary_call(
        self, short: str, node: ast.Call, args: list[Out], line: int, result: Out
    ) -> None:
        returned = self.summaries.returns.get(short)
        if returned is None and short not in self.summaries.sends:
            return
        attr = node.func.value if isinstance(node.func, ast.Attribute) else None
        if not short or (attr is not None and not self.receivers.may_run(attr, short)):
            return
        if returned is not None:
            result.merge(self.substitute(returned, short, args))
        for template in tuple(self.summaries.sends.get(short, ())):
            body = self.substitute(Out(set(template.body)), short, args).taint
            header = self.substitute(Out(set(template.header)), short, args).taint
            if body or header:
                self.add_send(
                    Send(
                        line,
                        template.host,
                        f"{short}() -> {template.via}",
                        body=body,
                        header=header,
                        sink=template.sink,
                    )
                )

    @staticmethod
    def substitute(out: Out, function: str, args: list[Out]) -> Out:
        result = Out(set(), out.decoded, out.downloaded)
        for taint in out.taint:
            if not _is_param(taint):
                result.taint.add(taint)
                continue
            owner, _, index = taint.what.rpartition(":")
            if owner == function and index.isdigit() and int(index) < len(args):
                result.merge(args[int(index)])
            elif owner == function and index == "*":
                for arg in args:
                    result.merge(arg)
        return result

    # --- statements -------------------------------------------------------------------------

    def module(self, tree: ast.Module) -> None:
        self.literal.tree = tree
        self.learn(tree)
        self.block(tree.body)
        if self.dup2 and self.spawned_shell and self.sockets:
            host = next(iter(self.sockets.values()))
            self.facts.reverse_shell.append((self.offset + 1, f"socket to {host} wired to a shell"))

    def block(self, body: list[ast.stmt]) -> None:
        for statement in body:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.define(node)
            return
        if isinstance(node, ast.ClassDef):
            outer, self.receivers.cls = self.receivers.cls, node.name
            self.block(node.body)
            self.receivers.cls = outer
            return
        if isinstance(node, ast.Assign):
            if built_sql(node.value, self.fold(node.value), self.literal):
                self.built_queries.update(t.id for t in node.targets if isinstance(t, ast.Name))
            self.remember_request(node)
            out = self.value(node.value)
            for target in node.targets:
                self.bind(target, out)
                self.receivers.bind(target, node.value)
                self.track_handle(node.value, target)
            return
        if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            out = self.value(node.value)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                out.merge(self.env.get(node.target.id))
            self.bind(node.target, out)
            if isinstance(node, ast.AnnAssign):
                self.receivers.bind(node.target, node.value, node.annotation)
            return
        if isinstance(node, (ast.Try, ast.TryStar)) and node.handlers:
            # A loop in here may end by the exception a handler waits for (img.seek -> EOFError).
            self.guarded += 1
            self.block(node.body)
            self.guarded -= 1
            for handler in node.handlers:
                self.block(handler.body)
            self.block(node.orelse)
            self.block(node.finalbody)
            return
        if isinstance(node, ast.While) and not self.guarded and endless(node):
            self.facts.exhaustion.append((self.line(node), "a 'while True' loop nothing ends"))
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.bind(node.target, self.value(node.iter))
            self.block(node.body)
            self.block(node.body)  # a value carried round the loop
            self.block(node.orelse)
            return
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                out = self.value(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, out)
                    self.track_handle(item.context_expr, item.optional_vars)
            self.block(node.body)
            return
        if isinstance(node, ast.Return):
            self.returned.merge(self.value(node.value))
            return
        if isinstance(node, ast.Expr):
            value = node.value
            if isinstance(value, ast.Call) and self.dotted(value.func) in (
                "print",
                "sys.stdout.write",
            ):
                out = Out()
                for arg in value.args:
                    out.merge(self.value(arg))
                self.facts.output.merge(_strip_params(out))
                return
            self.value(value)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass, ast.Break, ast.Continue,
                             ast.Global, ast.Nonlocal)) or _one_key_branch(self, node):  # fmt: skip
            return
        for name in ("test", "subject", "exc"):
            child = getattr(node, name, None)
            if isinstance(child, ast.expr):
                self.value(child)
        for name in ("body", "orelse", "finalbody"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                self.block([c for c in children if isinstance(c, ast.stmt)])
        for handler in getattr(node, "handlers", []) or []:
            self.block(handler.body)
        for case in getattr(node, "cases", []) or []:
            self.block(case.body)

    def track_handle(self, expr: ast.expr, target: ast.expr) -> None:
        if isinstance(expr, ast.Call) and isinstance(target, ast.Name):
            name = self.dotted(expr.func) or ""
            if (inner := wrapped_stream(name, expr)) is not None:
                self.wraps[target.id] = inner
            if (path := written_handle(name, expr, self.fold)) is not None:
                self.handles[target.id] = path

    def define(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        saved_env, saved_fn, saved_ret = self.env, self.function, self.returned
        self.env, saved_names = dict(saved_env), self.receivers.enter(node)
        self.function = node.name
        self.returned = Out()
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        for index, param in enumerate(params):
            self.env[param] = Out({Taint("param", f"{node.name}:{index}")})
        if node.args.vararg:
            self.env[node.args.vararg.arg] = Out({Taint("param", f"{node.name}:*")})
        self.block(node.body)
        if self.returned.taint or self.returned.decoded or self.returned.downloaded:
            self.summaries.returns.setdefault(node.name, Out()).merge(self.returned)
        self.env, self.function, self.returned = saved_env, saved_fn, saved_ret
        self.receivers.names = saved_names


def analyse_python(
    text: str,
    *,
    first_line: int = 1,
    summaries: Summaries | None = None,
    embed: Embed | None = None,
    depth: int = 0,
    tree: ast.Module | None = None,
    argv: Out | None = None,
) -> PyFacts:
    """What a Python unit does with data.

    Args:
        text: the source.
        first_line: the file line of its first line.
        summaries: what the bundle's functions do (read and extended), so calls across files
            count; a new one if None.
        embed: reads code of another language it runs (unused by Python itself; passed on to
            the shell it runs).
        depth: how many one-liners deep this text is.
        tree: the parsed text, when the caller has it.
        argv: what its arguments carry (``python3 -c CODE ~/.ssh/id_rsa``), when run with some.
    Returns:
        The facts; ``parsed`` is False when the text is not Python this interpreter reads.
    """
    facts = PyFacts()
    if tree is None:
        tree = parse_python(text)
    if tree is None:
        facts.parsed = False
        return facts
    analyser = _Analyser(
        facts,
        summaries if summaries is not None else Summaries(methods=Definitions([tree])),
        first_line=first_line,
        depth=depth,
        embed=embed,
    )
    analyser.argv = argv or Out()
    lower = text.lower()
    analyser.literals = any(map(lower.__contains__, CREDENTIAL_LITERALS))
    try:
        analyser.module(tree)
    except RecursionError:
        facts.too_deep = True
    facts.sends += module_sends(tree, analyser.fold, first_line - 1)
    # A download saved as a module and imported (on this run or the next: the import may come
    # first, guarded by a check that the file exists) is downloaded code run.
    for path, line in facts.saved_downloads.items():
        if imports_saved_module(text, path):
            facts.download_exec.append((line, f"saved as {path} and imported"))
    return facts
