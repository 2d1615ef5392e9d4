"""Run a function in a child process whose address space is capped (``RLIMIT_AS``).

The capped-memory tests of issue 28 check that a job's working memory stays within its
budget at a size whose unchunked version would not fit. The child imports what it needs
first (torch and numpy reserve hundreds of MB of address space that no data uses), then
caps its address space at what it has mapped *now* plus ``headroom_mb``, and only then
runs the work: the cap therefore bounds the memory the work itself maps. One BLAS/OpenMP
thread, so that no thread's stack or malloc arena counts against it.

Use::

    from capped import run_capped

    result = run_capped("xlalign.mapping.vecmap:some_function", kwargs, headroom_mb=300)
    assert result.ok, result.error

``target`` is ``"module:function"``; ``kwargs`` must be picklable; the child's return value
comes back pickled (keep it small). ``result.error`` holds the child's exception text, and
``result.out_of_memory`` says whether it was the cap that stopped the work: an allocation
that fails under the cap surfaces as a ``MemoryError`` from Python and numpy, as
"can't allocate memory" from torch, and as a ``ValueError`` ("Buffer acquisition failed")
where Cython code (eflomal) assigns the array that could not be allocated, depending on
which allocation meets the cap first.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CHILD = r"""
import importlib, os, pickle, resource, sys, traceback
for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[var] = "1"
spec_path, out_path = sys.argv[1], sys.argv[2]
with open(spec_path, "rb") as fh:
    target, kwargs, headroom_mb, preload = pickle.load(fh)
for name in preload:
    importlib.import_module(name)
module_name, func_name = target.split(":")
func = getattr(importlib.import_module(module_name), func_name)
try:
    import torch
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
except Exception:
    pass
def vm_bytes():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize")
base = vm_bytes()
cap = base + int(headroom_mb * (1 << 20))
hard = resource.getrlimit(resource.RLIMIT_AS)[1]
resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
oom = False
try:
    value, error = func(**kwargs), None
except BaseException as exc:
    value, error = None, "".join(traceback.format_exception_only(type(exc), exc)).strip()
    seen, link = set(), exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        oom = oom or isinstance(link, MemoryError)
        link = link.__cause__ or link.__context__
resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
with open(out_path, "wb") as fh:
    pickle.dump((value, error, oom, base, cap), fh)
"""

# How a failed allocation reads when it is not a MemoryError in the exception chain.
_OUT_OF_MEMORY_TEXT = (
    "can't allocate memory",  # torch's allocator
    "Cannot allocate memory",  # ENOMEM from the OS (mmap, a subprocess)
    "Buffer acquisition failed",  # Cython assigning an array that could not be allocated
    "std::bad_alloc",
)


@dataclass(frozen=True)
class CappedResult:
    value: Any
    error: str | None
    memory_error: bool
    base_mb: float
    cap_mb: float

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def out_of_memory(self) -> bool:
        """The work failed because an allocation met the cap (module docstring)."""
        if self.error is None:
            return False
        return self.memory_error or any(text in self.error for text in _OUT_OF_MEMORY_TEXT)


def run_capped(
    target: str,
    kwargs: dict[str, Any],
    *,
    headroom_mb: float,
    preload: tuple[str, ...] = ("numpy", "torch"),
    timeout: float = 600,
) -> CappedResult:
    """Run ``target(**kwargs)`` in a child whose address space is capped at its mapped size
    after imports plus ``headroom_mb`` (module docstring)."""
    with tempfile.TemporaryDirectory(prefix="capped-") as tmp:
        spec, out = Path(tmp, "spec.pkl"), Path(tmp, "out.pkl")
        spec.write_bytes(pickle.dumps((target, kwargs, headroom_mb, preload)))
        env = dict(os.environ)
        src = str(Path(__file__).resolve().parents[1] / "src")
        tests = str(Path(__file__).resolve().parent)
        env["PYTHONPATH"] = os.pathsep.join([src, tests, env.get("PYTHONPATH", "")])
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD, str(spec), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if not out.exists():
            raise AssertionError(f"capped child died (rc {proc.returncode}): {proc.stderr[-3000:]}")
        value, error, memory_error, base, cap = pickle.loads(out.read_bytes())
    return CappedResult(value, error, memory_error, base / (1 << 20), cap / (1 << 20))
