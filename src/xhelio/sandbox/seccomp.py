"""A seccomp filter for the sandbox child, built with libseccomp through ctypes.

The filter is a deny list on top of "allow": the child may compute, allocate memory,
start threads and read/write the file descriptors it already holds, but every system
call that creates a process, runs a program, opens a socket, debugs or signals another
process, changes credentials or namespaces, loads kernel code or opens a file for
writing fails with EPERM (ENOSYS for `clone3` and `openat2`, whose arguments a filter
cannot inspect, so that glibc falls back to `clone` / `openat`, which are checked).
Syscalls of a foreign ABI (i386 `int 0x80` on x86_64) kill the process (libseccomp's
default for a non-native architecture).

libseccomp (`libseccomp.so.2`, Debian package `libseccomp2`, a dependency of apt) is
used rather than hand-written BPF because it knows every architecture's syscall
numbers. The zygote compiles the filter once (`compile_filter`, BPF bytes, ~10 ms);
each child installs those bytes with one prctl (`install_filter`, microseconds), which
restricts the calling thread and its future threads. Signals are refused to every
process, the child itself included, so the filter does not depend on the child's pid.
Imports nothing from xhelio.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from dataclasses import dataclass

__all__ = ["SeccompUnavailable", "compile_filter", "install_filter", "seccomp_available"]

_ACT_ALLOW = 0x7FFF0000
_ACT_ERRNO = 0x00050000
_CMP_MASKED_EQ = 7
_CLONE_THREAD = 0x00010000
_O_WRONLY = 0o1
_O_RDWR = 0o2
_O_CREAT = 0o100
_O_TRUNC = 0o1000
_O_TMPFILE = 0o20000000 | 0o200000  # includes O_DIRECTORY, as the kernel defines it

# Denied outright: process creation and execution, networking, debugging other
# processes, credentials, namespaces and mounts, kernel interfaces that bypass other
# checks (io_uring runs syscalls the filter never sees; bpf, perf, userfaultfd, keys),
# and every path-changing file operation (Landlock also refuses them where present).
DENIED_SYSCALLS = (
    "fork", "vfork", "execve", "execveat",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
    "pidfd_open", "pidfd_getfd", "pidfd_send_signal",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setgroups",
    "setfsuid", "setfsgid", "capset", "setsid", "setpgid",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "mount_setattr",
    "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "keyctl", "add_key", "request_key", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "syslog", "ioperm", "iopl", "personality",
    "uselib", "fanotify_init", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "sethostname", "setdomainname", "vhangup", "name_to_handle_at",
    "open_by_handle_at", "creat", "mknod", "mknodat", "link", "linkat", "symlink",
    "symlinkat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir",
    "mkdirat", "rmdir", "truncate", "chmod", "fchmodat", "fchmodat2", "chown", "lchown",
    "fchownat", "utime", "utimes", "futimesat", "utimensat", "setxattr", "lsetxattr",
    "removexattr", "lremovexattr", "memfd_secret", "landlock_create_ruleset",
    "landlock_add_rule",
)  # fmt: skip
_NOT_INSPECTABLE = ("clone3", "openat2")  # ENOSYS: glibc falls back to an inspectable call
_SIGNAL_SYSCALLS = ("kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo")
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_BPF_INSTRUCTION_BYTES = 8


class SeccompUnavailable(Exception):
    """libseccomp or kernel seccomp support is missing, or loading the filter failed."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [  # ctypes reads this class attribute by name
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


@dataclass(frozen=True)
class _Lib:
    handle: ctypes.CDLL


_cached: list[_Lib | None] = []


def _library() -> _Lib | None:
    """Load libseccomp once (in the zygote, before any fork); None when absent."""
    if _cached:
        return _cached[0]
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        handle = ctypes.CDLL(name, use_errno=True)
    except OSError:
        _cached.append(None)
        return None
    handle.seccomp_init.argtypes = [ctypes.c_uint32]
    handle.seccomp_init.restype = ctypes.c_void_p
    handle.seccomp_release.argtypes = [ctypes.c_void_p]
    handle.seccomp_release.restype = None
    handle.seccomp_load.argtypes = [ctypes.c_void_p]
    handle.seccomp_load.restype = ctypes.c_int
    handle.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    handle.seccomp_syscall_resolve_name.restype = ctypes.c_int
    handle.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    handle.seccomp_rule_add_array.restype = ctypes.c_int
    lib = _Lib(handle)
    _cached.append(lib)
    return lib


def seccomp_available() -> str | None:
    """None when a filter can be built here, else the reason it cannot."""
    if not os.path.exists("/proc/self/status"):
        return "not Linux"
    with open("/proc/self/status", encoding="ascii") as status:
        if "Seccomp:" not in status.read():
            return "the kernel has no seccomp support"
    if _library() is None:
        return "libseccomp.so.2 not found (Debian: apt-get install libseccomp2)"
    return None


def _errno_action(code: int) -> int:
    return _ACT_ERRNO | (code & 0xFFFF)


def _rule(lib: _Lib, ctx: int, action: int, name: str, *cmps: tuple[int, int, int, int]) -> None:
    number = lib.handle.seccomp_syscall_resolve_name(name.encode())
    if number < 0:
        return  # not a syscall on this architecture (e.g. `open` on aarch64)
    array = (_ArgCmp * max(len(cmps), 1))(*(_ArgCmp(*c) for c in cmps))
    status = lib.handle.seccomp_rule_add_array(ctx, action, number, len(cmps), array)
    if status < 0:
        raise SeccompUnavailable(f"seccomp rule for {name} refused ({os.strerror(-status)})")


def compile_filter() -> bytes:
    """Build the filter and return it as BPF instructions (done once, in the zygote).

    Raises:
        SeccompUnavailable: libseccomp is missing or refused a rule.
    """
    lib = _library()
    if lib is None:
        raise SeccompUnavailable("libseccomp.so.2 not found")
    handle = lib.handle
    handle.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    handle.seccomp_export_bpf.restype = ctypes.c_int
    ctx = handle.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        eperm = _errno_action(errno.EPERM)
        for name in (*DENIED_SYSCALLS, *_SIGNAL_SYSCALLS):
            _rule(lib, ctx, eperm, name)
        for name in _NOT_INSPECTABLE:
            _rule(lib, ctx, _errno_action(errno.ENOSYS), name)
        # A new process is a clone without CLONE_THREAD; threads stay possible.
        _rule(lib, ctx, eperm, "clone", (0, _CMP_MASKED_EQ, _CLONE_THREAD, 0))
        for flag in (_O_WRONLY, _O_RDWR, _O_CREAT, _O_TRUNC, _O_TMPFILE):
            _rule(lib, ctx, eperm, "open", (1, _CMP_MASKED_EQ, flag, flag))
            _rule(lib, ctx, eperm, "openat", (2, _CMP_MASKED_EQ, flag, flag))
        read_end, write_end = os.pipe()
        try:
            status = handle.seccomp_export_bpf(ctx, write_end)
            os.close(write_end)
            write_end = -1
            program = b""
            while chunk := os.read(read_end, 65536):
                program += chunk
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
        if status < 0 or not program or len(program) % _BPF_INSTRUCTION_BYTES:
            raise SeccompUnavailable(f"seccomp_export_bpf failed ({os.strerror(-status)})")
        return program
    finally:
        handle.seccomp_release(ctx)


class _SockFprog(ctypes.Structure):
    _fields_ = [  # ctypes reads this class attribute by name
        ("len", ctypes.c_ushort),
        ("filter", ctypes.c_void_p),
    ]


_libc = ctypes.CDLL(None, use_errno=True)


def install_filter(program: bytes) -> None:
    """Install a compiled filter on the calling process; needs no-new-privs set first.

    Raises:
        SeccompUnavailable: the kernel refused the filter.
    """
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // _BPF_INSTRUCTION_BYTES, ctypes.addressof(buffer))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise SeccompUnavailable(f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}")
