"""A pytest plugin that reports what really ran, for the loop's verdict (pytest, stdlib only).

The loop copies this file into a private directory, puts that directory on ``PYTHONPATH`` and
loads it with ``-p`` (through ``PYTEST_ADDOPTS``), so it works with whatever interpreter the
verify command starts. It writes one JSON object per line to a file descriptor the loop opened
on a file outside the workspace: the start (the plugins loaded from entry
points, how many runner parts it fingerprinted), the collected test ids, every collection
error, every setup/call/teardown outcome, and a closing ``finish`` line written at
``pytest_unconfigure`` — after pytest printed its summary — with pytest's final exit status,
every plugin registration of the run and the runner parts found changed. A run that ends
without that line (``os._exit(0)`` in the code under test) is incomplete.

The code under test runs in this process, so nothing here is out of its reach; the plugin makes
reaching it take the steps the loop's patch review marks. Its state lives in the cells of the
hook functions, not on the module: the descriptor (moved to a random high number), the nonce
(read once from a pipe, never in the environment, so not in ``/proc/self/environ``; a key that
authenticates every line and is never written, so reading the report teaches nothing), the
fingerprints of the runner taken once its plugins are loaded and just before the first conftest
(the first code of the workspace) is imported. The loop checks the report from outside:
against the process's exit status, pytest's own summary line, and the baseline run's plugins,
registrations and fingerprint count.

``REFERENCE_LOOP_COLLECT`` names a JSON file ``{"only": [paths]}``: test files outside that list
are not collected at all (not imported), so a module the attempt added cannot run beside the
pinned tests and change their outcome.

The variables are removed from the environment as soon as the plugin is imported (the autoload
switch at configure, after pytest read it): a test that starts pytest again (pytester, a
subprocess) gets a plain pytest, and the descriptors are not inherited by anything it starts.

PYTEST_DONT_REWRITE: pytest would otherwise rewrite this module's (absent) asserts on every run.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import types
from operator import is_
from typing import Any

import pytest

_MAX_MSG = 600
# Packages whose every loaded module is fingerprinted, and single modules: unittest's TestCase
# (its assertEqual is the check a unittest-style test runs).
_RUNNER_PACKAGES = ("pytest", "_pytest", "pluggy", "builtins", "unittest.case")
# The audit events of a process started, and the words of a command that runs tests.
_SPAWNS = frozenset(("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system"))
_RUNS_TESTS = re.compile(r"(?:-m)?(?:py\.?test|unittest|nose2?)\b")


def _fingerprint(value: Any) -> tuple[Any, ...]:
    """What a runner part is made of: the object, and for a function its code, defaults and
    keyword defaults (swapping ``__code__`` keeps the function object)."""
    if isinstance(value, type):
        return (value,)
    if isinstance(value, property):
        return (value, value.fget)
    func = getattr(value, "__func__", value)  # staticmethod, classmethod, bound method
    return (
        value,
        getattr(func, "__code__", None),
        getattr(func, "__defaults__", None),
        getattr(func, "__kwdefaults__", None),
    )


# Runner parts whose fingerprint is the object alone: a class, a property (its getter cannot be
# reassigned), and the built-in kinds of callable, which hold no code or defaults to swap.
_FIXED = (
    type,
    property,
    type(len),  # builtin_function_or_method
    type(str.join),  # method_descriptor
    type(object.__init__),  # wrapper_descriptor
    type(object().__str__),  # method-wrapper
    type(dict.__dict__["fromkeys"]),  # classmethod_descriptor
)
# Wrappers whose __func__ cannot be reassigned: a plain function inside one is tracked as a
# function (its code and defaults).
_WRAPPERS = (staticmethod, classmethod, type(_fingerprint.__get__(0)))
_FUNCTION = type(_fingerprint)
_FIELDS = frozenset(("__code__", "__defaults__", "__kwdefaults__"))


class Identity(tuple[Any, ...]):
    """The runner's fingerprints: one ``(prefix, holder, names, objects)`` group per place parts
    sit in (``sys.modules`` itself, a module's namespace, a class), each part keyed
    ``prefix + name``; beside them the plain functions among the parts (unwrapped from their
    method wrappers, whose ``__func__`` cannot be reassigned) with their code, defaults and
    keyword defaults, and the parts of any other kind with their whole fingerprint. Its length
    is the count of parts the report gives.

    A check compares by identity (``is``; an object can say it equals anything) a whole group
    at a time, and looks part by part only where a group differs, to name what changed.
    """

    size: int
    functions: tuple[Any, ...]
    held: tuple[tuple[Any, ...], ...]  # the functions' code, defaults and keyword defaults
    others: tuple[tuple[str, Any, str, tuple[Any, ...]], ...]

    def __len__(self) -> int:
        return self.size


def _fields(functions: tuple[Any, ...]) -> tuple[tuple[Any, ...], ...]:
    from operator import attrgetter

    return tuple(
        tuple(map(attrgetter(name), functions))
        for name in ("__code__", "__defaults__", "__kwdefaults__")
    )


def _unwrapped(value: Any) -> Any:
    """The plain function a part runs, where its fingerprint is that function's; else None."""
    kind = type(value)
    if kind is _FUNCTION:
        return value
    if kind in _WRAPPERS and type(value.__func__) is _FUNCTION:
        return value.__func__
    return None


def _runner_identity(names: tuple[str, ...]) -> Identity:
    """Every function and class (and every function a class holds) of the runner's loaded
    modules, fingerprinted: code under test that patches the runner (a ``runtest`` that runs
    nothing, a report that always passes, a swapped ``__code__``) changes one of them."""
    loaded = [
        (name, module)
        for name, module in list(sys.modules.items())
        if module is not None and (name.split(".", 1)[0] in names or name in names)
    ]
    groups: list[tuple[str, Any, tuple[str, ...], tuple[Any, ...]]] = [
        ("", None, tuple(n for n, _m in loaded), tuple(m for _n, m in loaded))
    ]
    functions: dict[int, Any] = {}
    others: list[tuple[str, Any, str, tuple[Any, ...]]] = []

    def place(prefix: str, holder: Any, found: list[tuple[str, Any]]) -> None:
        keys, values = zip(*found, strict=True) if found else ((), ())
        groups.append((prefix, holder, keys, values))
        for key, value in found:
            kind = type(value)
            if kind is _FUNCTION:
                functions[id(value)] = value
            elif kind in _WRAPPERS and type(value.__func__) is _FUNCTION:
                functions[id(value.__func__)] = value.__func__
            elif not isinstance(value, _FIXED):
                others.append((prefix + key, holder, key, _fingerprint(value)))

    for name, module in loaded:
        namespace = vars(module)
        found = [(attr, value) for attr, value in list(namespace.items()) if callable(value)]
        place(name + ".", namespace, found)
        for attr, value in found:
            if isinstance(value, type) and value.__module__ == name:
                place(
                    f"{name}.{attr}.",
                    value,
                    [
                        (key, member)
                        for key, member in list(vars(value).items())
                        if callable(member)
                        or isinstance(member, (staticmethod, classmethod, property))
                    ],
                )
    table = Identity(groups)
    table.size = sum(len(keys) for _p, _h, keys, _v in groups)
    table.functions = tuple(functions.values())
    table.held = _fields(table.functions)
    table.others = tuple(others)
    return table


def _getter(holder: Any) -> Any:
    if holder is None:
        return sys.modules.get
    if type(holder) is dict:
        return holder.get
    return holder.__dict__.get


def _swapped(identity: tuple[Any, ...]) -> set[Any]:
    """The table's functions whose code, defaults or keyword defaults are no longer the ones it
    took. Each read of those is an audit event: with the run's hook installed, it watches the
    writes instead (``object.__setattr__``)."""
    functions = getattr(identity, "functions", ())
    held = getattr(identity, "held", None)
    fields = _fields(functions)
    if held is None or all(all(map(is_, n, w)) for n, w in zip(fields, held, strict=True)):
        return set()
    return {
        function
        for index, function in enumerate(functions)
        if any(n[index] is not w[index] for n, w in zip(fields, held, strict=True))
    }


def _changed(identity: tuple[Any, ...], swapped: set[Any] | None = None) -> list[str]:
    """The keys whose object is no longer where it was, or whose code, defaults or getter were
    swapped (compared by identity, ``is`` in C loops: an object can say it equals anything, and
    with the run's audit hook installed every ``id()`` call is an audit event). ``swapped``:
    the functions whose fields changed, when known already (None: read them now)."""
    out: list[str] = []
    for prefix, holder, keys, values in identity:
        now = tuple(map(_getter(holder), keys))
        if not all(map(is_, now, values)):
            out += [prefix + k for k, a, b in zip(keys, now, values, strict=True) if a is not b]
    if swapped is None:
        swapped = _swapped(identity)
    if swapped:
        for prefix, _holder, keys, values in identity:
            out += [
                prefix + key
                for key, value in zip(keys, values, strict=True)
                if _unwrapped(value) in swapped
            ]
    for key, holder, attr, mark in getattr(identity, "others", ()):
        value = _getter(holder)(attr)
        if value is not mark[0] or any(
            a is not b for a, b in zip(_fingerprint(value), mark, strict=True)
        ):
            out.append(key)
    return list(dict.fromkeys(out))


def _plugin() -> dict[str, Any]:
    """The hooks, and everything they share held in their cells (see the module docstring)."""
    import atexit
    import gc
    import hashlib
    import hmac
    import json
    from pathlib import Path

    # Registered first, so run last at exit: every check above is written at
    # pytest_unconfigure, before exit, and none depends on this. Frozen, the objects the
    # fingerprint table holds alive (and the rest of the run's) are not walked by the
    # interpreter's closing collections.
    atexit.register(gc.freeze)
    environ = os.environ
    write, dumps, fstat = os.write, json.dumps, os.fstat
    fd = _take_descriptor(environ.pop("REFERENCE_LOOP_REPORT_FD", None))
    # The nonce is a key: every line is authenticated with it, and it is never written out, so
    # a reader of the report (or of this process's environment) learns nothing to forge with.
    mac = hmac.new(
        _take_nonce(environ.pop("REFERENCE_LOOP_NONCE_FD", None)).encode(), digestmod=hashlib.sha256
    )
    collect = environ.pop("REFERENCE_LOOP_COLLECT", None)
    user_addopts = environ.pop("REFERENCE_LOOP_USER_ADDOPTS", None)
    workspace = environ.pop("REFERENCE_LOOP_NO_BYTECODE_FROM", None)
    append = environ.pop("REFERENCE_LOOP_APPEND_PATH", None)
    cache_dir = environ.pop("REFERENCE_LOOP_CACHE_DIR", None)
    user_autoload = environ.pop("REFERENCE_LOOP_USER_AUTOLOAD", None)
    # The kernel's guards (pytest_guard.py), before any code of the workspace is imported: no
    # debugging calls into a process, no writing under /proc. What the kernel lacks is reported.
    guard = environ.pop("REFERENCE_LOOP_GUARD", None)
    unguarded = list(__import__(guard).install()) if guard else []
    if workspace:
        _never_bytecode_from(workspace)
    untold: list[Any] = []  # the configs whose rewriting leaves a passing assert's text out
    _assertion_text_unread(untold)
    if append and append not in sys.path:
        # `python -m pytest` started with a safe path: the workspace is importable, but after
        # site-packages, so a module there cannot stand in for an installed one.
        sys.path.append(append)
    if user_addopts is not None:
        # PYTEST_ADDOPTS carried our -p; a pytest the tests start gets only the user's value.
        if user_addopts:
            environ["PYTEST_ADDOPTS"] = user_addopts
        else:
            environ.pop("PYTEST_ADDOPTS", None)
    only = _read_only(collect)
    # Every folder above a listed file is walked into, and no other.
    only_dirs = {str(parent) for p in only or () for parent in Path(p).parents}
    only_dirs.discard(".")
    # The pinned test files by (device, inode), and where code of the workspace other than a
    # test module or conftest opened one of them while the run ran (a hard link or another
    # name for the file is the same inode).
    watched: dict[tuple[int, int], str] = {}
    reads: dict[str, str] = {}
    # Pinned tests run by code of the workspace other than the tests (the test's code entered
    # below the code under test, or a process started to run the runner or a test file): a
    # test's id or the command -> the file of the code that did it.
    ran: dict[str, str] = {}
    # Each collected test's own code object by id (the replay's disguised copies added).
    item_codes: dict[int, tuple[Any, str]] = {}
    # A forked child's findings go to the parent through this pipe (its memory dies with it).
    told = os.pipe()
    forked: list[bool] = []
    cleared: list[Any] = [None]  # the test's frame last found called by the runner alone
    tracked: set[Any] = set()  # the fingerprinted functions, once the hook watches them
    swapped: set[Any] = set()  # those whose code or defaults were written after the table
    hooked: list[bool] = []
    lies: list[str] = []  # equalities that held between different values, this test
    comparators: dict[int, frozenset[str]] = {}  # a test module's globals: what it brought in
    checked_base_equal: list[Any] = []  # the wrapper put on unittest's _baseAssertEqual
    # The workspace as its modules' code objects may name it (resolved, or as given).
    inside = (
        tuple({os.path.realpath(workspace) + os.sep, os.path.abspath(workspace) + os.sep})
        if workspace
        else ()
    )
    tests = frozenset(only or ())
    getframe, stat = sys._getframe, os.stat

    def opener(frame: Any) -> str | None:
        """The workspace file, other than a pinned test or a conftest, whose code is the
        nearest caller at or above ``frame`` (None: the runner or a test did it)."""
        while frame is not None and not frame.f_code.co_filename.startswith(inside):
            frame = frame.f_back
        if frame is None:
            return None
        name = frame.f_code.co_filename
        who = name[len(next(p for p in inside if name.startswith(p))) :]
        if who in tests or who.rsplit("/", 1)[-1] == "conftest.py":
            return None
        return who

    def found_run(test: str, who: str) -> None:
        if forked:
            with contextlib.suppress(OSError):
                write(told[1], (dumps({test: who}) + "\n").encode("utf-8", "replace"))
        ran.setdefault(test, who)

    def nested_run() -> None:
        """Refuse a pinned test's assertion when the test was entered from the code under
        test (an oracle trying answers against the tests: in this process or a fork of it):
        it neither passes nor says what was expected."""
        frame: Any = getframe(2)
        inner = who = first = None
        while frame is not None:
            code = frame.f_code
            hit = item_codes.get(id(code))
            if hit is not None and hit[0] is code:
                if who is not None:
                    found_run(inner or hit[1], who)
                    raise AssertionError("a pinned test run by the code under test")
                if first is None:
                    if frame is cleared[0]:
                        return  # this call of the test was walked already
                    first = frame
                inner = hit[1]
            elif inner is not None and who is None and code.co_filename.startswith(inside):
                who = opener(frame)
            frame = frame.f_back
        cleared[0] = first

    def spawned(event: str, args: tuple[Any, ...]) -> None:
        # A process started by the code under test to run the runner or a pinned test file
        # (its program and arguments; the folder it starts in is not read).
        try:
            words: list[str] = []
            for arg in args[1:3] if event == "os.spawn" else args[:2]:
                if isinstance(arg, (str, bytes, os.PathLike)):
                    words += os.fsdecode(arg).split()
                elif isinstance(arg, (list, tuple)):
                    for a in arg:
                        if isinstance(a, (str, bytes, os.PathLike)):
                            words += os.fsdecode(a).split()
            if not any(
                _RUNS_TESTS.match(base) or base in names
                for base in (os.path.basename(w) for w in words)
            ) and not (modules and modules.search(" ".join(words))):
                return
            who = opener(getframe(2))
            if who is not None:
                found_run(f"a process running {' '.join(words)[:200]}", who)
        except Exception:  # a hook must never break the run it watches
            return

    names = frozenset(t.rsplit("/", 1)[-1] for t in tests)
    # A pinned test module named in a command (``python -c "import test_calc"``).
    stems = sorted({n[:-3] for n in names if n.endswith(".py")})
    either = "|".join(map(re.escape, stems))
    modules = re.compile(rf"\b(?:{either})\b") if stems else None

    def audit(event: str, args: tuple[Any, ...]) -> None:
        # An audit hook cannot be removed: it sees every open of the run, however the code
        # under test found the file (a walk, a glob, an ast parse of every .py), every
        # process it starts, and every write of a function's code or defaults (the runner's
        # are fingerprinted).
        if event == "object.__setattr__":
            target = args[0]
            if type(target) is _FUNCTION and target in tracked and args[1] in _FIELDS:
                swapped.add(target)
            return
        if event in _SPAWNS:
            spawned(event, args)
            return
        if event != "open" or not watched:
            return
        try:
            path = args[0]
            if isinstance(path, int):
                return
            found = stat(path)
            test = watched.get((found.st_dev, found.st_ino))
            if test is None:
                return
            who = opener(getframe(1))
            if who is None:
                return  # the runner itself, or a test reading its own files
            reads.setdefault(test, who)
        except Exception:  # a hook must never break the run it watches
            return
        if forked:  # a fork's reads die with it: it may not read the tests at all
            found_run(f"{test} opened in a forked process", who)
            raise PermissionError(f"{test}: a pinned test file")

    def watch(rootpath: Any) -> None:
        # Installed once collection starts (every audit event after costs a Python call, and
        # half a run's come before: pytest's own configuration). The runner's functions are
        # read once here, with no hook yet; from here the hook sees every write to them.
        if hooked:
            return
        swapped.update(_swapped(identity))
        tracked.update(getattr(identity, "functions", ()))
        if inside and tests:
            for rel in tests:
                with contextlib.suppress(OSError):
                    found = stat(os.path.join(str(rootpath), rel))
                    watched[(found.st_dev, found.st_ino)] = rel
        hooked.append(True)
        os.register_at_fork(after_in_child=lambda: forked.append(True))
        sys.addaudithook(audit)

    identity: tuple[Any, ...] = ()  # taken when conftests are about to load (see below)
    registered: list[str] = []
    held: list[Any] = []  # the session, once it starts
    mine: list[Any] = []  # the plugin objects pytest registered with these hooks
    durations: dict[str, float] = {}  # each test's time (setup, call, teardown)
    # Each pinned test module, its path and the (name, module, attribute) its source imports.
    spaces: dict[int, tuple[Any, str, list[tuple[str, str, str]]]] = {}
    rebound: set[str] = set()  # "file::name" rebound while a test ran

    def emit(record: dict[str, Any]) -> None:
        if fd is None:
            return
        if record.get("e") == "finish":
            record["mac"] = mac.hexdigest()  # of every line before this one
        data = (dumps(record, separators=(",", ":")) + "\n").encode("utf-8", "replace")
        mac.update(data)
        try:
            while data:
                data = data[write(fd, data) :]
        except OSError:
            pass

    def tampered(config: Any) -> list[str]:
        changed = _changed(identity, swapped if hooked else None)
        folders: dict[str, str] = {}  # resolved now, once each: the run may have moved links
        for plugin in config.pluginmanager.get_plugins():
            path = getattr(plugin, "__file__", None)
            if not path:
                continue
            rel = _rel(path, config.rootpath, folders)
            if rel is not None and rel.rsplit("/", 1)[-1] != "conftest.py":
                changed.append(f"plugin registered from {rel}")
        for plugin in mine:
            for caller in config.pluginmanager.get_hookcallers(plugin) or ():
                for impl in caller.get_hookimpls():
                    if impl.plugin is plugin and impl.function is not hooks.get(caller.name):
                        changed.append(f"the report plugin's {caller.name} was replaced")
        session = held[0] if held else None
        for item in getattr(session, "items", None) or ():
            own = getattr(item, "__dict__", {})
            for name in ("runtest", "setup", "teardown", "repr_failure", "_getobj"):
                if name in own:
                    changed.append(f"{item.nodeid}: {name} replaced on the test item")
        try:
            moved = fd is not None and fstat(fd)[1:3] != where
        except OSError:
            moved = True
        if moved:
            changed.append("the report descriptor was pointed at another file")
        return sorted(changed)

    where = fstat(fd)[1:3] if fd is not None else None  # (inode, device) of the report

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(config: Any) -> None:
        nonlocal identity
        if not identity:  # a pytest started without its initial conftests (in-process)
            watch_unittest_equality()
            guard_nested_runs()
            identity = _runner_identity(_RUNNER_PACKAGES)
        if user_autoload is not None:
            # pytest read the switch already; a pytest the tests start gets the user's value.
            if user_autoload:
                environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = user_autoload
            else:
                environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        # Test modules are rewritten so that a passing assertion can be reported (pytest's
        # assertion-pass hook); the replay listens (see pytest_sessionfinish).
        with contextlib.suppress(AttributeError, TypeError):
            if not config.getini("enable_assertion_pass_hook"):
                untold.append(config)
            config._inicache["enable_assertion_pass_hook"] = True
        if cache_dir:
            # pytest's cache (--lf, --sw) lives outside the workspace, where an attempt cannot
            # plant a "last failed" list; set before the cache plugin reads the ini value.
            with contextlib.suppress(AttributeError, TypeError):
                config._inicache["cache_dir"] = cache_dir
        manager = config.pluginmanager
        mine.extend(
            p
            for p in manager.get_plugins()
            if getattr(p, "pytest_configure", None) is pytest_configure
        )
        emit(
            {
                "e": "start",
                "pytest": pytest.__version__,
                "rootdir": str(config.rootpath),
                "inifile": str(config.inipath) if config.inipath else None,
                "args": [str(a) for a in config.invocation_params.args],
                "only": sorted(only) if only is not None else None,
                "plugins": sorted(
                    {str(manager.get_name(p)) for p, _dist in manager.list_plugin_distinfo()}
                ),
                "identity": len(identity),
                "unguarded": unguarded,
            }
        )

    def guard_nested_runs() -> None:
        # The helpers every rewritten assertion of a test module calls: on a pass (the pass
        # hook is on) and on a failure (its message). Put before the runner is fingerprinted,
        # so code that puts pytest's own back is runner tampering.
        from _pytest.assertion import rewrite, util

        if getattr(rewrite._check_if_assertion_pass_impl, "__qualname__", "").startswith(
            "_plugin."
        ):
            return
        explain = rewrite._format_explanation

        def _check_if_assertion_pass_impl() -> bool:
            if item_codes:
                nested_run()
            return bool(util._assertion_pass)

        def _format_explanation(explanation: str) -> str:
            if item_codes:
                nested_run()
            return explain(explanation)

        rewrite._check_if_assertion_pass_impl = _check_if_assertion_pass_impl
        rewrite._format_explanation = _format_explanation

    def watch_unittest_equality() -> None:
        # unittest's assertEqual between values of two types (a returned int subclass against
        # the test's int) ends in _baseAssertEqual: a pass there between values that print as
        # different literals is the same lie as a passing `assert 5 == 6`.
        import unittest.case

        case: Any = unittest.case.TestCase
        base = case._baseAssertEqual
        if base in checked_base_equal:
            return

        def _baseAssertEqual(self: Any, first: Any, second: Any, msg: Any = None) -> None:
            if item_codes:
                nested_run()
            base(self, first, second, msg)
            try:
                shown = f"{first!r} == {second!r}"
            except Exception:  # a repr that fails is not judged
                return
            if len(shown) <= _MAX_MSG * 4 and _equal_by_value(shown) is False:
                lies.append(shown)

        checked_base_equal.append(_baseAssertEqual)
        case._baseAssertEqual = _baseAssertEqual

    def pytest_load_initial_conftests(early_config: Any) -> None:
        # The runner as its plugins left it (pytest's legacy shims, a plugin's own patches),
        # just before the first conftest — the first code of the workspace — is imported by
        # pytest's own (trylast) implementation of this hook.
        nonlocal identity
        watch_unittest_equality()
        guard_nested_runs()
        identity = _runner_identity(_RUNNER_PACKAGES)

    def pytest_plugin_registered(plugin: Any, plugin_name: str, manager: Any) -> None:
        registered.append(_describe(plugin, plugin_name))

    def pytest_sessionstart(session: Any) -> None:
        held.append(session)

    def pytest_collection(session: Any) -> None:
        # From here the test modules and the code they import are loaded (the events before,
        # pytest's own configuration, are half of a run's and need no watching).
        watch(session.config.rootpath)

    def pytest_ignore_collect(collection_path: Path, config: Any) -> bool | None:
        if only is None:
            return None
        rel = _rel(collection_path, config.rootpath)
        if rel is None or rel == ".":
            return None
        if collection_path.is_dir():
            return None if rel in only_dirs else True
        return None if rel in only else True

    def pytest_collectreport(report: Any) -> None:
        if report.failed:
            emit({"e": "collecterror", "id": report.nodeid, "msg": _short(report.longrepr)})

    def pytest_deselected(items: Any) -> None:
        emit({"e": "deselected", "ids": [item.nodeid for item in items]})

    def pytest_collection_finish(session: Any) -> None:
        emit({"e": "items", "ids": [item.nodeid for item in session.items]})
        # The test modules' names as their import left them: a name more than the untouched
        # tree's run had was put there by other code (a fixture the code under test slipped
        # in); a name the test's source imports (`from calc import add`) must be what that
        # module holds under it, after the import and after every test (a thread that swaps
        # the test's `add` for a right one, the code's own still wrong, is seen).
        root = session.config.rootpath
        folders: dict[str, str] = {}
        for item in session.items:
            own_code(item)
            module = getattr(item, "module", None)
            path = getattr(module, "__file__", None)
            if module is None or not path or id(module) in spaces:
                continue
            rel = _rel(path, root, folders) or path
            spaces[id(module)] = (module, rel, _from_imports(module, path))
        emit(
            {
                "e": "namespaces",
                "names": {rel: sorted(vars(m)) for m, rel, _i in spaces.values()},
            }
        )
        _imports_held()

    def own_code(item: Any) -> None:
        obj = getattr(item, "obj", None)
        code = getattr(getattr(obj, "__func__", obj), "__code__", None)
        if code is not None:
            item_codes[id(code)] = (code, item.nodeid)

    def _imports_held() -> None:
        modules = sys.modules
        for module, rel, imports in spaces.values():
            now = vars(module)
            for name, source, attr in imports:
                origin = modules.get(source)
                held = vars(origin).get(attr, spaces) if origin is not None else spaces
                if now.get(name, spaces) is not held:
                    rebound.add(f"{rel}::{name}")

    def assertion_passed(lineno: int, orig: str, expl: str) -> None:
        if _equal_by_value(expl) is False:
            lies.append(expl.split("\n", 1)[0])
            return
        # Values that do not print as literals: the assertion's own operands, kept in the
        # test frame's rewritten temporaries (this hook runs in pytest's helper, called there).
        try:
            frame = getframe(2)
            space = frame.f_globals
            brought = comparators.get(id(space))
            if brought is None:
                brought = comparators[id(space)] = _brought_by(space)
            shown = _lenient_equality(frame.f_locals, inside, brought)
        except Exception:  # an operand's __eq__ that raises is not judged
            return
        if shown:
            lies.append(shown)

    def pytest_runtest_logreport(report: Any) -> None:
        if report.when == "call":
            cleared[0] = None  # the test's frame (its locals) is not kept past it
            _imports_held()
            for shown in lies:
                emit({"e": "falseequal", "id": report.nodeid, "expl": shown[:_MAX_MSG]})
            lies.clear()
        durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration
        emit(
            {
                "e": "test",
                "id": report.nodeid,
                "when": report.when,
                "outcome": report.outcome,
                "xfail": hasattr(report, "wasxfail"),
                "msg": _short(report.longrepr) if report.outcome != "passed" else "",
            }
        )

    def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
        # Every test passed: play them again in this process, where any state the code keeps
        # (a call counter, a cache of answers) carries on, in a secret order other than the
        # run's, one of them twice, each under a name and a place that are not the test's (its
        # code renamed, its lines moved, its id hidden from PYTEST_CURRENT_TEST). A result
        # that depends on what ran before, or on who called (a caller's frame, source line or
        # name, however it was found), shows here; the terminal and the counts are not touched.
        emit({"e": "rebound", "names": sorted(rebound)})
        #
        # While it plays, every passing `assert` is reported here (pytest's assertion-pass
        # hook, without its comparison diffs): an `==` that held between values printed as
        # different literals (`5 == 6`: an object that says it equals anything) is recorded.
        # A lone test is played once for that alone.
        items = list(getattr(session, "items", ()) or ())
        if getattr(session, "testsfailed", 1) or not items or session.shouldstop:
            return
        from _pytest.assertion import util as assertion
        from _pytest.runner import runtestprotocol

        spent = [durations.get(item.nodeid, 0.0) for item in items]
        for index in _replay_order(spent) if len(items) > 1 else [0]:
            item = items[index]
            lies.clear()
            assertion._assertion_pass = assertion_passed
            try:
                with _disguised(item):
                    own_code(item)
                    reports = runtestprotocol(item, nextitem=None, log=False)
            finally:
                assertion._assertion_pass = None
            for shown in lies:
                emit({"e": "falseequal", "id": item.nodeid, "expl": shown[:_MAX_MSG]})
            lies.clear()
            outcome = "passed"
            for rep in reports:
                if rep.failed:
                    outcome = "failed"
                    break
                if rep.skipped:
                    outcome = "skipped"
            emit({"e": "rerun", "id": item.nodeid, "outcome": outcome})

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(config: Any) -> None:
        session = held[0] if held else None
        status = getattr(session, "exitstatus", None)
        if reads:  # the replay has run too
            emit({"e": "readtests", "reads": dict(sorted(reads.items()))})
        with contextlib.suppress(OSError):
            os.set_blocking(told[0], False)
            for line in os.read(told[0], 1 << 16).decode("utf-8", "replace").splitlines():
                with contextlib.suppress(ValueError, AttributeError):
                    for test, who in json.loads(line).items():
                        ran.setdefault(str(test), str(who))
        if ran:
            emit({"e": "rantests", "ran": dict(sorted(ran.items()))})
        emit(
            {
                "e": "finish",
                "exitstatus": int(status) if status is not None else None,
                "failed": int(getattr(session, "testsfailed", 0)),
                "collected": int(getattr(session, "testscollected", 0)),
                "identity": len(identity),
                "registered": registered,
                "tampered": tampered(config),
                # What the loop stats from outside: code the run loaded from anywhere.
                "files": _module_files(),
                "path": [p for p in sys.path if isinstance(p, str)],
            }
        )

    hooks: dict[str, Any] = {
        name: value for name, value in locals().items() if name.startswith("pytest_")
    }
    return hooks


# The replay plays some tests more than once, as far as a quarter of the run's test time allows
# (at least one, at most three times the count): the longer its sequence, the less a counter
# that expects a replay can guess it.
_EXTRA_SHARE, _EXTRA_FLOOR = 0.25, 0.05


def _replay_order(spent: list[float]) -> list[int]:
    """The replay's order over tests that took ``spent`` seconds each: a permutation other than
    the run's own, with tests played again at random places, drawn from the system's
    randomness, so code that counts its calls cannot know which answer comes next."""
    import random

    pick = random.SystemRandom()
    count = len(spent)
    order = list(range(count))
    while order == sorted(order):
        pick.shuffle(order)
    budget = max(_EXTRA_FLOOR, _EXTRA_SHARE * sum(spent))
    for extra in range(3 * count):
        index = pick.randrange(count)
        budget -= spent[index]
        if extra and budget < 0:
            break
        order.insert(pick.randrange(len(order) + 1), index)
    return order


_NOWHERE = "<replayed test>"


def _relocated(code: Any, shift: int) -> Any:
    """The code (and every code object inside it) renamed and moved to no file and other lines:
    a frame, a traceback or a warning points nowhere a reader can find the test's source."""
    consts = tuple(_relocated(c, shift) if isinstance(c, type(code)) else c for c in code.co_consts)
    return code.replace(
        co_filename=_NOWHERE,
        co_name="t" if code.co_name.startswith("test") else code.co_name,
        co_qualname="t",
        co_firstlineno=code.co_firstlineno + shift,
        co_consts=consts,
    )


@contextlib.contextmanager
def _disguised(item: Any) -> Any:
    """The item runs a copy of its test function that is not named, placed or numbered like
    it (the fixtures it asks for are the same); its node id is hidden while it runs."""
    import random

    obj = getattr(item, "obj", None)
    func = getattr(obj, "__func__", obj)
    code = getattr(func, "__code__", None)
    if not isinstance(func, types.FunctionType) or code is None:
        yield
        return
    try:
        moved = _relocated(code, random.SystemRandom().randrange(100_000, 1_000_000))
    except (TypeError, ValueError):  # a code object this Python cannot rebuild: played as is
        yield
        return
    clone = types.FunctionType(moved, func.__globals__, "t", func.__defaults__, func.__closure__)
    clone.__kwdefaults__ = func.__kwdefaults__
    # What plugins keep on the test function (hypothesis's settings, marks, __wrapped__).
    clone.__dict__.update(func.__dict__)
    bound = getattr(obj, "__self__", None)
    # Where the node keeps its id (a slot ``_id`` in newer pytest, ``_nodeid`` before):
    # ``nodeid`` is ``str()`` of it, so a plain string stands in.
    kept = {key: getattr(item, key) for key in ("_id", "_nodeid") if hasattr(item, key)}
    item.obj = types.MethodType(clone, bound) if bound is not None else clone
    for key in kept:
        setattr(item, key, "t")
    try:
        yield
    finally:
        item.obj = obj
        for key, value in kept.items():
            setattr(item, key, value)


def _equal_by_value(expl: str) -> bool | None:
    """Whether the values an assertion's explanation prints (its first line, ``5 == 6``) are
    equal as plain Python literals: False for a passing ``==`` between different values (the
    object said it equals something it is not); None where the line is not a chain of ``==`` /
    ``!=`` between literals (a repr cut short, an object, another operator)."""
    import ast

    line = expl.split("\n", 1)[0]
    try:
        tree = ast.parse(line, mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if not isinstance(tree, ast.Compare):
        return None
    try:
        values = [ast.literal_eval(node) for node in (tree.left, *tree.comparators)]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    for op, left, right in zip(tree.ops, values, values[1:], strict=False):
        if isinstance(op, ast.Eq):
            if left != right:
                return False
        elif isinstance(op, ast.NotEq):
            if left == right:
                return False
        else:
            return None
    return True


_LITERALS = (int, float, str, bytes)


def _neighbours(value: Any) -> tuple[Any, ...]:
    """Values next to ``value`` that an honest equality to it never also holds for."""
    if type(value) is int or type(value) is float:
        return (value - 1, value + 1)
    if type(value) is str:
        return (value + "0",)
    if type(value) is bytes:
        return (value + b"0",)
    return ()


_HONEST_EQ = (list, tuple, dict, set, frozenset, bool, complex, type(None))


def _lenient_equality(
    names: dict[str, Any], inside: tuple[str, ...], brought: frozenset[str] = frozenset()
) -> str | None:
    """In a passing assertion's temporaries (``@py_assert*``), a value that equals one of the
    literals there and also a neighbour of it (``6`` and ``5``): an equality that accepts more
    than one answer. Judged: a type the workspace defines, and any installed one (a mock told
    to equal anything) but the types of a module the test module itself brought in
    (``brought``: its own ``ANY`` or ``approx``, lenient by the test's choice). None: nothing
    of the kind."""
    temps = [value for key, value in names.items() if key.startswith("@py_assert")]
    literals = [value for value in temps if type(value) in _LITERALS]
    if not literals:
        return None
    for value in temps:
        kind = type(value)
        if kind in _LITERALS or kind in _HONEST_EQ or kind.__eq__ is object.__eq__:
            continue
        module = getattr(kind, "__module__", None) or ""
        where = getattr(sys.modules.get(module), "__file__", None) or ""
        if not (inside and where.startswith(inside)) and _brought(module, brought):
            continue  # the test's own comparator: lenient as the test asked
        try:
            for literal in literals:
                if bool(value == literal):
                    for other in _neighbours(literal):
                        if bool(value == other):
                            name = kind.__qualname__
                            return f"{literal!r} == {other!r} (a {name} equals both)"
        except Exception:  # an operand whose == raises (an array) is not judged
            continue
    return None


def _brought(module: str, brought: frozenset[str]) -> bool:
    """Whether a type's module is the runner's or one the test module brought in (a package
    the test imports whole brings its submodules, but a standard-library one only itself:
    ``import unittest`` for ``TestCase`` does not bring ``unittest.mock``)."""
    top = module.partition(".")[0]
    if top in ("_pytest", "pytest", "pluggy") or module in brought:
        return True
    return top not in sys.stdlib_module_names and top in brought


def _brought_by(space: dict[str, Any]) -> frozenset[str]:
    """The modules a test module's names come from: its imported modules, and the defining
    module of each class, function or object it holds."""
    found = set()
    for value in list(space.values()):
        if isinstance(value, types.ModuleType):
            found.add(getattr(value, "__name__", ""))
        else:
            found.add(getattr(type(value), "__module__", "") or "")
            own = getattr(value, "__module__", None)
            if isinstance(own, str):
                found.add(own)
    return frozenset(found)


def _from_imports(module: Any, path: str) -> list[tuple[str, str, str]]:
    """``(name, module, attribute)`` for every top-level ``from M import N [as name]`` of a
    test module's source (relative imports resolved against its package)."""
    import ast
    import importlib.util

    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        try:
            source = importlib.util.resolve_name(
                "." * node.level + (node.module or ""), getattr(module, "__package__", None)
            )
        except (ImportError, ValueError):
            continue
        for alias in node.names:
            if alias.name != "*":
                found.append((alias.asname or alias.name, source, alias.name))
    return found


def _module_files() -> list[str]:
    """The file of every module loaded (read from the module's own namespace: an object in
    ``sys.modules`` that is not a module is skipped, a lazy module is not loaded)."""
    found = set()
    for module in list(sys.modules.values()):
        try:
            path = vars(module).get("__file__")
        except TypeError:
            continue
        if isinstance(path, str):
            found.add(path)
    return sorted(found)


def _describe(plugin: Any, name: str) -> str:
    """A registration as the loop compares it with the baseline's: its name (an id-made name
    as ``<object>``), and where its code comes from."""
    shown = "<object>" if str(name).isdigit() else str(name)
    origin = getattr(plugin, "__file__", None)
    if origin is None:
        kind = type(plugin) if not isinstance(plugin, type) else plugin
        module = sys.modules.get(getattr(kind, "__module__", "") or "")
        origin = f"{getattr(kind, '__qualname__', '?')} from {getattr(module, '__file__', None)}"
    return f"{shown} = {origin}"


def _take_descriptor(text: str | None) -> int | None:
    if text is None or not text.isdigit():
        return None
    import fcntl
    import random

    fd = int(text)
    try:
        # A random high number: no guess of a small one finds it.
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, random.SystemRandom().randrange(64, 900))
    except OSError:
        try:
            os.set_inheritable(fd, False)
        except OSError:
            return None
        return fd
    os.close(fd)
    return moved


def _take_nonce(text: str | None) -> str:
    if text is None or not text.isdigit():
        return ""
    fd = int(text)
    try:
        data = os.read(fd, 256)
    except OSError:
        return ""
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return data.decode("ascii", "replace").strip()


def _read_only(collect: str | None) -> set[str] | None:
    if not collect:
        return None
    import json

    try:
        with open(collect, encoding="utf-8") as fh:
            listed = json.load(fh).get("only")
        if isinstance(listed, list):
            return {str(p) for p in listed}
    except (OSError, ValueError, AttributeError):
        pass
    return set()  # unreadable: collect nothing rather than everything


class _NoText(dict[int, str]):
    def __missing__(self, key: int) -> str:
        return ""


def _assertion_text_unread(untold: list[Any]) -> None:
    """With the pass hook on, pytest's rewriting finds each assertion's source text by running
    ``tokenize`` over the test module (compiling its patterns costs 2% of a judged run's
    instructions); the replay's hook reads only the explanation. A rewrite for a config in
    ``untold`` (the judged session, where the user did not turn the hook on) gets no text; any
    other (a pytest the tests start in-process, a user's own pass hook) gets pytest's."""
    from itertools import repeat

    from _pytest.assertion import rewrite

    found = rewrite._get_assertion_exprs

    def _get_assertion_exprs(src: bytes) -> dict[int, str]:
        rewriter = sys._getframe(1).f_locals.get("self")
        if untold and any(map(is_, repeat(getattr(rewriter, "config", None)), untold)):
            return _NoText()
        return found(src)

    rewrite._get_assertion_exprs = _get_assertion_exprs  # type: ignore[assignment]


def _never_bytecode_from(workspace: str) -> None:
    """Modules under ``workspace`` are compiled from their source on every import: no cached
    ``.pyc`` is read (nor written), no sourceless ``.pyc`` is importable, and pytest's own
    assertion-rewrite cache is not read either. Everything else keeps its caches."""
    import importlib.machinery as machinery

    from _pytest.assertion import rewrite

    root = os.path.realpath(workspace)
    prefixes = tuple({root, os.path.abspath(workspace)})

    class SourceOnly(machinery.SourceFileLoader):
        def get_code(self, fullname: str) -> Any:
            return self.source_to_code(self.get_data(self.path), self.path)

    def inside(path: str) -> bool:
        # A plain prefix test first: realpath costs a stat per component, and this runs for
        # every new sys.path entry and package folder of the run.
        full = os.path.abspath(path or os.getcwd())
        if not full.startswith(prefixes):
            return False
        real = os.path.realpath(full)
        return real == root or real.startswith(root + os.sep)

    def hook(path: str) -> Any:
        if not inside(path):
            raise ImportError("not the workspace")
        return machinery.FileFinder(
            path,
            (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
            (SourceOnly, machinery.SOURCE_SUFFIXES),
        )

    sys.path_hooks.insert(0, hook)
    for entry in list(sys.path_importer_cache):
        if inside(entry):
            del sys.path_importer_cache[entry]
    cached = rewrite._read_pyc

    def read_pyc(source: Any, pyc: Any, trace: Any = None) -> Any:
        # The rewritten test modules and conftests of the workspace come from their source;
        # installed plugins keep their cache (rewriting them each run doubles pytest's start).
        if inside(str(source)):
            return None
        return cached(source, pyc, trace) if trace is not None else cached(source, pyc)

    rewrite._read_pyc = read_pyc


def _short(longrepr: Any) -> str:
    if longrepr is None:
        return ""
    text = str(getattr(longrepr, "reprcrash", None) or longrepr)
    return text[-_MAX_MSG:]


def _real(path: Any, folders: dict[str, str]) -> str:
    """``os.path.realpath(path)``, each folder resolved once in ``folders``: ``realpath`` costs
    a system call per path component, and a run asks about dozens of files in a few folders.
    The file itself costs one ``lstat`` and is followed where it is a link."""
    import stat

    text = os.fspath(path)
    head, _, name = text.rpartition(os.sep)
    if name in ("", os.curdir, os.pardir) or not text.startswith(os.sep):
        return os.path.realpath(text)
    folder = folders.get(head)
    if folder is None:
        folder = folders[head] = os.path.realpath(head or os.sep).rstrip(os.sep)
    real = folder + os.sep + name
    try:
        if stat.S_ISLNK(os.lstat(real).st_mode):
            return os.path.realpath(real)
    except OSError:
        pass
    return real


def _rel(path: Any, root: Any, folders: dict[str, str] | None = None) -> str | None:
    """``path`` relative to ``root``, both resolved (None: not under it; ``.``: the root)."""
    folders = {} if folders is None else folders
    real, base = _real(path, folders), _real(root, folders).rstrip(os.sep)
    if real == base or (not base and real == os.sep):
        return "."
    if real.startswith(base + os.sep):
        return real[len(base) + 1 :]
    return None


globals().update(_plugin())
del _plugin
