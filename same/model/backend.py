"""Array backends: NumPy (CPU) and CuPy (GPU) behind one ``xp`` namespace.

Algorithm code is written once against ``xp``; only ``same.model.kernels`` holds
backend-specific code.  CuPy is imported lazily so CPU-only use never touches CUDA.
"""

from __future__ import annotations

import types

import numpy as np
import scipy.sparse as sp

__all__ = ["get_xp", "check_backend", "BackendUnavailableError", "array_module", "sparse_module", "to_backend", "to_numpy", "BACKENDS",
           "DeviceBatches", "doc_topic_store", "doc_topic_host", "doc_topic_in_ram", "THETA_MMAP_BYTES",
           "CUPY_SPARSE_DTYPES"]

BACKENDS = ("numpy", "cupy")
#: θ of the training documents (float32, n_docs × K) above this size lives in a temporary
#: file mapped into memory on the NumPy backend (PubMed at K=256: 8.4 GB), so that its pages
#: can leave RAM between passes like those of a memory-mapped corpus.
THETA_MMAP_BYTES = 1 << 30


class BackendUnavailableError(RuntimeError):
    """A known backend this machine cannot run: CuPy missing, or no CUDA device visible.

    ``str(exc)`` is one line, ``backend='cupy' needs ...``; :attr:`reason` is its part after
    the backend's name (``needs CuPy: pip install ...``), for messages that name the backend
    their own way (the workflow config's ``config backend: 'cupy' needs ...``).
    """

    def __init__(self, backend: str, reason: str):
        super().__init__(f"backend={backend!r} {reason}")
        self.backend, self.reason = backend, reason

    def __reduce__(self):  # pickled with both arguments (args holds the message only)
        return type(self), (self.backend, self.reason)


def get_xp(backend: str) -> types.ModuleType:
    """Return ``numpy`` or ``cupy`` for a backend name.

    Raises
    ------
    ValueError
        Unknown backend name.
    BackendUnavailableError
        (a RuntimeError) ``"cupy"`` requested but CuPy is not installed or no CUDA device
        is visible.
    """
    if backend == "numpy":
        return np
    if backend == "cupy":
        try:
            import cupy
        except ImportError as exc:
            raise BackendUnavailableError(
                backend, "needs CuPy: pip install 'same-lda[cuda12]' (or [cuda13])") from exc
        try:
            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CUDARuntimeError when no driver
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise BackendUnavailableError(backend, f"needs a CUDA device: {reason}") from exc
        if n < 1:
            raise BackendUnavailableError(backend, "needs a CUDA device: none visible")
        return cupy
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def check_backend(backend: str) -> None:
    """Check that this machine can run ``backend`` before any work is done: what
    :func:`get_xp` checks (for ``"cupy"``: CuPy imports and counts at least one CUDA
    device; no array is allocated), its module discarded.

    Raises
    ------
    ValueError
        Unknown backend name.
    BackendUnavailableError
        One line: ``backend='cupy' needs CuPy: pip install ...`` or ``... needs a CUDA
        device: ...``.
    """
    get_xp(backend)


def array_module(*arrays) -> types.ModuleType:
    """``cupy`` if any argument is a CuPy (sparse) array, else ``numpy``."""
    for a in arrays:
        mod = type(a).__module__
        if mod.startswith("cupy") or mod.startswith("cupyx"):
            import cupy

            return cupy
    return np


def sparse_module(xp: types.ModuleType) -> types.ModuleType:
    """``scipy.sparse`` for NumPy, ``cupyx.scipy.sparse`` for CuPy."""
    if xp is np:
        return sp
    import cupyx.scipy.sparse as csp

    return csp


#: The only dtypes CuPy's sparse matrices hold (cupy#3650: integer matrices are refused).
CUPY_SPARSE_DTYPES = tuple(np.dtype(t) for t in ("bool", "float32", "float64", "complex64",
                                                  "complex128"))


def _cupy_sparse_dtype(dtype, requested) -> np.dtype:
    """The dtype a SciPy matrix of ``dtype`` becomes on CuPy: ``requested`` if given (it must
    be one CuPy holds), else its own, with counts of other dtypes as float64 (exact to 2^53).

    Raises
    ------
    ValueError
        ``requested`` is a dtype CuPy's sparse matrices cannot hold.
    """
    if requested is not None:
        if np.dtype(requested) not in CUPY_SPARSE_DTYPES:
            raise ValueError(f"CuPy sparse matrices hold only {[str(d) for d in CUPY_SPARSE_DTYPES]}"
                             f", not {np.dtype(requested)}")
        return np.dtype(requested)
    return np.dtype(dtype) if np.dtype(dtype) in CUPY_SPARSE_DTYPES else np.dtype(np.float64)


def to_backend(a, xp: types.ModuleType, dtype=None):
    """Move a dense or sparse array to ``xp`` (no copy when already there).

    A SciPy matrix goes to CuPy as CSR of ``dtype``, or without one as float64 when its own
    dtype (int32 counts, say) is one CuPy's sparse matrices refuse (:data:`CUPY_SPARSE_DTYPES`).
    """
    if xp is np:
        if array_module(a) is not np:
            a = a.get()
        if sp.issparse(a):
            return a.astype(dtype) if dtype is not None and a.dtype != dtype else a
        return np.asarray(a, dtype=dtype)
    csp = sparse_module(xp)
    if sp.issparse(a):
        return csp.csr_matrix(a.tocsr().astype(_cupy_sparse_dtype(a.dtype, dtype)))
    if csp.issparse(a):
        return a.astype(dtype) if dtype is not None and a.dtype != dtype else a
    return xp.asarray(a, dtype=dtype)


def to_numpy(a):
    """Return a NumPy (or SciPy sparse) copy/view of a backend array."""
    return a.get() if array_module(a) is not np else a


class DeviceBatches:
    """Row blocks ``X[a:b]`` of a host CSR matrix, delivered on the backend as float CSR.

    On NumPy the blocks are host slices.  On CuPy staging is a pipeline two blocks deep:
    while the consumer's step runs on block i, block i+1's asynchronous copy to the device
    runs on a separate stream (queued before block i is handed over) and a producer thread
    (:func:`_fill_pinned`) cuts and casts block i+2's rows into pinned host buffers (three
    sets, in turn), so neither the host's share of staging (30 ms a step at NYTimes shape,
    measured on the host) nor the copy is on the step's critical path.  The compute stream
    waits on a block's copy event before it uses the block.  Every CUDA call stays on the
    consumer's thread; the producer touches NumPy arrays only.  So a corpus larger than GPU
    memory (PubMed: 483M nonzeros) trains on one GPU, with only two minibatches resident.

    Parameters
    ----------
    X : scipy.sparse.csr_matrix (n_docs, n_words), host
    bounds : list of (start, stop) document ranges
    xp : numpy or cupy
    dtype : dtype of the block values (float32 for the sampler)
    """

    def __init__(self, X: sp.csr_matrix, bounds, xp, dtype=np.float32):
        self.X = X
        self.bounds = list(bounds)
        self.xp = xp
        self.dtype = np.dtype(dtype)

    def __len__(self) -> int:
        return len(self.bounds)

    def __iter__(self):
        if self.xp is np:
            for a, b in self.bounds:
                yield a, b, self.X[a:b].astype(self.dtype)
            return
        yield from self._stream()

    def _stream(self):
        from concurrent.futures import ThreadPoolExecutor

        import cupy as cp
        import cupyx

        copy_stream = cp.cuda.Stream(non_blocking=True)
        pinned = [{} for _ in range(_SLOTS)]  # pinned buffers, grown on demand
        events = [None] * _SLOTS  # the copy that last read each slot
        dtypes = {"data": self.dtype, "indices": np.dtype(np.int32),
                  "indptr": np.dtype(np.int32)}

        def reserve(i):
            """Pinned views of block i's slot, sized for it, once the copy that last used
            the slot is done (consumer's thread: CUDA calls)."""
            slot = i % _SLOTS
            if events[slot] is not None:
                events[slot].synchronize()
            a, b = self.bounds[i]
            sizes = {"data": int(self.X.indptr[b] - self.X.indptr[a]),
                     "indices": int(self.X.indptr[b] - self.X.indptr[a]), "indptr": b - a + 1}
            for name, n in sizes.items():
                buf = pinned[slot].get(name)
                if buf is None or buf.size < n:
                    pinned[slot][name] = cupyx.empty_pinned(max(n, 1), dtype=dtypes[name])
            return {name: pinned[slot][name][:n] for name, n in sizes.items()}

        def send(i, views):
            """Device arrays of block i, filled from its pinned views on the copy stream."""
            a, b = self.bounds[i]
            # allocated on the compute stream, so the memory pool only hands out memory that
            # compute has released; the copy starts once the compute queued so far is done
            # (the new arrays may reuse memory that queued kernels still read)
            devs = {name: cp.empty(v.size, dtype=v.dtype) for name, v in views.items()}
            copy_stream.wait_event(cp.cuda.get_current_stream().record())
            for name, v in views.items():
                devs[name].set(v, stream=copy_stream)
            events[i % _SLOTS] = copy_stream.record()
            return (devs["data"], devs["indices"], devs["indptr"]), (b - a, self.X.shape[1])

        n, fills = len(self.bounds), {}

        def start(i):  # block i's host work, in the producer thread
            if i < n:
                views = reserve(i)
                fills[i] = views, pool.submit(_fill_pinned, self.X, *self.bounds[i], views)

        def ship(i):  # block i's copy, queued once its host work is done
            views, filled = fills.pop(i)
            filled.result()
            return send(i, views)

        if not n:
            return
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="same-staging") as pool:
            start(0)
            start(1)
            sent = ship(0)
            for i in range(n):
                (arrays, shape), event = sent, events[i % _SLOTS]
                if i + 1 < n:  # block i+1's copy is queued before block i's step: it overlaps
                    sent = ship(i + 1)
                start(i + 2)  # block i+2's host work overlaps block i's step
                # the compute stream waits for the copy before anything reads the block's
                # arrays: CuPy's constructor itself reads indptr[0] and indptr[-1]
                cp.cuda.get_current_stream().wait_event(event)
                yield *self.bounds[i], sparse_module(cp).csr_matrix(arrays, shape=shape)


#: Sets of pinned buffers of :class:`DeviceBatches` on CuPy: block i+2 is filled while block
#: i+1's copy is in flight and block i is processed.
_SLOTS = 3


def _fill_pinned(X: sp.csr_matrix, a: int, b: int, views: dict) -> None:
    """Rows ``a:b`` of host CSR ``X`` written into ``views`` ("data" in the block's dtype,
    "indices" and "indptr" as int32, indptr from 0): the producer thread's staging of
    :class:`DeviceBatches`, NumPy only."""
    lo, hi = int(X.indptr[a]), int(X.indptr[b])
    np.copyto(views["data"], X.data[lo:hi], casting="unsafe")
    np.copyto(views["indices"], X.indices[lo:hi], casting="unsafe")
    np.subtract(X.indptr[a:b + 1], lo, out=views["indptr"], casting="unsafe")


def doc_topic_in_ram(n_docs: int, n_topics: int, xp) -> bool:
    """Whether :func:`doc_topic_store` keeps θ in host RAM: on NumPy up to
    :data:`THETA_MMAP_BYTES` (above, in a mapped file; on CuPy, on the GPU)."""
    return xp is np and n_docs * n_topics * 4 <= THETA_MMAP_BYTES


def doc_topic_host(theta, order=None):
    """θ of the training documents on the host in the corpus's row order, read-only.

    Parameters
    ----------
    theta : (n_docs, K) float32 array of :func:`doc_topic_store`, or None (then None)
    order : permutation the rows were trained in (row i is document ``order[i]``), or None

    A NumPy θ in corpus order is returned as a read-only view, not a copy (θ can be 2× the
    corpus at PubMed size); a CuPy θ is copied from the device at this call only.
    """
    if theta is None:
        return None
    if order is not None:
        return to_numpy(theta)[np.argsort(order)]
    if isinstance(theta, np.ndarray):
        view = theta.view(np.ndarray)
        view.flags.writeable = False
        return view
    return to_numpy(theta)


def doc_topic_store(n_docs: int, n_topics: int, xp):
    """θ of the training documents, (n_docs, n_topics) float32 initialised to 1: a backend
    array, or on NumPy above :data:`THETA_MMAP_BYTES` a ``np.memmap`` of an anonymous
    temporary file (deleted when the array is)."""
    if xp is np and not doc_topic_in_ram(n_docs, n_topics, xp):
        import tempfile

        theta = np.memmap(tempfile.TemporaryFile(prefix="same-theta-"), dtype=np.float32,
                          mode="w+", shape=(n_docs, n_topics))
        theta[:] = 1.0
        return theta
    return xp.ones((n_docs, n_topics), dtype=np.float32)
