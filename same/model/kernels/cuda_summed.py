"""The summed sampler's CUDA kernels: chunked partial sums, then a block per document or word.

Both sweeps of the summed sampler (:mod:`same.model.kernels.elements`: ``summed_t_doc``,
``summed_p_word``) sum K-vectors over a *segment* -- a document's nonzeros (T:
acc_k = Σ_w c_dw φ_kw / μ_dw) or a word's documents in the block's CSC order (P:
acc_k = Σ_d (c_dw / μ_dw) θ_dk) -- then make one :func:`~same.model.kernels.elements.draw_nonzero`
draw from acc.  A thread per segment (the former layout) runs a serial loop as long as the
segment: at PubMed shape a top word's 330K documents × K.  Here each sweep is two launches:

1. ``*_partial``: a block per *chunk* of at most :data:`~same.model.kernels.launch.CHUNK` entries of
   one segment (:mod:`same.model.kernels.segments`); its threads first put the chunk's c/μ (T: a
   thread per nonzero, μ by ``dot_seq``) and rows (T: words, P: documents) into shared
   memory (each read once), then each thread sums its topics over the chunk's entries in
   order, in float32 (``axpy``'s arithmetic): coalesced reads of φ (T) or θ (P) rows across
   topics.  A segment of one chunk -- nearly every document, most words -- is drawn right
   there (step 2's draw); a longer one's sums go to ``part``, a compact array of only such
   segments' chunks (:func:`~same.model.kernels.segments.multi_ptr`; at most
   :func:`~same.model.kernels.launch.parts_bound` rows: 0.19 GB at PubMed's minibatch, K = 1024).
2. ``*_draw``: a block per segment (those of one chunk return at once); its threads add the
   segment's partial sums in chunk order into shared memory, then one thread draws from them
   with the K-long scratch (cum, guide, the draws, and θ_d or φ_w: each read once, θ_d
   written back once) in shared memory, not global memory.

Chunking keeps the order of the terms within a chunk and adds the chunks in order: a segment
of at most CHUNK entries (nearly every document, and every word in fewer than CHUNK documents
of the block) gets exactly the CPU's acc, so under numba-cuda's simulator the counts are
bit-identical to the CPU kernels' there; a longer segment's acc is the same sum grouped
differently, so its rates may differ from the CPU's in the last float32 bits: the same
draws from the same counters, identical except where that rounding flips a draw, as for
NVVM's fused multiply-adds (:mod:`same.model.kernels.cuda`).  Deterministic: no floating-point atomics.  The chunk list of a
launch is bounded without reading the block (⌈nnz / CHUNK⌉ + segments), so nothing waits for
the device; blocks past the last chunk return at once.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float32, float64, int32, int64
from numba.core import config

from . import launch
from .cuda_host import launch_kernel
from .elements import dot_seq, draw_nonzero, ratio, summed_t_draw
from .segments import chunk_bounds, chunk_ptr, multi_ptr, row_of, rows

#: Length of the shared arrays (the most topics and chunk entries any launch may use).  One
#: shared array per line: numba-cuda's simulator tells them apart by their line.
_TOPICS_MAX, _CHUNK_MAX = 1024, 1024
assert launch.CHUNK <= _CHUNK_MAX

__all__ = ["summed_t_sweeps", "summed_p_sweep", "word_order", "kernel_sources", "signatures"]


def _draw_t(d, theta, tokens, acc, th, cum, guide, t_row, n_samples, prior_scale,
            doc_topic_prior, key, pool_max):  # pragma: no cover - device code
    """Document d's T draw from acc (shared, filled): θ_d copied to shared memory, drawn and
    updated there by one thread (:func:`~same.model.kernels.elements.summed_t_draw`), written back."""
    n_topics = theta.shape[1]
    for k in range(cuda.threadIdx.x, n_topics, cuda.blockDim.x):
        th[k] = theta[d, k]
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        summed_t_draw(d, tokens[d], acc[:n_topics], th[:n_topics], n_samples, prior_scale,
                      doc_topic_prior, key, pool_max, cum[:n_topics], guide[:n_topics],
                      t_row[:n_topics])
    cuda.syncthreads()
    for k in range(cuda.threadIdx.x, n_topics, cuda.blockDim.x):
        theta[d, k] = th[k]


def _draw_p(w, phi_t, counts, acc, ph, cum, guide, z, n_samples, key, p_out, pool_max,
            present):  # pragma: no cover - device code
    """Word w's P draw from acc (shared, filled) into p_out[w] (zeros for an absent word):
    φ_w copied to shared memory, the draws into shared z by one thread."""
    n_topics = phi_t.shape[1]
    for k in range(cuda.threadIdx.x, n_topics, cuda.blockDim.x):
        ph[k] = phi_t[w, k]
        z[k] = 0  # draw_nonzero leaves z as it is on its early exit
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and present:
        draw_nonzero(w, n_samples * counts[w], n_samples, acc[:n_topics], ph[:n_topics], key,
                     pool_max, cum[:n_topics], guide[:n_topics], z[:n_topics])
    cuda.syncthreads()
    for k in range(cuda.threadIdx.x, n_topics, cuda.blockDim.x):
        p_out[w, k] = z[k]


def summed_t_partial_kernel(indptr, indices, data, theta, phi_t, cptr, mptr, chunk, part,
                            tokens, n_samples, prior_scale, doc_topic_prior, key,
                            pool_max):  # pragma: no cover - device code
    b = cuda.blockIdx.x
    if b >= cptr[cptr.shape[0] - 1]:
        return
    d, lo, hi = chunk_bounds(cptr, indptr, b, chunk)
    single = cptr[d + 1] - cptr[d] == 1  # the whole document: drawn here
    r = cuda.shared.array(_CHUNK_MAX, float64)
    words = cuda.shared.array(_CHUNK_MAX, int32)
    acc = cuda.shared.array(_TOPICS_MAX, float32)
    th_s = cuda.shared.array(_TOPICS_MAX, float32)
    cum = cuda.shared.array(_TOPICS_MAX, float64)
    guide = cuda.shared.array(_TOPICS_MAX, int32)
    t_row = cuda.shared.array(_TOPICS_MAX, int32)
    th = theta[d]
    for j in range(lo + cuda.threadIdx.x, hi, cuda.blockDim.x):
        w = indices[j]
        words[j - lo] = w
        r[j - lo] = ratio(data[j], dot_seq(th, phi_t[w]))
    cuda.syncthreads()
    row = 0 if single else mptr[d] + b - cptr[d]
    for k in range(cuda.threadIdx.x, theta.shape[1], cuda.blockDim.x):
        s = np.float32(0.0)
        for i in range(hi - lo):
            s += np.float32(r[i]) * phi_t[words[i], k]
        if single:
            acc[k] = s
        else:
            part[row, k] = s
    if single:
        cuda.syncthreads()
        draw_t(d, theta, tokens, acc, th_s, cum, guide, t_row, n_samples, prior_scale,
               doc_topic_prior, key, pool_max)


def _add_chunks(part, c0, c1, acc, n_topics):  # pragma: no cover - device code
    """acc[k] = Σ_{c0 ≤ c < c1} part[c, k] in order c, in float32, threads over topics (k
    with the same thread as the callers' other loops over topics)."""
    for k in range(cuda.threadIdx.x, n_topics, cuda.blockDim.x):
        s = np.float32(0.0)
        for c in range(c0, c1):
            s += part[c, k]
        acc[k] = s


def summed_t_draw_kernel(theta, tokens, cptr, mptr, part, n_samples, prior_scale,
                         doc_topic_prior, key, pool_max):  # pragma: no cover - device code
    d = cuda.blockIdx.x
    n_chunks = cptr[d + 1] - cptr[d]
    if n_chunks == 1:  # drawn by its partial-sum block
        return
    acc = cuda.shared.array(_TOPICS_MAX, float32)
    th_s = cuda.shared.array(_TOPICS_MAX, float32)
    cum = cuda.shared.array(_TOPICS_MAX, float64)
    guide = cuda.shared.array(_TOPICS_MAX, int32)
    t_row = cuda.shared.array(_TOPICS_MAX, int32)
    m0 = mptr[d]
    add_chunks(part, m0, m0 + n_chunks, acc, theta.shape[1])  # none: an empty document
    cuda.syncthreads()
    draw_t(d, theta, tokens, acc, th_s, cum, guide, t_row, n_samples, prior_scale,
           doc_topic_prior, key, pool_max)


def summed_ratio_kernel(indptr, indices, data, theta, phi_t,
                        ratio_out):  # pragma: no cover - device code
    for j in range(cuda.grid(1), indices.shape[0], cuda.gridsize(1)):
        d = row_of(indptr, j)
        ratio_out[j] = ratio(data[j], dot_seq(theta[d], phi_t[indices[j]]))


def summed_p_partial_kernel(col_ptr, col_doc, col_nz, ratios, theta, cptr, mptr, chunk, part,
                            counts, phi_t, n_samples, key, p_out,
                            pool_max):  # pragma: no cover - device code
    b = cuda.blockIdx.x
    if b >= cptr[cptr.shape[0] - 1]:
        return
    w, lo, hi = chunk_bounds(cptr, col_ptr, b, chunk)
    single = cptr[w + 1] - cptr[w] == 1  # the whole word: drawn here
    r = cuda.shared.array(_CHUNK_MAX, float32)
    docs = cuda.shared.array(_CHUNK_MAX, int64)
    acc = cuda.shared.array(_TOPICS_MAX, float32)
    ph = cuda.shared.array(_TOPICS_MAX, float32)
    cum = cuda.shared.array(_TOPICS_MAX, float64)
    guide = cuda.shared.array(_TOPICS_MAX, int32)
    z = cuda.shared.array(_TOPICS_MAX, int32)
    for e in range(lo + cuda.threadIdx.x, hi, cuda.blockDim.x):
        r[e - lo] = ratios[col_nz[e]]
        docs[e - lo] = col_doc[e]
    cuda.syncthreads()
    row = 0 if single else mptr[w] + b - cptr[w]
    for k in range(cuda.threadIdx.x, theta.shape[1], cuda.blockDim.x):
        s = np.float32(0.0)
        for i in range(hi - lo):
            s += r[i] * theta[docs[i], k]
        if single:
            acc[k] = s
        else:
            part[row, k] = s
    if single:
        cuda.syncthreads()
        draw_p(w, phi_t, counts, acc, ph, cum, guide, z, n_samples, key, p_out, pool_max, True)


def summed_p_draw_kernel(counts, phi_t, cptr, mptr, part, n_samples, key, p_out,
                         pool_max):  # pragma: no cover - device code
    w = cuda.blockIdx.x
    n_chunks = cptr[w + 1] - cptr[w]
    if n_chunks == 1:  # drawn by its partial-sum block
        return
    acc = cuda.shared.array(_TOPICS_MAX, float32)
    ph = cuda.shared.array(_TOPICS_MAX, float32)
    cum = cuda.shared.array(_TOPICS_MAX, float64)
    guide = cuda.shared.array(_TOPICS_MAX, int32)
    z = cuda.shared.array(_TOPICS_MAX, int32)
    m0 = mptr[w]
    add_chunks(part, m0, m0 + n_chunks, acc, phi_t.shape[1])  # none: an absent word
    cuda.syncthreads()
    draw_p(w, phi_t, counts, acc, ph, cum, guide, z, n_samples, key, p_out, pool_max,
           n_chunks > 0)


add_chunks = cuda.jit(device=True)(_add_chunks)
draw_t, draw_p = cuda.jit(device=True)(_draw_t), cuda.jit(device=True)(_draw_p)
if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    from . import segments as _segments
    from .cuda_host import python_twins

    _twins, _seg_twins = python_twins(), python_twins(_segments)
    dot_seq, draw_nonzero, ratio = _twins["dot_seq"], _twins["draw_nonzero"], _twins["ratio"]
    summed_t_draw = _twins["summed_t_draw"]
    row_of, chunk_bounds = _seg_twins["row_of"], _seg_twins["chunk_bounds"]
    add_chunks, draw_t, draw_p = _add_chunks, _draw_t, _draw_p


def kernel_sources() -> dict:
    """kernel name → its Python function (:func:`same.model.kernels.cuda.kernel_functions`)."""
    return {"summed_t_partial": summed_t_partial_kernel, "summed_t_draw": summed_t_draw_kernel,
            "summed_ratio": summed_ratio_kernel, "summed_p_partial": summed_p_partial_kernel,
            "summed_p_draw": summed_p_draw_kernel}


@functools.lru_cache(maxsize=None)
def kernel_functions() -> dict:
    """kernel name → ``numba.cuda.jit`` kernel of the summed sampler (compiled lazily, per
    signature, at launch)."""
    return {name: cuda.jit(f) for name, f in kernel_sources().items()}


def _launch(name: str, grid: int, block: int, *args):
    launch_kernel(kernel_functions()[name], grid, block, *args)


def signatures() -> dict:
    """kernel name → the argument types it is launched with (compiled to PTX by the tests)."""
    from numba import types as t

    i64, i32v, f32v, f64v = t.int64[::1], t.int32[::1], t.float32[::1], t.float64[::1]
    f32m = t.float32[:, ::1]
    return {
        "summed_t_partial": [(i64, i32v, f32v, f32m, f32m, i64, i64, t.int64, f32m, f64v,
                              t.float64, t.float64, t.float64, t.uint64, t.float64)],
        "summed_t_draw": [(f32m, f64v, i64, i64, f32m, t.float64, t.float64, t.float64,
                           t.uint64, t.float64)],
        "summed_ratio": [(i64, i32v, f32v, f32m, f32m, f32v)],
        "summed_p_partial": [(i64, i64, i64, f32v, f32m, i64, i64, t.int64, f32m, f64v, f32m,
                              t.float64, t.uint64, t.int32[:, ::1], t.float64)],
        "summed_p_draw": [(f64v, f32m, i64, i64, f32m, t.float64, t.uint64, t.int32[:, ::1],
                           t.float64)],
    }


def summed_t_sweeps(indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                    doc_topic_prior, keys, ratio_out, pool_max):
    """The summed sampler's T sweeps, one per key (see :func:`same.model.kernels.summed_t_sweeps`):
    θ (float32, (D, K)) updated in place, then ``ratio_out`` (float32, (nnz,)) = c/μ."""
    from .cuda_host import _csr, _f32, _topics, _xp

    indptr, indices = _csr(indptr, indices)
    xp = _xp((theta,))
    n_docs, n_topics = _topics(theta)
    nnz = int(indices.shape[0])
    data, theta, phi_t = _f32("data", data), _f32("doc_topic", theta), _f32("topic_word_t", phi_t)
    if n_docs and len(keys):
        tokens = xp.bincount(rows(xp, indptr, nnz), weights=data.astype(xp.float64),
                             minlength=n_docs)  # Σ_w c_dw, in order j on the host
        cptr = chunk_ptr(xp, indptr, launch.CHUNK)
        mptr = multi_ptr(xp, cptr)
        part = xp.empty((launch.parts_bound(nnz), n_topics), dtype=xp.float32)
        scalars = (np.float64(n_samples), np.float64(prior_scale), np.float64(doc_topic_prior))
        for key in np.asarray(keys, dtype=np.uint64):
            _launch("summed_t_partial", *launch.summed_partial(n_docs, nnz), indptr, indices,
                    data, theta, phi_t, cptr, mptr, np.int64(launch.CHUNK), part, tokens,
                    *scalars, np.uint64(key), np.float64(pool_max))
            _launch("summed_t_draw", *launch.summed_draw(n_docs), theta, tokens, cptr, mptr,
                    part, *scalars, np.uint64(key), np.float64(pool_max))
    if nnz:
        _launch("summed_ratio", *launch.flat(nnz), indptr, indices, data, theta, phi_t,
                ratio_out)
    return theta, ratio_out


def word_order(indptr, indices, n_words: int):
    """(col_ptr, col_doc, col_nz) of a CSR block in CSC order, documents ascending within a
    word (a stable sort: the order of the CPU's counting sort); int64 arrays."""
    from .cuda_host import _xp

    xp = _xp((indices,))
    col_nz = xp.argsort(xp.asarray(indices), kind="stable").astype(xp.int64)
    docs = rows(xp, indptr, int(indices.shape[0]))
    col_ptr = xp.zeros(n_words + 1, dtype=xp.int64)
    col_ptr[1:] = xp.cumsum(xp.bincount(xp.asarray(indices), minlength=n_words))
    return col_ptr, docs[col_nz], col_nz


def summed_p_sweep(indptr, indices, data, ratio, theta, phi_t, n_samples, key, p_out,
                   pool_max):
    """The summed sampler's P sweep (see :func:`same.model.kernels.summed_p_sweep`): p_out (int32,
    (W, K)) overwritten."""
    from .cuda_host import _f32, _xp

    xp = _xp((theta,))
    n_words, n_topics = phi_t.shape
    nnz = int(indices.shape[0])
    col_ptr, col_doc, col_nz = word_order(indptr, indices, n_words)
    counts = xp.bincount(xp.asarray(indices), weights=xp.asarray(data, dtype=xp.float64),
                         minlength=n_words)
    cptr = chunk_ptr(xp, col_ptr, launch.CHUNK)
    mptr = multi_ptr(xp, cptr)
    part = xp.empty((launch.parts_bound(nnz), n_topics), dtype=xp.float32)
    phi_t = _f32("topic_word_t", phi_t)
    draw = (np.float64(n_samples), np.uint64(key), p_out, np.float64(pool_max))
    _launch("summed_p_partial", *launch.summed_partial(n_words, nnz), col_ptr, col_doc, col_nz,
            _f32("ratio", ratio), _f32("doc_topic", theta), cptr, mptr,
            np.int64(launch.CHUNK), part, counts, phi_t, *draw)
    _launch("summed_p_draw", *launch.summed_draw(n_words), counts, phi_t, cptr, mptr, part,
            *draw)
    return p_out
