"""The summed sampler's CUDA kernels: chunked partial sums, a warp per chunk, document or word.

Both sweeps of the summed sampler (:mod:`same.model.kernels.elements`: ``summed_t_doc``,
``summed_p_word``) sum K-vectors over a *segment* -- a document's nonzeros (T:
acc_k = Σ_w c_dw φ_kw / μ_dw) or a word's documents in the block's CSC order (P:
acc_k = Σ_d (c_dw / μ_dw) θ_dk) -- then make one draw from acc.  Every block is one warp
(:mod:`same.model.kernels.cuda_warp`), its lanes across the topics; each sweep is two launches:

1. ``*_partial``: a block per *chunk* of at most :data:`~same.model.kernels.launch.CHUNK` entries of
   one segment (:mod:`same.model.kernels.segments`); for each entry in order the lanes read
   the entry's row (T: φ_w, P: θ_d) across topics, coalesced, T's μ_dw as a warp sum
   (:func:`~same.model.kernels.cuda_warp.warp_sum`) of the lanes' float32 partial products,
   and add c/μ times the row to acc in float32 (``axpy``'s arithmetic, each topic's terms in
   entry order).  A segment of one chunk -- nearly every document, most words -- is drawn right
   there (step 2's draw); a longer one's sums go to ``part``, a compact array of only such
   segments' chunks (:func:`~same.model.kernels.segments.multi_ptr`; at most
   :func:`~same.model.kernels.launch.parts_bound` rows: 0.19 GB at PubMed's minibatch, K = 1024).
2. ``*_draw``: a block per segment (those of one chunk return at once); its lanes add the
   segment's partial sums in chunk order, then draw together
   (:func:`~same.model.kernels.cuda_warp.warp_draw`), θ_d or P_w written once.

``summed_ratio`` (c/μ with the last θ, for the P sweep) is a warp per
:data:`~same.model.kernels.launch.NZ_CHUNK` nonzeros, μ by warp sums.  μ's float32 sum is grouped
by lane, and a long segment's acc by chunk, so rates may differ from the CPU's in the last
float32 bits: the same draws from the same counters, identical except where that rounding flips
a draw, as for NVVM's fused multiply-adds (:mod:`same.model.kernels.cuda`).  Deterministic: no
floating-point atomics on sums.  The chunk list of a launch is bounded without reading the block
(⌈nnz / CHUNK⌉ + segments), so nothing waits for the device; blocks past the last chunk return
at once.  K-long rows live in the block's dynamic shared memory (float64,
:func:`~same.model.kernels.cuda_warp.shared_bytes`).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import cuda, float64
from numba.core import config

from . import launch
from .cuda_host import jit_kernel, launch_kernel
from .cuda_warp import WARP, layout, shared_bytes, slot, warp_dots, warp_draw, warp_sum
from .elements import ratio
from .segments import chunk_bounds, chunk_ptr, multi_ptr, segment_sums, word_order

__all__ = ["summed_t_sweeps", "summed_p_sweep", "word_order", "kernel_sources", "signatures",
           "ROWS"]

#: K-long shared rows of each kernel (its dynamic shared memory: :func:`shared_bytes`).
ROWS = {"summed_t_partial": 4, "summed_t_draw": 4, "summed_ratio": 0, "summed_p_partial": 4,
        "summed_p_draw": 4}


def _rows(sh, lay):  # pragma: no cover - device code
    """The block's four K-long shared rows (layout ``lay``) and its 32-value scratch."""
    R = 32 * lay[2]
    return sh[:R], sh[R:2 * R], sh[2 * R:3 * R], sh[3 * R:4 * R], sh[4 * R:4 * R + 32]


def _draw_t(d, theta, tokens, acc, th, cum, z, lay, scratch, n_samples, prior_scale,
            doc_topic_prior, key, pool_max):  # pragma: no cover - device code
    """Document d's T draw from acc (shared, filled): T_dk ~ Poisson(m θ_dk acc_k), the total
    rate m · tokens_d (:func:`same.model.kernels.elements.summed_t_draw`), then
    θ_d ← T_d / s + α written back."""
    n_topics = theta.shape[1]
    lane = cuda.threadIdx.x
    for k in range(lane, n_topics, WARP):
        th[slot(k, lay)] = theta[d, k]
        z[slot(k, lay)] = 0.0  # warp_draw leaves z as it is on its early exit
    cuda.syncthreads()
    warp_draw(d, n_samples * tokens[d], n_samples, th, acc, key, pool_max, cum, z, n_topics,
              lay, scratch)
    cuda.syncthreads()
    for k in range(lane, n_topics, WARP):
        theta[d, k] = z[slot(k, lay)] / prior_scale + doc_topic_prior


def _draw_p(w, phi_t, counts, acc, ph, cum, z, lay, scratch, n_samples, key, p_out, pool_max,
            present):  # pragma: no cover - device code
    """Word w's P draw from acc (shared, filled) into p_out[w] (zeros for an absent word):
    P_wk ~ Poisson(m acc_k φ_kw), the total rate m · counts_w."""
    n_topics = phi_t.shape[1]
    lane = cuda.threadIdx.x
    for k in range(lane, n_topics, WARP):
        ph[slot(k, lay)] = phi_t[w, k]
        z[slot(k, lay)] = 0.0
    cuda.syncthreads()
    if present:
        warp_draw(w, n_samples * counts[w], n_samples, acc, ph, key, pool_max, cum, z, n_topics,
                  lay, scratch)
    cuda.syncthreads()
    for k in range(lane, n_topics, WARP):
        p_out[w, k] = np.int32(z[slot(k, lay)])


def summed_t_partial_kernel(indptr, indices, data, theta, phi_t, cptr, mptr, chunk, part,
                            tokens, n_samples, prior_scale, doc_topic_prior, key,
                            pool_max):  # pragma: no cover - device code
    b = cuda.blockIdx.x
    if b >= cptr[cptr.shape[0] - 1]:
        return
    d, lo, hi = chunk_bounds(cptr, indptr, b, chunk)
    single = cptr[d + 1] - cptr[d] == 1  # the whole document: drawn here
    n_topics = theta.shape[1]
    lay = layout(n_topics)
    lane = cuda.threadIdx.x
    th, acc, cum, z, scratch = rows_of(cuda.shared.array(0, float64), lay)
    for k in range(lane, n_topics, WARP):
        th[slot(k, lay)] = theta[d, k]
        acc[slot(k, lay)] = 0.0
    j = lo
    while j < hi:  # every lane the same j; two entries at a time (their loads overlap)
        two = j + 1 < hi
        w0 = indices[j]
        w1 = indices[j + 1] if two else w0
        p0 = np.float32(0.0)
        p1 = np.float32(0.0)
        for k in range(lane, n_topics, WARP):
            t = np.float32(th[slot(k, lay)])
            p0 += t * phi_t[w0, k]
            if two:
                p1 += t * phi_t[w1, k]
        r0 = np.float32(ratio(data[j], warp_sum(p0, scratch)))
        r1 = np.float32(ratio(data[j + 1], warp_sum(p1, scratch))) if two else np.float32(0.0)
        for k in range(lane, n_topics, WARP):
            a = np.float32(acc[slot(k, lay)]) + r0 * phi_t[w0, k]
            if two:
                a = a + r1 * phi_t[w1, k]
            acc[slot(k, lay)] = a
        j += 2
    if single:
        cuda.syncthreads()
        draw_t(d, theta, tokens, acc, th, cum, z, lay, scratch, n_samples, prior_scale,
               doc_topic_prior, key, pool_max)
    else:
        row = mptr[d] + b - cptr[d]
        for k in range(lane, n_topics, WARP):
            part[row, k] = np.float32(acc[slot(k, lay)])


def _add_chunks(part, c0, c1, acc, n_topics, lay):  # pragma: no cover - device code
    """acc[k] = Σ_{c0 ≤ c < c1} part[c, k] in order c, in float32, lanes over topics (acc in
    layout ``lay``)."""
    for k in range(cuda.threadIdx.x, n_topics, WARP):
        s = np.float32(0.0)
        for c in range(c0, c1):
            s += part[c, k]
        acc[slot(k, lay)] = s


def summed_t_draw_kernel(theta, tokens, cptr, mptr, part, n_samples, prior_scale,
                         doc_topic_prior, key, pool_max):  # pragma: no cover - device code
    d = cuda.blockIdx.x
    n_chunks = cptr[d + 1] - cptr[d]
    if n_chunks == 1:  # drawn by its partial-sum block
        return
    n_topics = theta.shape[1]
    lay = layout(n_topics)
    th, acc, cum, z, scratch = rows_of(cuda.shared.array(0, float64), lay)
    m0 = mptr[d]
    add_chunks(part, m0, m0 + n_chunks, acc, n_topics, lay)  # none: an empty document
    cuda.syncthreads()
    draw_t(d, theta, tokens, acc, th, cum, z, lay, scratch, n_samples, prior_scale,
           doc_topic_prior, key, pool_max)


def summed_ratio_kernel(indptr, indices, data, theta, phi_t, nz_chunk,
                        ratio_out):  # pragma: no cover - device code
    warp_dots(indptr, indices, data, theta, phi_t, cuda.blockIdx.x * nz_chunk, nz_chunk,
              np.float32(0.0), ratio_out, cuda.shared.array(0, float64)[:WARP])


def summed_p_partial_kernel(col_ptr, col_doc, col_nz, ratios, data, theta, cptr, mptr, chunk,
                            part, counts, phi_t, n_samples, key, p_out,
                            pool_max):  # pragma: no cover - device code
    b = cuda.blockIdx.x
    if b >= cptr[cptr.shape[0] - 1]:
        return
    w, lo, hi = chunk_bounds(cptr, col_ptr, b, chunk)
    single = cptr[w + 1] - cptr[w] == 1  # the whole word: drawn here
    n_topics = theta.shape[1]
    lay = layout(n_topics)
    lane = cuda.threadIdx.x
    fused = ratios.shape[0] == 0  # c/μ from θ here (summed_ratio's sums), else given
    acc, ph, cum, z, scratch = rows_of(cuda.shared.array(0, float64), lay)
    for k in range(lane, n_topics, WARP):
        acc[slot(k, lay)] = 0.0
        ph[slot(k, lay)] = phi_t[w, k]
    for e in range(lo, hi):  # every lane the same e
        j, dd = col_nz[e], col_doc[e]
        if fused:
            p = np.float32(0.0)
            for k in range(lane, n_topics, WARP):
                p += theta[dd, k] * np.float32(ph[slot(k, lay)])
            r = np.float32(ratio(data[j], warp_sum(p, scratch)))
        else:
            r = ratios[j]
        for k in range(lane, n_topics, WARP):
            acc[slot(k, lay)] = np.float32(acc[slot(k, lay)]) + r * theta[dd, k]
    if single:
        cuda.syncthreads()
        draw_p(w, phi_t, counts, acc, ph, cum, z, lay, scratch, n_samples, key, p_out, pool_max,
               True)
    else:
        row = mptr[w] + b - cptr[w]
        for k in range(lane, n_topics, WARP):
            part[row, k] = np.float32(acc[slot(k, lay)])


def summed_p_draw_kernel(counts, phi_t, cptr, mptr, part, n_samples, key, p_out,
                         pool_max):  # pragma: no cover - device code
    w = cuda.blockIdx.x
    n_chunks = cptr[w + 1] - cptr[w]
    if n_chunks == 1:  # drawn by its partial-sum block
        return
    n_topics = phi_t.shape[1]
    lay = layout(n_topics)
    acc, ph, cum, z, scratch = rows_of(cuda.shared.array(0, float64), lay)
    m0 = mptr[w]
    add_chunks(part, m0, m0 + n_chunks, acc, n_topics, lay)  # none: an absent word
    cuda.syncthreads()
    draw_p(w, phi_t, counts, acc, ph, cum, z, lay, scratch, n_samples, key, p_out, pool_max,
           n_chunks > 0)


rows_of = cuda.jit(device=True)(_rows)
add_chunks = cuda.jit(device=True)(_add_chunks)
draw_t, draw_p = cuda.jit(device=True)(_draw_t), cuda.jit(device=True)(_draw_p)
if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    from . import segments as _segments
    from .cuda_host import python_twins

    _twins, _seg_twins = python_twins(), python_twins(_segments)
    ratio = _twins["ratio"]
    chunk_bounds = _seg_twins["chunk_bounds"]
    rows_of, add_chunks, draw_t, draw_p = _rows, _add_chunks, _draw_t, _draw_p


def kernel_sources() -> dict:
    """kernel name → its Python function (:func:`same.model.kernels.cuda.kernel_functions`)."""
    return {"summed_t_partial": summed_t_partial_kernel, "summed_t_draw": summed_t_draw_kernel,
            "summed_ratio": summed_ratio_kernel, "summed_p_partial": summed_p_partial_kernel,
            "summed_p_draw": summed_p_draw_kernel}


@functools.lru_cache(maxsize=None)
def kernel_functions() -> dict:
    """kernel name → ``numba.cuda.jit`` kernel of the summed sampler (compiled lazily, per
    signature, at launch), with the register caps of :data:`~same.model.kernels.cuda_host.MAX_REGISTERS`."""
    return {name: jit_kernel(name, f) for name, f in kernel_sources().items()}


def _launch(name: str, grid: int, block: int, *args, n_topics: int = 0):
    launch_kernel(kernel_functions()[name], grid, block, *args,
                  shared=shared_bytes(ROWS[name], n_topics))


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
        "summed_ratio": [(i64, i32v, f32v, f32m, f32m, t.int64, f32v)],
        "summed_p_partial": [(i64, i64, i64, f32v, f32v, f32m, i64, i64, t.int64, f32m, f64v,
                              f32m, t.float64, t.uint64, t.int32[:, ::1], t.float64)],
        "summed_p_draw": [(f64v, f32m, i64, i64, f32m, t.float64, t.uint64, t.int32[:, ::1],
                           t.float64)],
    }


def summed_t_sweeps(indptr, indices, data, theta, phi_t, n_samples, prior_scale,
                    doc_topic_prior, keys, ratio_out, pool_max):
    """The summed sampler's T sweeps, one per key (see :func:`same.model.kernels.summed_t_sweeps`):
    θ (float32, (D, K)) updated in place, then ``ratio_out`` (float32, (nnz,)) = c/μ
    (skipped when None)."""
    from .cuda_host import _csr, _f32, _topics, _xp

    indptr, indices = _csr(indptr, indices)
    xp = _xp((theta,))
    n_docs, n_topics = _topics(theta)
    nnz = int(indices.shape[0])
    data, theta, phi_t = _f32("data", data), _f32("doc_topic", theta), _f32("topic_word_t", phi_t)
    if n_docs and len(keys):
        tokens = segment_sums(xp, indptr, data)  # Σ_w c_dw
        cptr = chunk_ptr(xp, indptr, launch.CHUNK)
        mptr = multi_ptr(xp, cptr)
        part = xp.empty((launch.parts_bound(nnz), n_topics), dtype=xp.float32)
        scalars = (np.float64(n_samples), np.float64(prior_scale), np.float64(doc_topic_prior))
        for key in np.asarray(keys, dtype=np.uint64):
            _launch("summed_t_partial", *launch.summed_partial(n_docs, nnz), indptr, indices,
                    data, theta, phi_t, cptr, mptr, np.int64(launch.CHUNK), part, tokens,
                    *scalars, np.uint64(key), np.float64(pool_max), n_topics=n_topics)
            _launch("summed_t_draw", *launch.summed_draw(n_docs), theta, tokens, cptr, mptr,
                    part, *scalars, np.uint64(key), np.float64(pool_max), n_topics=n_topics)
    if nnz and ratio_out is not None:
        _launch("summed_ratio", *launch.summed_ratio(nnz), indptr, indices, data, theta, phi_t,
                np.int64(launch.NZ_CHUNK), ratio_out, n_topics=n_topics)
    return theta, ratio_out


def summed_p_sweep(indptr, indices, data, ratio, theta, phi_t, n_samples, key, p_out,
                   pool_max):
    """The summed sampler's P sweep (see :func:`same.model.kernels.summed_p_sweep`): p_out (int32,
    (W, K)) overwritten; ``ratio`` None: c/μ computed from θ in the partial sums (the values
    ``summed_ratio`` gives: the same warp sums), no ratio pass."""
    from .cuda_host import _f32, _xp

    xp = _xp((theta,))
    n_words, n_topics = phi_t.shape
    nnz = int(indices.shape[0])
    col_ptr, col_doc, col_nz = word_order(indptr, indices, n_words)
    counts = segment_sums(xp, col_ptr, xp.asarray(data)[col_nz])  # Σ_d c_dw
    cptr = chunk_ptr(xp, col_ptr, launch.CHUNK)
    mptr = multi_ptr(xp, cptr)
    part = xp.empty((launch.parts_bound(nnz), n_topics), dtype=xp.float32)
    phi_t = _f32("topic_word_t", phi_t)
    draw = (np.float64(n_samples), np.uint64(key), p_out, np.float64(pool_max))
    ratio = xp.empty(0, dtype=xp.float32) if ratio is None else _f32("ratio", ratio)
    _launch("summed_p_partial", *launch.summed_partial(n_words, nnz), col_ptr, col_doc, col_nz,
            ratio, _f32("data", data), _f32("doc_topic", theta), cptr, mptr,
            np.int64(launch.CHUNK), part, counts, phi_t, *draw, n_topics=n_topics)
    _launch("summed_p_draw", *launch.summed_draw(n_words), counts, phi_t, cptr, mptr, part,
            *draw, n_topics=n_topics)
    return p_out
