"""Importing any xhelio module must not touch the network (or build the catalog)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_importing_every_module_opens_no_socket(xhelio_home: Path) -> None:
    script = textwrap.dedent(
        """
        import pkgutil, socket, sys
        opened = []
        class NoSocket(socket.socket):
            def __init__(self, *args, **kwargs):
                opened.append(args)
                raise OSError("network at import time")
        socket.socket = NoSocket
        socket.create_connection = lambda *a, **k: (_ for _ in ()).throw(OSError("network"))
        import xhelio
        names = [m.name for m in pkgutil.walk_packages(xhelio.__path__, "xhelio.")]
        for name in names:
            __import__(name)
        print(len(names), len(opened))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    modules, sockets = (int(x) for x in done.stdout.split())
    assert modules > 30
    assert sockets == 0
    assert list(xhelio_home.iterdir()) == []  # nothing built or written at import
