"""Inputs for the asv suite: built lazily, cached, never inside a timed body.

"Only append, never change": the generators below keep their seeds and sizes
so results stay comparable across commits.
"""

import functools
import importlib
import os

import numpy as np

BACKENDS = ["numpy", "cupy"]


def same_module(path):
    """The module ``path`` of the layered package (``same.model.sampler``), or, at a commit
    from before the layers (issue 41: asv times old commits with this suite), the flat 0.1 path
    it moved from (``same.sampler``); no renamed module is used here.

    A folder without ``__init__.py`` is not the layered module: a folder another commit's
    install left behind (numba's ``__pycache__``; ``asv_uninstall.py`` now removes them)
    imports as an empty namespace package (the perf gate failed on one in CI, stop 46)."""
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError:
        module = None
    if module is None or getattr(module, "__file__", None) is None:
        flat = path.partition(".")[0] + "." + path.rpartition(".")[2]
        return importlib.import_module(flat)
    return module


TOPICS = [64, 256]


def require_backend(backend):
    """Raise NotImplementedError (asv: skip) when the backend cannot run here."""
    if backend == "numpy":
        return np
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise NotImplementedError("no CUDA device")
        return cupy
    except Exception as exc:  # ImportError, CUDARuntimeError
        raise NotImplementedError(f"cupy backend unavailable: {exc}") from None


def sync(xp):
    if xp is not np:
        xp.cuda.get_current_stream().synchronize()


@functools.lru_cache(maxsize=None)
def kos():
    """Real KOS (needs SAME_DATA_DIR or the cache); NotImplementedError when absent."""
    corpus = same_module("same.data.corpus")

    try:
        return corpus.load("kos", download=False)
    except corpus.CorpusNotFoundError as exc:
        raise NotImplementedError(f"KOS not available: {exc}") from None


@functools.lru_cache(maxsize=None)
def kos_split():
    make_split = same_module("same.data.split").make_split

    return make_split(kos(), 0.1, seed=0)


@functools.lru_cache(maxsize=None)
def block(n_topics, seed=0):
    """A KOS-shaped minibatch (1/20 of KOS: 172 docs × 6906 words, ~17.7k nonzeros) with
    peaked θ and φ, on the host."""
    shaped_corpus = same_module("same.data.synthetic").shaped_corpus

    counts = shaped_corpus(172, 6906, 17_700, n_tokens=23_400, seed=seed).astype(np.float32)
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(n_topics, 0.1), size=counts.shape[0]).astype(np.float32) + 0.1
    phi = rng.dirichlet(np.full(6906, 0.05), size=n_topics).astype(np.float32)
    return counts, theta, np.ascontiguousarray(phi.T)


def to_xp(xp, counts, theta, phi_t):
    if xp is np:
        return counts.indptr, counts.indices, counts.data, theta, phi_t
    return (xp.asarray(counts.indptr), xp.asarray(counts.indices), xp.asarray(counts.data),
            xp.asarray(theta), xp.asarray(phi_t))


@functools.lru_cache(maxsize=None)
def docword_file(n_lines=1_000_000):
    """A generated docword.gz of n_lines entries in a per-user temp directory."""
    import tempfile
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.csv as pacsv

    shaped_corpus = same_module("same.data.synthetic").shaped_corpus

    path = Path(tempfile.gettempdir()) / f"same-asv-docword-{n_lines}.txt.gz"
    if not path.exists():
        m = shaped_corpus(n_lines // 200, 50_000, n_lines, seed=0).tocoo()
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        with pa.CompressedOutputStream(str(tmp), "gzip") as out:
            out.write(f"{m.shape[0]}\n{m.shape[1]}\n{m.nnz}\n".encode())
            table = pa.table({"d": m.row + 1, "w": m.col + 1, "c": m.data})
            pacsv.write_csv(table, out, pacsv.WriteOptions(include_header=False, delimiter=" "))
        os.replace(tmp, path)
    return path
