"""The kernel guards the report plugin installs in the judged process, in a real child
interpreter: the debugging calls into a process and writes under /proc are refused, and
ordinary work (reading /proc, writing a temporary file, starting a child) is not."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import reference_loop._verdict.pytest_guard as guard_module

PROBE = r"""
import ctypes, json, os, subprocess, sys, tempfile
sys.path.insert(0, sys.argv[1])
import pytest_guard
out = {"missing": list(pytest_guard.install())}
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def errno(value):
    return 0 if value >= 0 else ctypes.get_errno()
out["ptrace"] = errno(libc.ptrace(0, 0, None, None))  # PTRACE_TRACEME
out["pidfd_getfd"] = errno(libc.syscall(438, os.pidfd_open(os.getpid()), 1, 0))
buf = ctypes.create_string_buffer(8)
class IOV(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
iov = IOV(ctypes.addressof(buf), 8)
out["process_vm_readv"] = errno(
    libc.syscall(310 if os.uname().machine == "x86_64" else 270, os.getpid(),
                 ctypes.byref(iov), 1, ctypes.byref(iov), 1, 0))
for path in ("/proc/self/mem", "/proc/%d/mem" % os.getppid(), "/proc/self/attr/current"):
    try:
        open(path, "r+b", buffering=0).close()
        out[path.replace(str(os.getppid()), "PARENT")] = "opened"
    except OSError as exc:
        out[path.replace(str(os.getppid()), "PARENT")] = exc.errno
with open("/proc/self/status") as status:
    out["reads proc"] = "Pid:" in status.read()
with tempfile.NamedTemporaryFile("w") as tmp:
    tmp.write("x")
    tmp.flush()
    out["writes tmp"] = True
child = subprocess.run([sys.executable, "-c", "open('/proc/self/mem', 'r+b')"], capture_output=True)
out["child refused too"] = b"Permission denied" in child.stderr
print(json.dumps(out))
"""


def test_the_guards_refuse_debugging_calls_and_writes_under_proc():
    folder = str(Path(guard_module.__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, folder], capture_output=True, text=True, check=True
    )
    out = json.loads(done.stdout)
    # This kernel takes both (where one is missing it is named, and the tests say so).
    assert out["missing"] == [], out
    assert out["ptrace"] == out["pidfd_getfd"] == out["process_vm_readv"] == 1  # EPERM
    assert out["/proc/self/mem"] == out["/proc/PARENT/mem"] == 13  # EACCES
    assert out["reads proc"] and out["writes tmp"] and out["child refused too"], out


def test_the_filter_refuses_a_foreign_architectures_calls():
    # Instruction 1 jumps to the EPERM return when the call's architecture is not this one.
    program = guard_module._filter(0xC000003E, (101, 310, 311, 438))
    words = [program[i : i + 8] for i in range(0, len(program), 8)]
    assert len(words) == 10
    code, jt, jf, k = struct.unpack("=HBBI", words[1])
    assert (code, jt, k) == (0x15, 0, 0xC000003E) and 2 + jf == 9
    assert struct.unpack("=HBBI", words[9])[3] == 0x00050001


def test_a_proc_mount_below_another_folder_is_left_out_and_its_siblings_kept(tmp_path):
    for folder in ("host/proc/self", "host/etc", "work"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "host" / "file").write_text("x")
    roots = guard_module.writable_roots(str(tmp_path), {str(tmp_path / "host" / "proc")})
    assert sorted(roots) == sorted(str(tmp_path / p) for p in ("host/etc", "host/file", "work"))
