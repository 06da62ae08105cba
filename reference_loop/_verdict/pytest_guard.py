"""Kernel guards for the judged process: what the code under test can do to memory, its own or
another process's, without naming anything in Python (stdlib only: copied beside the report
plugin, which installs them when it is imported, before any conftest or test module).

- a seccomp filter refuses ``ptrace``, ``process_vm_readv``, ``process_vm_writev`` and
  ``pidfd_getfd`` (``EPERM``), and every system call made through another architecture's
  entry (an x32 or 32-bit call that would skip the list);
- Landlock refuses opening for writing anything under ``/proc`` (``/proc/self/mem``,
  ``/proc/<pid>/mem`` of the loop or of the runner, ``/proc/sys``) or any other proc mount:
  everything else stays writable as before;
- ``no_new_privs`` is set first, as both need it.

Children inherit all three. The side effects, inside the judged run only: a debugger
(``gdb``, ``strace``, ``py-spy``) cannot attach, a setuid program (``sudo``, ``ping`` on some
systems) runs without its privileges, and a test cannot write ``/proc`` (``oom_score_adj``).
Where the kernel lacks one (no seccomp filter, no Landlock) it is named in what ``install``
returns, and the report says so: the run goes on without it, visibly.
"""

from __future__ import annotations

import os
import struct
from typing import Any

# Per architecture: the audit arch seccomp sees, and the numbers of the calls it refuses
# (ptrace, process_vm_readv, process_vm_writev, pidfd_getfd), and of seccomp itself.
_ARCHES = {
    "x86_64": (0xC000003E, (101, 310, 311, 438), 317),
    "aarch64": (0xC00000B7, (117, 270, 271, 438), 277),
}
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_SET_MODE_FILTER = 1
_SECCOMP_FILTER_FLAG_TSYNC = 1
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_LANDLOCK_CREATE, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT = 444, 445, 446
_LANDLOCK_VERSION = 1
_RULE_PATH_BENEATH = 1
_WRITE_FILE, _TRUNCATE = 1 << 1, 1 << 14


def _filter(arch: int, refused: tuple[int, ...]) -> bytes:
    """A BPF program: another architecture's call, an x32 call or a refused one gets EPERM."""
    deny = 5 + len(refused)  # index of the EPERM return (after the four checks and ALLOW)
    prog = [(_LD_W_ABS, 0, 0, 4), (_JEQ_K, 0, deny - 2, arch), (_LD_W_ABS, 0, 0, 0)]
    prog.append((_JGE_K, deny - 4, 0, _X32_BIT))
    for number in refused:
        prog.append((_JEQ_K, deny - len(prog) - 1, 0, number))
    prog += [(_RET_K, 0, 0, _RET_ALLOW), (_RET_K, 0, 0, _RET_EPERM)]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


def install() -> tuple[str, ...]:
    """Install the guards in this process; the names of those the kernel could not take."""
    import ctypes

    known = _ARCHES.get(os.uname().machine)
    if known is None:
        return ("seccomp", "landlock")
    arch, refused, seccomp_nr = known
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    missing = []
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return ("seccomp", "landlock")
    program = ctypes.create_string_buffer(_filter(arch, refused))
    fprog = struct.pack("=HxxxxxxQ", len(program.raw) // 8, ctypes.addressof(program))
    if (
        libc.syscall(
            seccomp_nr, _SECCOMP_SET_MODE_FILTER, _SECCOMP_FILTER_FLAG_TSYNC, ctypes.c_char_p(fprog)
        )
        != 0
    ):
        missing.append("seccomp")
    if not _landlock(libc):
        missing.append("landlock")
    return tuple(missing)


def _landlock(libc: Any) -> bool:
    """Writes refused under ``/proc``, allowed beneath every other top-level entry."""
    import ctypes

    abi = libc.syscall(_LANDLOCK_CREATE, None, 0, _LANDLOCK_VERSION)
    if abi < 1:
        return False
    access = _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
    ruleset = libc.syscall(_LANDLOCK_CREATE, ctypes.c_char_p(struct.pack("=Q", access)), 8, 0)
    if ruleset < 0:
        return False
    try:
        for path in writable_roots("/", _proc_mounts()):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = struct.pack("=Qi", access, fd)
                libc.syscall(_LANDLOCK_ADD_RULE, ruleset, _RULE_PATH_BENEATH, rule, 0)
            finally:
                os.close(fd)
        return bool(libc.syscall(_LANDLOCK_RESTRICT, ruleset, 0) == 0)
    finally:
        os.close(ruleset)


def _proc_mounts() -> set[str]:
    """Where a proc file system is mounted: ``/proc``, and any other (a host's ``/proc`` bound
    into a container at ``/host/proc``) that a rule for its parent folder would open."""
    found = {"/proc"}
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                fields = line.split()
                if " - proc " in line and len(fields) > 4:
                    found.add(fields[4].replace("\\040", " "))
    except OSError:
        pass
    return found


def writable_roots(top: str, forbidden: set[str]) -> list[str]:
    """The folders and files beneath which writing stays allowed: ``top``'s entries, each whole
    unless a forbidden mount sits at or below it, then its own entries in turn."""
    roots: list[str] = []
    try:
        with os.scandir(top) as entries:
            paths = [e.path for e in entries]
    except OSError:
        return roots
    for path in paths:
        if path in forbidden:
            continue
        if any(f.startswith(path + "/") for f in forbidden):
            roots.extend(writable_roots(path, forbidden))
        else:
            roots.append(path)
    return roots
