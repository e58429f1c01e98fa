"""The sandbox: validation and isolated execution of generated pandas/numpy/scipy code.

`SandboxExecutor.run(code, sources)` is the entry point; `validate_code` is the static
layer on its own. Function documentation search lives in `function_docs`, the library of
proven operations in `ops_library`. See docs/sandbox.md for the guarantees. Imports
nothing above the sandbox layer.
"""

from xhelio.sandbox.executor import SandboxExecutor, SandboxResult, SandboxValue
from xhelio.sandbox.validate import validate_code

__all__ = ["SandboxExecutor", "SandboxResult", "SandboxValue", "validate_code"]
