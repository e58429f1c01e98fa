"""The operating-system layers of the sandbox: what the kernel allows, and applying it.

The zygote (`zygote.py`) calls `plan_isolation` once, then `apply_isolation` in every
freshly forked child, before the child installs its audit hook and runs generated code.
In order, the child:

1. lowers its resource limits (address space, CPU seconds, no file writes, no core
   dumps, no new fds beyond those it holds);
2. when started as root, drops to an unprivileged uid/gid (`nobody`, 65534) with no
   supplementary groups, so the kernel's own permission checks keep it away from the
   parent's `/proc/<pid>` entries, environment and files, and from signalling or
   tracing other processes;
3. sets PR_SET_NO_NEW_PRIVS (no setuid binary can give privileges back), makes itself
   non-dumpable (no other process of the same user may read its memory through /proc
   or ptrace) and asks to be killed when the zygote dies;
4. applies Landlock (`landlock.py`): read-only access to the Python installation and
   site-packages, nothing else readable or writable; TCP and signals to other processes
   refused where the kernel's ABI supports them;
5. loads the seccomp filter (`seccomp.py`): no process creation, exec, sockets, ptrace,
   signals, credential or namespace changes, or opens for writing.

A layer the plan expects but the kernel refuses makes the call fail (closed). Imports
nothing from xhelio but the two sibling kernel modules.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import resource
import sys
from dataclasses import dataclass, field

from xhelio.sandbox import landlock, seccomp

__all__ = [
    "ALL_LAYERS",
    "IsolationFailed",
    "IsolationPlan",
    "apply_isolation",
    "plan_isolation",
]

NOBODY_UID = 65534
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_SIGKILL = 9

# Every layer `apply_isolation` can report, in the order it applies them.
ALL_LAYERS = (
    "rlimits",
    "uid-drop",
    "no-new-privs",
    "not-dumpable",
    "landlock-fs",
    "landlock-net",
    "landlock-signal",
    "seccomp",
)
# The layers that alone confine files, processes and the network.
CONFINING_LAYERS = frozenset({"landlock-fs", "seccomp"})

_libc = ctypes.CDLL(None, use_errno=True)


class IsolationFailed(Exception):
    """A layer the plan requires could not be applied in the child."""


@dataclass(frozen=True)
class IsolationPlan:
    """What the child applies; decided once in the zygote."""

    memory_limit_bytes: int
    cpu_s: int
    drop_to: tuple[int, int] | None  # (uid, gid) when started as root
    landlock_abi: int
    seccomp_program: bytes | None
    readable_dirs: tuple[str, ...]
    unavailable: dict[str, str] = field(default_factory=dict[str, str])

    def expected_layers(self) -> list[str]:
        """The layers this plan applies, in order."""
        layers = ["rlimits"]
        if self.drop_to is not None:
            layers.append("uid-drop")
        if sys.platform.startswith("linux"):
            layers += ["no-new-privs", "not-dumpable"]
        if self.landlock_abi >= 1:
            layers.append("landlock-fs")
        if self.landlock_abi >= 4:
            layers.append("landlock-net")
        if self.landlock_abi >= 6:
            layers.append("landlock-signal")
        if self.seccomp_program is not None:
            layers.append("seccomp")
        return layers


def _readable_dirs(extra: list[str]) -> tuple[str, ...]:
    """Python's library trees (stdlib, site-packages, our sources) and the zone database."""
    dirs: list[str] = []
    for entry in [*sys.path, *extra, "/usr/share/zoneinfo"]:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real != "/" and real not in dirs:
            dirs.append(real)
    return tuple(dirs)


def _unprivileged_ids() -> tuple[int, int]:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return NOBODY_UID, NOBODY_UID
    return entry.pw_uid, entry.pw_gid


def plan_isolation(
    memory_limit_bytes: int, cpu_s: int, extra_readable: list[str] | None = None
) -> IsolationPlan:
    """Detect what this kernel and process allow; called once in the zygote."""
    unavailable: dict[str, str] = {}
    linux = sys.platform.startswith("linux")
    drop_to = _unprivileged_ids() if linux and os.geteuid() == 0 else None
    if drop_to is None:
        unavailable["uid-drop"] = "not started as root: the child keeps the user's uid"
    abi = landlock.landlock_abi() if linux else 0
    if abi < 1:
        unavailable["landlock-fs"] = "the kernel has no Landlock (Linux 5.13+, enabled LSM)"
    elif abi < 4:
        unavailable["landlock-net"] = f"Landlock ABI {abi} < 4 (seccomp still refuses sockets)"
    if 1 <= abi < 6:
        unavailable["landlock-signal"] = f"Landlock ABI {abi} < 6 (seccomp still refuses kill)"
    reason = seccomp.seccomp_available() if linux else "not Linux"
    program: bytes | None = None
    if reason is None:
        try:
            program = seccomp.compile_filter()
        except seccomp.SeccompUnavailable as exc:
            reason = str(exc)
    if reason is not None:
        unavailable["seccomp"] = reason
    return IsolationPlan(
        memory_limit_bytes=memory_limit_bytes,
        cpu_s=cpu_s,
        drop_to=drop_to,
        landlock_abi=abi,
        seccomp_program=program,
        readable_dirs=_readable_dirs(extra_readable or []),
        unavailable=unavailable,
    )


def _apply_rlimits(plan: IsolationPlan) -> None:
    open_fds = max((int(fd) for fd in os.listdir("/proc/self/fd")), default=2)
    limits = {
        resource.RLIMIT_AS: plan.memory_limit_bytes,
        resource.RLIMIT_CPU: plan.cpu_s,
        resource.RLIMIT_FSIZE: 0,
        resource.RLIMIT_CORE: 0,
        resource.RLIMIT_NOFILE: open_fds + 1,
    }
    for limit, value in limits.items():
        # CPU: SIGXCPU at the soft limit (reported as a CPU timeout), SIGKILL a second later.
        hard = value + 1 if limit == resource.RLIMIT_CPU else value
        resource.setrlimit(limit, (value, hard))


def _prctl(option: int, value: int) -> None:
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise IsolationFailed(f"prctl({option}) failed: {os.strerror(ctypes.get_errno())}")


def apply_isolation(plan: IsolationPlan) -> list[str]:
    """Apply every layer of `plan` to the calling, freshly forked process.

    Returns the names of the layers applied (see `ALL_LAYERS`).

    Raises:
        IsolationFailed: a planned layer failed; the process must not run any code.
    """
    applied: list[str] = []
    try:
        _apply_rlimits(plan)
        applied.append("rlimits")
        if plan.drop_to is not None:
            uid, gid = plan.drop_to
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            if os.getuid() != uid or os.geteuid() != uid or os.getgroups():
                raise IsolationFailed("the uid/gid change did not take")
            applied.append("uid-drop")
        if sys.platform.startswith("linux"):
            _prctl(_PR_SET_NO_NEW_PRIVS, 1)
            applied.append("no-new-privs")
            _prctl(_PR_SET_DUMPABLE, 0)  # after the uid change, which resets it
            _prctl(_PR_SET_PDEATHSIG, _SIGKILL)
            applied.append("not-dumpable")
        if plan.landlock_abi >= 1:
            landlock.restrict_self(list(plan.readable_dirs), plan.landlock_abi)
            applied.append("landlock-fs")
            if plan.landlock_abi >= 4:
                applied.append("landlock-net")
            if plan.landlock_abi >= 6:
                applied.append("landlock-signal")
        if plan.seccomp_program is not None:
            seccomp.install_filter(plan.seccomp_program)
            applied.append("seccomp")
    except (OSError, ValueError, landlock.LandlockUnavailable, seccomp.SeccompUnavailable) as exc:
        raise IsolationFailed(f"{type(exc).__name__}: {exc} (applied so far: {applied})") from exc
    return applied
