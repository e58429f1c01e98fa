"""Landlock filesystem (and, on newer kernels, network and signal) confinement via ctypes.

Landlock (Linux 5.13+) lets an unprivileged process give up access rights for itself and
its future children. The sandbox child keeps read-only access to the directories it
needs (the Python installation and site-packages, xhelio's sources, the time-zone
database) and nothing else: no write, create, remove or truncate anywhere, no read of
anything outside those trees (not /etc, /proc, /home or the user's data). From ABI 4 it
also refuses TCP bind/connect, from ABI 6 signals to processes outside the sandbox
and connections to abstract Unix sockets.

The three syscalls have the same numbers on every Linux architecture (444-446). Imports
nothing from xhelio.
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["LandlockUnavailable", "landlock_abi", "restrict_self"]

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_FS_ALL_V1 = (1 << 13) - 1  # execute .. make_sym
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_IOCTL_DEV = 1 << 15  # ABI 5
_NET_ALL = (1 << 0) | (1 << 1)  # bind_tcp, connect_tcp (ABI 4)
_SCOPE_ALL = (1 << 0) | (1 << 1)  # abstract unix socket, signal (ABI 6)


class LandlockUnavailable(Exception):
    """The kernel has no Landlock, or restricting the process failed."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [  # ctypes reads this class attribute by name
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1  # the kernel struct is packed
    _fields_ = [  # ctypes reads this class attribute by name
        ("allowed_access", ctypes.c_uint64),
        ("parent_fd", ctypes.c_int32),
    ]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is absent or disabled."""
    if not sys.platform.startswith("linux"):
        return 0
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def _handled_fs(abi: int) -> int:
    rights = _FS_ALL_V1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def restrict_self(readable_dirs: list[str], abi: int) -> None:
    """Confine the calling process to reading `readable_dirs`; irreversible.

    Sets PR_SET_NO_NEW_PRIVS (Landlock requires it without CAP_SYS_ADMIN). Directories
    that do not exist are skipped.

    Raises:
        LandlockUnavailable: the kernel refused one of the steps.
    """
    if abi < 1:
        raise LandlockUnavailable("the kernel has no Landlock")
    attr = _RulesetAttr(
        _handled_fs(abi), _NET_ALL if abi >= 4 else 0, _SCOPE_ALL if abi >= 6 else 0
    )
    size = 8 if abi < 4 else (16 if abi < 6 else 24)
    ruleset = int(_libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0))
    if ruleset < 0:
        raise LandlockUnavailable(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for path in readable_dirs:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                rule = _PathBeneath(_READ_FILE | _READ_DIR, fd)
                if _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0):
                    raise LandlockUnavailable(
                        f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}"
                    )
            finally:
                os.close(fd)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise LandlockUnavailable("prctl(PR_SET_NO_NEW_PRIVS) failed")
        if _libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0):
            raise LandlockUnavailable(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
