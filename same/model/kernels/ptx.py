"""Compile the CUDA kernels to PTX and assemble them with ``ptxas``, without a GPU.

``numba.cuda.compile_ptx`` compiles a kernel for a given compute capability with
numba-cuda's real compiler (NVVM).  Device functions called by a kernel (our shared
per-element ``@njit`` functions) are compiled by numba-cuda for "the current device",
which it asks the CUDA driver for; with no driver, :func:`compile_kernels` tells it
the target capability instead (:func:`_target_capability`), so the PTX is exactly what a
GPU of that capability would get.  ``ptxas`` comes from the ``nvidia-cuda-nvcc-cu12``
wheel (pulled in by ``numba-cuda[cu12]``) or the CUDA toolkit on ``PATH``.

    python -m same.model.kernels.ptx --cc 9.0 --out ptx/    # one .ptx and .cubin per kernel
"""

from __future__ import annotations

import argparse
import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

from same.io.cli import ArgumentParser

__all__ = ["compile_kernels", "ptxas_path", "assemble", "stack_frames", "spill_bytes",
           "registers"]


@contextlib.contextmanager
def _target_capability(cc: tuple[int, int]):
    """Let numba-cuda compile device functions for ``cc`` with no driver present."""
    from numba.cuda import dispatcher

    real = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: types.SimpleNamespace(compute_capability=cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = real


def compile_kernels(cc: tuple[int, int] = (9, 0)) -> dict[str, list[str]]:
    """PTX of every kernel of :mod:`same.model.kernels.cuda` for every launch signature.

    Returns
    -------
    {kernel name: [PTX text per signature of :func:`same.model.kernels.cuda.signatures`]}

    Raises
    ------
    numba.core.errors.TypingError, numba.cuda.cudadrv.error.NvvmError
        A kernel that does not compile for the target.
    """
    from numba import cuda

    from .cuda import _kernel_sources, signatures

    sources = _kernel_sources()
    out: dict[str, list[str]] = {}
    with _target_capability(cc):
        for name, sigs in signatures().items():
            out[name] = [cuda.compile_ptx(sources[name], sig, cc=cc)[0] for sig in sigs]
    return out


def ptxas_path() -> str | None:
    """The ``ptxas`` of an nvidia-cuda-nvcc wheel (CUDA 12: ``nvidia/cuda_nvcc/bin``, CUDA 13:
    ``nvidia/cu13/bin``), else the one on PATH, else None."""
    try:
        import nvidia

        for root in nvidia.__path__:
            for sub in ("cuda_nvcc", "cu13"):
                p = Path(root) / sub / "bin" / "ptxas"
                if p.is_file():
                    return str(p)
    except ImportError:
        pass
    return shutil.which("ptxas")


def assemble(ptx: str, arch: str = "sm_90") -> bytes:
    """Assemble PTX with ``ptxas -arch=<arch>``; returns the cubin.

    Raises
    ------
    FileNotFoundError
        No ptxas found.
    RuntimeError
        ptxas rejected the PTX (its message included).
    """
    return _ptxas(ptx, arch)[0]


def _ptxas(ptx: str, arch: str, *flags: str) -> tuple[bytes, str]:
    """Run ``ptxas -arch=<arch> [flags]`` on PTX; (cubin, ptxas's messages)."""
    exe = ptxas_path()
    if exe is None:
        raise FileNotFoundError("ptxas not found: pip install 'numba-cuda[cu12]' (it brings "
                                "nvidia-cuda-nvcc-cu12) or put the CUDA toolkit on PATH")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        res = subprocess.run([exe, f"-arch={arch}", *flags, str(src), "-o", str(dst)],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"ptxas -arch={arch} failed: {res.stderr.strip()}")
        return dst.read_bytes(), res.stderr + res.stdout


_FRAME = re.compile(r"(\d+) bytes stack frame")


def stack_frames(ptx: str, arch: str = "sm_90") -> list[int]:
    """Per-thread stack frame (local memory, bytes) of every function in the PTX, as
    ``ptxas -v`` reports it.  The driver reserves frame × the threads every SM can hold
    (2,048 per SM, 132 SMs on an H100), so a frame of F bytes costs F × 270,336 bytes of
    device memory while a kernel using it is loaded.

    Raises
    ------
    FileNotFoundError, RuntimeError
        As :func:`assemble`.
    """
    _, messages = _ptxas(ptx, arch, "-v")
    return [int(n) for n in _FRAME.findall(messages)]


_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def spill_bytes(ptx: str, arch: str = "sm_90", max_registers: int | None = None) -> int:
    """Bytes of spill stores and loads in the kernel's code (``ptxas -v``, summed over its
    functions) when assembled with at most ``max_registers`` registers per thread
    (``-maxrregcount``, as :data:`same.model.kernels.cuda_host.MAX_REGISTERS` caps a kernel on a
    GPU); 0: everything stays in registers.

    Raises
    ------
    FileNotFoundError, RuntimeError
        As :func:`assemble`.
    """
    flags = ("-v",) if max_registers is None else ("-v", "-maxrregcount", str(max_registers))
    _, messages = _ptxas(ptx, arch, *flags)
    return sum(int(a) + int(b) for a, b in _SPILL.findall(messages))


_REGISTERS = re.compile(r"Used (\d+) registers")


def registers(ptx: str, arch: str = "sm_90", max_registers: int | None = None) -> int:
    """Registers per thread of the kernel in ``ptx`` (``ptxas -v``'s "Used N registers"; the
    most over its entries), assembled with at most ``max_registers`` (as a GPU launch with
    that cap assembles it).

    Raises
    ------
    FileNotFoundError, RuntimeError
        As :func:`assemble`; RuntimeError too when ptxas reports no register count.
    """
    flags = ("-v",) if max_registers is None else ("-v", "-maxrregcount", str(max_registers))
    _, messages = _ptxas(ptx, arch, *flags)
    found = [int(n) for n in _REGISTERS.findall(messages)]
    if not found:
        raise RuntimeError(f"ptxas -arch={arch} -v reported no register count: {messages!r}")
    return max(found)


#: What each file that ``--out`` receives begins with: how an earlier one of ours is told
#: (:mod:`same.io.outputs`; any other file of that name is refused, nothing written)
_STARTS = {".ptx": b"//\n// Generated by NVIDIA NVVM Compiler\n", ".cubin": b"\x7fELF"}


def _cc(text: str) -> tuple[int, int]:
    """--cc: a compute capability ``MAJOR.MINOR`` (argparse writes a refusal as one line)."""
    m = re.fullmatch(r"(\d{1,2})\.(\d)", text.strip())
    if m is None:
        raise argparse.ArgumentTypeError(f"must be a compute capability such as 8.0 or 9.0, "
                                         f"not {text!r}")
    return int(m[1]), int(m[2])


def _file_kind(suffix: str):
    from same.io.outputs import prefix_kind

    return prefix_kind(f"{suffix.lstrip('.')} file of python -m same.model.kernels.ptx",
                       _STARTS[suffix])


def main(argv=None) -> int:
    ap = ArgumentParser(prog="python -m same.model.kernels.ptx",
                        description=__doc__.splitlines()[0])
    ap.add_argument("--cc", type=_cc, default=(9, 0),
                    help="compute capability, e.g. 8.0 or 9.0 (default 9.0)")
    ap.add_argument("--out", default=None, help="folder for one .ptx and one .cubin per kernel "
                    "and signature; files of those names there must be this command's")
    args = ap.parse_args(argv)
    from same.io.outputs import OutputError, check_target, write_file, write_text

    from .cuda import signatures

    arch = f"sm_{args.cc[0]}{args.cc[1]}"
    names = [(f"{name}_{i}.ptx", f"{name}_{i}.{arch}.cubin")
             for name, sigs in signatures().items() for i in range(len(sigs))]
    if args.out:  # every target checked before compiling
        try:
            if Path(args.out).exists() and not Path(args.out).is_dir():
                raise OutputError(f"--out {args.out}: is a file, not a folder; give a folder "
                                  "for the .ptx and .cubin files")
            for fname in (f for pair in names for f in pair):
                check_target(Path(args.out, fname), _file_kind(Path(fname).suffix),
                             option="--out")
        except OutputError as exc:
            ap.exit(2, f"{ap.prog}: error: {exc}\n")
    ptxs = [(name, i, ptx) for name, texts in compile_kernels(args.cc).items()
            for i, ptx in enumerate(texts)]
    for (ptx_name, cubin_name), (name, i, ptx) in zip(names, ptxs, strict=True):
        cubin = assemble(ptx, arch)
        print(f"{name}[{i}]: {len(ptx)} bytes PTX, {len(cubin)} bytes {arch} cubin")
        if args.out:
            write_text(Path(args.out, ptx_name), ptx, _file_kind(".ptx"), option="--out")
            write_file(Path(args.out, cubin_name), lambda f, data=cubin: f.write(data),
                       _file_kind(".cubin"), option="--out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
