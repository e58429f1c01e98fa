"""The sandbox: validation and isolated execution of generated pandas/numpy/scipy code.

`SandboxExecutor.run(code, sources)` is the entry point (a fresh, OS-isolated child of a
warm zygote per call); `validate_code` is the static layer on its own, and
`SandboxExecutor.isolation()` says which OS layers are active. Function documentation
search lives in `function_docs`, the library of proven operations in `ops_library`. See
docs/sandbox.md for the guarantees. Imports nothing above the sandbox layer.
"""

from xhelio.sandbox.executor import IsolationStatus, SandboxExecutor, SandboxResult, SandboxValue
from xhelio.sandbox.validate import validate_code

__all__ = ["IsolationStatus", "SandboxExecutor", "SandboxResult", "SandboxValue", "validate_code"]
