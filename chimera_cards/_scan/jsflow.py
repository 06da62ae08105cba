"""JavaScript (and TypeScript, as far as the JavaScript grammar reads it) read with tree-sitter
for where data goes: ``process.env`` secrets and credential files followed through variables,
callbacks and promise chains to ``fetch``/``axios``/``http.request``/sockets, the clipboard and
files outside the skill; decoded data followed to ``eval``, ``new Function`` and
``child_process`` (whose commands are read as shell).
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from chimera_cards._scan.commands import path_persistence
from chimera_cards._scan.sensitive import (
    CodeFacts,
    Send,
    Taint,
    credential_in,
    host_of,
    is_secret_name,
    source_taint,
)
from chimera_cards._scan.shell import analyse_shell
from chimera_cards._scan.shellfacts import Embed, Out, ShellFacts

MAX_NODES = 1_000_000
_INERT = frozenset({"number", "true", "false", "null", "undefined", "regex", "comment", "this"})
_EXEC_NAMES = frozenset(
    {"exec", "execSync", "spawn", "spawnSync", "execFile", "execFileSync", "fork"}
)
_SEND_CALLS = frozenset(
    {
        "axios.post",
        "axios.put",
        "axios.patch",
        "axios.request",
        "axios",
        "navigator.sendBeacon",
        "got.post",
        "got.put",
        "superagent.post",
        "needle.post",
        "request.post",
        "ky.post",
        "$.post",
        "$.ajax",
        "jQuery.ajax",
    }
)
_GETTERS = frozenset(
    {"axios.get", "got", "got.get", "needle.get", "request.get", "ky.get", "$.get"}
)
_COPIES = frozenset({"cpSync", "cp", "copyFileSync", "copyFile"})
_GLOBAL_SCOPES = ("globalThis.", "window.", "global.", "self.")
_DNS_METHODS = frozenset(
    {"resolve", "lookup", "resolve4", "resolve6", "resolveTxt", "resolveAny", "resolveCname",
     "resolveMx", "resolveNs", "resolveSrv", "resolveSoa", "reverse", "lookupService"}
)  # fmt: skip
_WRITE_METHODS = frozenset({"write", "end", "send", "sendBeacon", "emit"})
_CLIPBOARD = frozenset(
    {
        "clipboardy.write",
        "clipboardy.writeSync",
        "navigator.clipboard.writeText",
        "clipboard.writeText",
        "ncp.copy",
        "copyPaste.copy",
    }
)
_FILE_WRITES = frozenset(
    {
        "fs.writeFileSync",
        "fs.writeFile",
        "fs.appendFileSync",
        "fs.appendFile",
        "fs.promises.writeFile",
        "fs.promises.appendFile",
        "writeFileSync",
        "appendFileSync",
        "writeFile",
        "appendFile",
    }
)
_READS = frozenset(
    {
        "readFileSync",
        "readFile",
        "createReadStream",
        "readdirSync",
        "readdir",
        "openSync",
        "existsSync",
        # Deno's own file reads (Bun's is Bun.file, matched by its whole name)
        "readTextFile",
        "readTextFileSync",
    }
)


@dataclass
class JsFacts(CodeFacts):
    """What a JavaScript unit does, for the rules to grade."""

    persistence: list[tuple[int, str, str]] = field(default_factory=list)
    shell: ShellFacts = field(default_factory=ShellFacts)
    output: Out = field(default_factory=Out)


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_javascript

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_javascript.language()))


@functools.lru_cache(maxsize=2)
def _ts_parser(tsx: bool) -> Any:
    import tree_sitter
    import tree_sitter_typescript

    grammar = (
        tree_sitter_typescript.language_tsx()
        if tsx
        else tree_sitter_typescript.language_typescript()
    )
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def _module_name(module: str) -> str:
    """A module as its members are named: ``node:fs/promises`` is ``fs.promises``."""
    return module.removeprefix("node:").replace("/promises", ".promises")


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace")


class _JsFolding:
    """A unit's state and the folding of constant expressions (names, strings, concatenations)."""

    def __init__(
        self,
        facts: JsFacts,
        first_line: int,
        embed: Embed | None,
        returns: dict[str, Out] | None = None,
    ) -> None:
        self.facts = facts
        self.first_line = first_line
        self.embed = embed
        self.argv = Out()  # what process.argv holds: a one-liner's arguments, when known
        self.env: dict[str, Out] = {}
        self.consts: dict[str, str] = {}
        # const cp = require('child_process') -> cp: child_process
        self.aliases: dict[str, str] = {}
        # What functions return, by name: shared by the files of a bundle (exports.f = ...).
        self.returns: dict[str, Out] = returns if returns is not None else {}
        self.hosts: dict[str, str] = {}  # request variables -> the host their options name
        self.count = 0
        self.sockets = False
        self.shell_spawn = False
        self.resolvers: set[str] = set()  # variables holding a dns Resolver object

    def line(self, node: Any) -> int:
        return self.first_line + node.start_point[0]

    # --- names and folding ------------------------------------------------------------------

    def dotted(self, node: Any) -> str | None:
        kind = node.type
        if kind == "identifier":
            name = _text(node)
            return self.aliases.get(name, name)
        if kind == "member_expression":
            obj = node.child_by_field_name("object")
            prop = node.child_by_field_name("property")
            base = self.dotted(obj) if obj is not None else None
            if base is None or prop is None:
                return _text(prop) if prop is not None else None
            return f"{base}.{_text(prop)}"
        if kind == "subscript_expression":
            obj = node.child_by_field_name("object")
            index = node.child_by_field_name("index")
            base = self.dotted(obj) if obj is not None else None
            key = self.fold(index) if index is not None else None
            if base and key and "*" not in key:
                return f"{base}.{key}"
            if (
                base is None
                and key
                and "*" not in key
                and obj is not None
                and obj.type in ("array", "object", "string", "subscript_expression")
            ):
                return key  # []["constructor"]: named by its key, as a member would be
            return None
        if kind == "call_expression":
            func = node.child_by_field_name("function")
            if func is not None and _text(func) == "require":
                args = node.child_by_field_name("arguments")
                if args is not None and args.named_children:
                    module = self.fold(args.named_children[0])
                    if module:
                        return _module_name(module)
        if kind == "parenthesized_expression" and node.named_children:
            return self.dotted(node.named_children[0])
        return None

    def fold(self, node: Any, depth: int = 0) -> str | None:
        if node is None or depth > 12:
            return None
        kind = node.type
        if kind == "string":
            return "".join(
                _text(c)
                for c in node.named_children
                if c.type in ("string_fragment", "escape_sequence")
            )
        if kind == "template_string":
            parts = []
            for child in node.named_children:
                if child.type == "string_fragment":
                    parts.append(_text(child))
                elif child.type == "template_substitution":
                    inner = child.named_children[0] if child.named_children else None
                    parts.append(self.fold(inner, depth + 1) or "*")
            return "".join(parts)
        if kind == "identifier":
            return self.consts.get(_text(node))
        if kind == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None and _text(op) == "+":
                left = self.fold(node.child_by_field_name("left"), depth + 1)
                right = self.fold(node.child_by_field_name("right"), depth + 1)
                if left is not None or right is not None:
                    return (left or "*") + (right or "*")
            return None
        if kind == "parenthesized_expression" and node.named_children:
            return self.fold(node.named_children[0], depth + 1)
        if kind == "call_expression":
            name = self.dotted(node.child_by_field_name("function")) or ""
            args = node.child_by_field_name("arguments")
            items = list(args.named_children) if args is not None else []
            if name in ("os.homedir", "homedir") or name.endswith(".homedir"):
                return "~"
            func = node.child_by_field_name("function")
            on_array = func is not None and func.type == "member_expression"
            on_array = (
                on_array and getattr(func.child_by_field_name("object"), "type", "") == "array"
            )
            if not on_array and (
                name.endswith(("path.join", "path.resolve")) or name in ("join", "resolve")
            ):
                return "/".join(self.fold(a, depth + 1) or "*" for a in items)
            if name == "atob" and items:
                raw = self.fold(items[0], depth + 1)
                return _b64(raw) if raw else None
            if name == "String.fromCharCode" and items:  # String.fromCharCode(46, 115, 115, 104)
                try:
                    return "".join(chr(int(_text(a), 0)) for a in items if a.type == "number")
                except (ValueError, OverflowError):
                    return None
            func = node.child_by_field_name("function")
            if func is not None and func.type == "member_expression":
                prop = func.child_by_field_name("property")
                obj = func.child_by_field_name("object")
                if (
                    prop is not None
                    and _text(prop) == "toString"
                    and obj is not None
                    and obj.type == "call_expression"
                ):
                    inner = self.dotted(obj.child_by_field_name("function")) or ""
                    inner_args = obj.child_by_field_name("arguments")
                    parts = list(inner_args.named_children) if inner_args is not None else []
                    if inner == "Buffer.from" and len(parts) >= 2:
                        raw, enc = self.fold(parts[0], depth + 1), self.fold(parts[1])
                        if raw and enc == "base64":
                            return _b64(raw)
                        if raw and enc == "hex":
                            try:
                                return bytes.fromhex(raw).decode("utf-8", "replace")
                            except ValueError:
                                return None
                if (
                    prop is not None
                    and _text(prop) == "join"
                    and obj is not None
                    and obj.type == "array"
                ):
                    sep_node = items[0] if items else None
                    sep = self.fold(sep_node) if sep_node is not None else ","
                    folded = [self.fold(e, depth + 1) for e in obj.named_children]
                    if sep is not None and all(p is not None for p in folded):
                        return sep.join(p for p in folded if p is not None)
        return None

    def process_value(self, name: str | None) -> Out | None:
        """What ``process.env`` (every variable), ``process.env.NAME`` and ``process.argv`` (a
        one-liner's arguments; ``process.argv[1]`` reads it through its object) hold."""
        if name in ("process.env", "Bun.env"):  # Bun's is an object as Node's is
            return Out({Taint("env-all", name)})
        if name and name.startswith(("process.env.", "Bun.env.")):
            key = name.split(".", 2)[2]
            return Out({Taint("env", key)}) if is_secret_name(key) else Out()
        return self.argv.copy() if name == "process.argv" else None

    # --- values -----------------------------------------------------------------------------


def _known_call(name: str, first: str | None) -> Out:
    """What a call returns that is known by its name: a module loaded holds nothing of the
    unit's; Deno's ``Deno.env.toObject()`` every variable, ``Deno.env.get(NAME)`` one (a
    secret when its name says so)."""
    if name == "Deno.env.toObject":
        return Out({Taint("env-all", "Deno.env.toObject()")})
    if name == "Deno.env.get" and first and is_secret_name(first):
        return Out({Taint("env", first)})
    return Out()


class _Js(_JsFolding):
    """The walk over a JavaScript unit: values, calls, sinks, functions and statements."""

    def value(self, node: Any) -> Out:
        if node is None:
            return Out()
        kind = node.type
        if kind in _INERT:
            return Out()  # a literal holds nothing (and a padded array must not use up the cap)
        self.count += 1
        if self.count > MAX_NODES:
            return Out()
        if kind in ("identifier", "shorthand_property_identifier"):  # {token}: the variable
            known = self.env.get(_text(node))
            return known.copy() if known is not None else Out()
        if kind in ("member_expression", "subscript_expression"):
            name = self.dotted(node)
            held = self.process_value(name)
            if held is not None:
                return held
            obj = node.child_by_field_name("object")
            if obj is not None and self.dotted(obj) == "process.env":
                return Out({Taint("env-all", "process.env[…]")})
            return self.value(obj)
        if kind in ("string", "template_string", "binary_expression"):
            out = Out()
            for child in node.named_children:
                if child.type == "template_substitution":
                    for inner in child.named_children:
                        out.merge(self.value(inner))
                elif child.type not in ("string_fragment", "escape_sequence"):
                    out.merge(self.value(child))
            folded = self.fold(node)
            found = credential_in(folded) if folded and len(folded) < 4096 else None
            if found:
                out.taint.add(source_taint(found))
            return out
        if kind == "call_expression":
            return self.call(node)
        if kind == "new_expression":
            ctor = self.dotted(node.child_by_field_name("constructor")) or ""
            args = node.child_by_field_name("arguments")
            out = Out()
            for arg in args.named_children if args is not None else []:
                out.merge(self.value(arg))
            if ctor == "Function":
                self.ran(node, out, "new Function")
                code = (
                    self.fold(args.named_children[-1])
                    if args is not None and args.named_children
                    else None
                )
                if code and "*" not in code:
                    inner = JsFacts(shell=self.facts.shell)
                    analyse_javascript(
                        code,
                        first_line=self.line(node),
                        embed=self.embed,
                        facts=inner,
                        returns=self.returns,
                    )
                    self.merge_facts(inner)
            if ctor in ("WebSocket", "net.Socket", "XMLHttpRequest"):
                self.sockets = True
            return out
        if kind in ("arrow_function", "function_expression", "function"):
            self.function(node, Out())
            return Out()
        out = Out()
        for child in node.named_children:
            out.merge(self.value(child))
        return out

    def ran(self, node: Any, what: Out, how: str) -> None:
        if what.decoded:
            self.facts.decode_exec.append((self.line(node), how))
        elif what.downloaded:
            self.facts.download_exec.append((self.line(node), how))

    def call(self, node: Any) -> Out:
        func = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        args = list(args_node.named_children) if args_node is not None else []
        name = self.dotted(func) if func is not None else ""
        name = name or ("import" if func is not None and func.type == "import" else "")
        for scope in _GLOBAL_SCOPES:  # globalThis["ev" + "al"](…) is eval(…)
            if name.startswith(scope):
                name = name[len(scope) :]
                break
        if name == "constructor.constructor" or name.endswith(".constructor.constructor"):
            name = "Function"  # [].constructor.constructor(code): the Function constructor
        short = name.rsplit(".", 1)[-1]
        line = self.line(node)
        receiver = Out()
        if func is not None and func.type == "member_expression":
            receiver = self.value(func.child_by_field_name("object"))
        elif func is not None and func.type in (
            "new_expression",
            "call_expression",
            "parenthesized_expression",
        ):
            receiver = self.value(func)  # new Function(code)(), (0, eval)(x)
        values = [
            self.value(a) if a.type not in ("arrow_function", "function_expression") else Out()
            for a in args
        ]
        result = receiver.copy()
        for out in values:
            result.merge(out)
        if name in ("require", "import") and args:
            # A file an earlier step saved downloaded or decoded code to, loaded as a module.
            saved = self.facts.shell.tainted_files.get(self.fold(args[0]) or "")
            if saved is not None:
                self.ran(node, saved, f"{name} of a saved download")
            return Out()
        if name in ("require", "import", "Deno.env.toObject", "Deno.env.get"):
            return _known_call(name, self.fold(args[0]) if args else None)
        if short in _READS or name == "Bun.file" or name.endswith(tuple(f".{r}" for r in _READS)):
            for arg in args[:1]:
                folded = self.fold(arg)
                found = credential_in(folded) if folded else None
                if found:
                    taint = source_taint(found)
                    self.facts.reads.append((line, taint))
                    result.taint.add(taint)
        if name in ("atob", "unescape", "decodeURIComponent", "decodeURI") or (
            name == "Buffer.from" and len(args) > 1 and self.fold(args[1]) in ("base64", "hex")
        ):
            result.decoded = True
        if short == "toString" and receiver.decoded:
            result.decoded = True
        if (
            name
            in (
                "eval",
                "vm.runInNewContext",
                "vm.runInThisContext",
                "vm.runInContext",
                "Function",
                "setTimeout",
                "setInterval",
            )
            and args
        ):
            if name not in ("setTimeout", "setInterval") or args[0].type in (
                "string",
                "template_string",
                "identifier",
            ):
                self.ran(node, values[0], name)
            code = self.fold(args[0])
            if code and "*" not in code and name not in ("setTimeout", "setInterval"):
                inner = JsFacts(shell=self.facts.shell)
                analyse_javascript(
                    code, first_line=line, embed=self.embed, facts=inner, returns=self.returns
                )
                self.merge_facts(inner)
        if short in _EXEC_NAMES and (
            name.startswith("child_process")
            or short in ("execSync", "spawnSync", "execFileSync")
            or "child_process" in self.aliases.values()
        ):
            result.merge(self.run_shell(node, args, values, short, line))
        self.sink(node, name, short, args, values, receiver, line, result)
        if (
            name in ("fetch", "axios.get")
            or (short in ("get", "request") and name.split(".")[0] in ("http", "https", "axios"))
            or (short == "on" and receiver.downloaded)
        ):  # before its callbacks are read: they get the response (res.on: its chunks)
            result.downloaded = True
        for arg in args:
            if arg.type in ("arrow_function", "function_expression"):
                self.function(arg, result if short != "then" else receiver)
        returned = self.returns.get(short)
        if returned is not None:
            result.merge(returned)
        if (
            func is not None
            and func.type == "member_expression"
            and short in ("push", "assign", "set", "append", "concat")
        ):
            obj = func.child_by_field_name("object")
            if obj is not None and obj.type == "identifier":
                merged = Out()
                for out in values:
                    merged.merge(out)
                self.env.setdefault(_text(obj), Out()).merge(merged)
        return result

    def merge_facts(self, inner: JsFacts) -> None:
        self.facts.sends += inner.sends
        self.facts.reads += inner.reads
        self.facts.decode_exec += inner.decode_exec
        self.facts.download_exec += inner.download_exec
        self.facts.persistence += inner.persistence

    def run_shell(self, node: Any, args: list, values: list[Out], short: str, line: int) -> Out:
        if not args:
            return Out()
        first = args[0]
        variables: dict[str, Out] = {}
        if values[0].decoded or values[0].downloaded:
            self.ran(node, values[0], f"child_process.{short}")
        if (
            short in ("spawn", "spawnSync", "execFile", "execFileSync")
            and len(args) > 1
            and args[1].type == "array"
        ):
            words = [self.fold(first) or "cmd"]
            for index, elt in enumerate(args[1].named_children):
                folded = self.fold(elt)
                if folded is not None and "*" not in folded:
                    words.append("'" + folded.replace("'", "'\\''") + "'")
                else:
                    var = f"__js{index}"
                    variables[var] = self.value(elt)
                    words.append(f'"${var}"')
            text = " ".join(words)
            if words[0].split("/")[-1] in ("sh", "bash", "cmd.exe", "powershell"):
                self.shell_spawn = True
        else:
            folded = self.fold(first)
            if folded is None:
                return values[0]
            text = folded.replace("*", "$__js")
            variables["__js"] = values[0]
        return analyse_shell(
            text,
            first_line=line,
            depth=1,
            variables=variables,
            tainted_files=self.facts.shell.tainted_files,
            embed=self.embed,
            facts=self.facts.shell,
        )

    def _request_host(self, node: Any) -> str | None:
        """For ``https.request({...}).end(data)``: the host the chained request names."""
        func = node.child_by_field_name("function")
        obj = (
            func.child_by_field_name("object")
            if func is not None and func.type == "member_expression"
            else None
        )
        if obj is None or obj.type != "call_expression":
            return None
        inner = self.dotted(obj.child_by_field_name("function")) or ""
        if not inner.endswith(("http.request", "https.request", "http.get", "https.get")):
            return None
        args = obj.child_by_field_name("arguments")
        first = args.named_children[0] if args is not None and args.named_children else None
        opts = self.options(first)
        for key in ("hostname", "host"):
            if key in opts:
                return self.fold(opts[key]) or ""
        return host_of(self.fold(first)) or "" if first is not None else ""

    def options(self, node: Any) -> dict[str, Any]:
        found: dict[str, Any] = {}
        if node is None or node.type != "object":
            return found
        for pair in node.named_children:
            if pair.type == "pair":
                key = pair.child_by_field_name("key")
                value = pair.child_by_field_name("value")
                if key is not None and value is not None:
                    found[_text(key).strip("'\"")] = value
            elif pair.type == "shorthand_property_identifier":
                found[_text(pair)] = pair
        return found

    def sink(
        self,
        node: Any,
        name: str,
        short: str,
        args: list,
        values: list[Out],
        receiver: Out,
        line: int,
        result: Out,
    ) -> None:
        body: set[Taint] = set()
        header: set[Taint] = set()
        host = None
        via = name or short
        if name == "fetch" or name.endswith(".fetch"):
            host = host_of(self.fold(args[0])) if args else None
            body |= values[0].taint if values else set()
            opts = self.options(args[1]) if len(args) > 1 else {}
            method = self.fold(opts["method"]) if "method" in opts else None
            if "body" in opts:
                body |= self.value(opts["body"]).taint
            if "headers" in opts:
                header |= self.value(opts["headers"]).taint
            if not (body or header or (method or "").upper() in ("POST", "PUT", "PATCH")):
                return
            via = f"fetch {method or ''}".strip()
        elif name in _SEND_CALLS or name in _GETTERS:
            host = host_of(self.fold(args[0])) if args else None
            if (
                name in ("axios", "axios.request", "$.ajax", "jQuery.ajax")
                and args
                and args[0].type == "object"
            ):
                opts = self.options(args[0])
                host = host_of(self.fold(opts.get("url"))) if "url" in opts else None
                for key, value in opts.items():
                    (header if key == "headers" else body).update(self.value(value).taint)
            else:
                for index, value in enumerate(values):
                    if (
                        index == len(values) - 1
                        and len(values) > 1
                        and args[index].type == "object"
                    ):
                        opts = self.options(args[index])
                        for key, item in opts.items():
                            (header if key in ("headers", "auth") else body).update(
                                self.value(item).taint
                            )
                    else:
                        body |= value.taint
            if name in _GETTERS and not body and not header:
                return
        elif short in ("request", "get") and name.split(".")[0] in ("http", "https"):
            opts = self.options(args[0]) if args else {}
            host = (
                self.fold(opts["hostname"])
                if "hostname" in opts
                else self.fold(opts.get("host"))
                if "host" in opts
                else host_of(self.fold(args[0]) if args else None)
            )
            parent = node.parent
            while parent is not None and parent.type not in ("variable_declarator", "program"):
                parent = parent.parent
            if parent is not None and parent.type == "variable_declarator":
                target = parent.child_by_field_name("name")
                if target is not None:
                    self.hosts[_text(target)] = host or ""
            if "headers" in opts:
                header |= self.value(opts["headers"]).taint
            if args and args[0].type != "object":
                body |= values[0].taint  # https.get(url + secret): the URL carries it
            for key in ("path", "search"):
                if key in opts:
                    body |= self.value(opts[key]).taint
            if not header and not body:
                return
        elif short in _WRITE_METHODS and self._request_host(node) is not None:
            host = self._request_host(node) or None
            for value in values:
                body |= value.taint
            if not body:
                return
        elif short in _WRITE_METHODS and name.split(".")[0] in self.hosts:
            host = self.hosts[name.split(".")[0]] or None
            for value in values:
                body |= value.taint
            if not body:
                return
        elif short in ("write", "send") and (
            self.sockets or name.split(".")[0] in ("socket", "ws", "client", "conn", "xhr")
        ):
            for value in values:
                body |= value.taint
            if not body and short != "send":
                return
        elif short in _DNS_METHODS and (
            name.startswith("dns") or name.split(".")[0] in self.resolvers
        ):
            for value in values:
                body |= value.taint
            if not body:
                return
            via = f"{name} (DNS)"
            host = "a DNS lookup"
        elif name in _CLIPBOARD:
            for value in values:
                body |= value.taint
            self.facts.sends.append(Send(line, None, name, body=body, sink="clipboard"))
            return
        elif short in _COPIES and (name.startswith("fs") or short.endswith("Sync")):
            # fs.cpSync(~/.aws, "settings/aws"): the copy holds what the store holds.
            source = self.fold(args[0]) if args else None
            target = self.fold(args[1]) if len(args) > 1 else None
            found = credential_in(source) if source else None
            if found and target:
                copied = Out({source_taint(found)})
                self.facts.shell.tainted_files.setdefault(target, Out()).merge(copied)
            return
        elif name in _FILE_WRITES or short in ("writeFileSync", "appendFileSync"):
            path = self.fold(args[0]) if args else None
            if path:
                persisted = path_persistence(path)
                if persisted:
                    severity = "error" if "authorized_keys" in persisted else "warning"
                    self.facts.persistence.append((line, f"writes {persisted}", severity))
                content = values[1].taint if len(values) > 1 else set()
                if len(values) > 1 and (values[1].downloaded or values[1].decoded):
                    saved = Out(set(), values[1].decoded, values[1].downloaded)
                    self.facts.shell.tainted_files.setdefault(path, Out()).merge(saved)
                if path.startswith(("/", "~", "../", "*")) and content:
                    self.facts.sends.append(Send(line, path, name, body=set(content), sink="file"))
            return
        elif name in ("net.connect", "net.createConnection", "tls.connect"):
            self.sockets = True
            return
        else:
            return
        result.downloaded = True
        # The response is what the server sends back: the token or data the request carried is
        # not in it (`fetch(data.data[0].url)` of an image URL an API returned sends no key).
        result.taint = set()
        self.facts.sends.append(Send(line, host, via, body, header, text=_text(node)))

    # --- statements -------------------------------------------------------------------------

    def function(self, node: Any, params_out: Out) -> None:
        saved = dict(self.env)
        params = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
        bound: set[str] = set()
        if params is not None:
            names = [params] if params.type == "identifier" else params.named_children
            for param in names:
                ident = (
                    param
                    if param.type == "identifier"
                    else next((c for c in param.named_children if c.type == "identifier"), None)
                )
                if ident is not None:
                    bound.add(_text(ident))
                    self.env[_text(ident)] = params_out.copy()
        body = node.child_by_field_name("body")
        returned = Out()
        if body is not None and body.type.endswith("assignment_expression"):
            self.assign(body)  # chunk => body += chunk
        elif body is not None:
            returned = self.block(body) if body.type == "statement_block" else self.value(body)
        name_node = node.child_by_field_name("name")
        if name_node is not None and (returned.taint or returned.decoded):
            self.returns.setdefault(_text(name_node), Out()).merge(returned)
        self.env = _outlived(saved, self.env, bound)
        self.last_returned = returned

    last_returned: Out = Out()

    def named_function(self, node: Any, name: str) -> None:
        self.function(node, Out())
        if self.last_returned.taint or self.last_returned.decoded:
            self.returns.setdefault(name, Out()).merge(self.last_returned)

    def block(self, node: Any) -> Out:
        returned = Out()
        for child in node.named_children:
            returned.merge(self.statement(child))
        return returned

    def statement(self, node: Any) -> Out:
        self.count += 1
        if self.count > MAX_NODES:
            return Out()
        kind = node.type
        if kind in ("lexical_declaration", "variable_declaration"):
            for decl in node.named_children:
                if decl.type == "variable_declarator":
                    self.declare(decl)
            return Out()
        if kind == "expression_statement":
            for child in node.named_children:
                if child.type in ("assignment_expression", "augmented_assignment_expression"):
                    self.assign(child)
                else:
                    self.value(child)
            return Out()
        if kind == "return_statement":
            out = Out()
            for child in node.named_children:
                out.merge(self.value(child))
            return out
        if kind == "function_declaration":
            self.function(node, Out())
            return Out()
        if kind in ("for_in_statement",):
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            out = self.value(right)
            if left is not None:
                for ident in _identifiers(left):
                    self.env[ident] = out.copy()
            body = node.child_by_field_name("body")
            return self.statement(body) if body is not None else Out()
        if kind == "comment":
            return Out()
        if kind == "import_statement":
            self.imported(node)
            return Out()
        if kind == "export_statement":
            return self.block(node)
        if kind == "class_declaration":
            body = node.child_by_field_name("body")
            if body is not None:
                for member in body.named_children:
                    if member.type == "method_definition":
                        self.function(member, Out())
            return Out()
        returned = Out()
        for child in node.named_children:
            if child.type.endswith("statement") or child.type in (
                "statement_block",
                "else_clause",
                "catch_clause",
                "finally_clause",
                "switch_body",
                "switch_case",
                "lexical_declaration",
                "variable_declaration",
                "function_declaration",
            ):
                returned.merge(self.statement(child))
            else:
                self.value(child)
        return returned

    def imported(self, node: Any) -> None:
        """``import * as cp from "child_process"``, ``import { execSync as run } from …``: the
        names stand for the module's as ``require`` would make them."""
        source = node.child_by_field_name("source")
        module = _module_name(self.fold(source) or "") if source is not None else ""
        if not module:
            return
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":
                    self.aliases[_text(part)] = module
                elif part.type == "namespace_import":
                    for ident in part.named_children:
                        if ident.type == "identifier":
                            self.aliases[_text(ident)] = module
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        name = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias")
                        if name is not None:
                            local = _text(alias if alias is not None else name)
                            self.aliases[local] = f"{module}.{_text(name)}"

    def declare(self, decl: Any) -> None:
        target = decl.child_by_field_name("name")
        value = decl.child_by_field_name("value")
        if target is None:
            return
        if value is not None:
            if value.type == "new_expression" and target.type == "identifier":
                ctor = self.dotted(value.child_by_field_name("constructor")) or ""
                if ctor.endswith("Resolver"):
                    self.resolvers.add(_text(target))
            module = self.dotted(value) if value.type == "call_expression" else None
            if module and target.type == "identifier":
                self.aliases[_text(target)] = module
            if target.type == "object_pattern" and module:
                for ident in _identifiers(target):
                    self.aliases[ident] = f"{module}.{ident}"
            folded = self.fold(value)
            if folded is not None and target.type == "identifier":
                self.consts[_text(target)] = folded
        out = self.value(value) if value is not None else Out()
        for ident in _identifiers(target):
            self.env[ident] = out.copy()

    def assign(self, node: Any) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        out = self.value(right)
        if left is None:
            return
        if (
            right is not None
            and right.type in ("arrow_function", "function_expression", "function")
            and left.type == "member_expression"
        ):
            # exports.settings = () => ...: summarised under its property name.
            prop = left.child_by_field_name("property")
            if prop is not None:
                self.named_function(right, _text(prop))
        if left.type == "identifier":
            augmented = node.type == "augmented_assignment_expression"  # body += chunk
            self.env[_text(left)] = _joined(self.env.get(_text(left)), out) if augmented else out
        elif left.type in ("member_expression", "subscript_expression"):
            root = left
            while root.type in ("member_expression", "subscript_expression"):
                obj = root.child_by_field_name("object")
                if obj is None:
                    break
                root = obj
            if root.type == "identifier" and (out.taint or out.decoded):
                self.env.setdefault(_text(root), Out()).merge(out)


def _identifiers(node: Any) -> list[str]:
    if node.type in ("identifier", "shorthand_property_identifier_pattern"):
        return [_text(node)]
    found = []
    for child in node.named_children:
        found += _identifiers(child)
    return found


def _b64(raw: str) -> str | None:
    try:
        return base64.b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8", "replace")
    except (ValueError, binascii.Error):
        return None


def parse_javascript(text: str) -> Any:
    """The tree-sitter tree of a JavaScript text (trees are not changed by the walk: one can be
    read any number of times). A text the JavaScript grammar cannot read whole (type
    annotations, interfaces, ``as`` casts) is read with TypeScript's grammar, whose trees name
    expressions and statements as JavaScript's do."""
    data = text.encode("utf-8", "surrogatepass")
    tree = _parser().parse(data)
    if not tree.root_node.has_error:
        return tree
    for tsx in (False, True):
        typed = _ts_parser(tsx).parse(data)
        if not typed.root_node.has_error:
            return typed
    return tree


def analyse_javascript(
    text: str,
    *,
    first_line: int = 1,
    embed: Embed | None = None,
    facts: JsFacts | None = None,
    returns: dict[str, Out] | None = None,
    tree: Any = None,
    argv: Out | None = None,
) -> JsFacts:
    """What a JavaScript unit does with data.

    Args:
        text: the source.
        first_line: the file line of its first line.
        embed: reads code of another language it runs.
        facts: where to gather the facts (a new one if None).
        returns: what the bundle's functions return, by name (read and extended).
        tree: ``parse_javascript(text)``, when the caller has it (a bundle's scripts are read
            twice: once for what their functions return, then for their flows).
        argv: what its arguments carry (``node -e CODE ~/.aws/credentials``), when run with some.
    Returns:
        The facts.
    """
    own = facts if facts is not None else JsFacts()
    if tree is None:
        tree = parse_javascript(text)
    walker = _Js(own, first_line, embed, returns)
    walker.argv = argv or Out()
    try:
        walker.block(tree.root_node)
    except RecursionError:
        own.too_deep = True
    if walker.sockets and walker.shell_spawn:
        own.reverse_shell.append((first_line, "a socket wired to a spawned shell"))
    return own


def _joined(before: Out | None, added: Out) -> Out:
    joined = before.copy() if before is not None else Out()
    joined.merge(added)
    return joined


def _outlived(saved: dict[str, Out], inner: dict[str, Out], bound: set[str]) -> dict[str, Out]:
    """The variables after a function's call: a closure's write of downloaded or decoded data
    to an outer variable (``chunks += data``) outlives the call; its parameters do not."""
    for key, value in inner.items():
        fresh = value is not saved.get(key) and (value.downloaded or value.decoded)
        if key in saved and key not in bound and fresh:
            saved[key] = _joined(saved[key], value)
    return saved


# fs.readFileSync(path.join("/srv/data", name)) where name comes from the request or the command
# line, in a file that never checks the result stays inside the folder.
_JS_OPEN_RE = re.compile(
    r"\b(?:readFileSync|readFile|createReadStream|sendFile|openSync|open)\(\s*"
    r"path\.(?:join|resolve)\(\s*(?:(['\"])/[^'\"]*\1|__dirname|[A-Z_][A-Z0-9_]*)\s*,\s*"
    r"([A-Za-z_$][\w$]*)\s*\)"
)
_JS_INPUT_RE = (
    r"(?:const|let|var)\s+{name}\s*=\s*[^;\n]*(?:\breq\b|\brequest\b|searchParams|\.query\b|"
    r"\.params\b|process\.argv|\.body\b)"
)
_JS_CONFINED_RE = re.compile(r"\.normalize\(|\.startsWith\(|path\.relative\(|basename\(|realpath")


def traversals(text: str) -> list[tuple[int, str]]:
    """Files read at a fixed folder joined with a request's or the command line's value, in a
    file that makes no check keeping the path inside the folder (path traversal).

    Args:
        text: JavaScript source.
    Returns:
        (line, what) per such read.
    """
    if "path." not in text or _JS_CONFINED_RE.search(text):
        return []
    found = []
    for hit in _JS_OPEN_RE.finditer(text):
        name = hit.group(2)
        if re.search(_JS_INPUT_RE.format(name=re.escape(name)), text):
            line = text.count("\n", 0, hit.start()) + 1
            found.append((line, f"reads a path the request's {name} extends, unchecked"))
    return found
