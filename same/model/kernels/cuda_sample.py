"""The per-nonzero sampler's CUDA kernel: a warp per chunk of nonzeros, its lanes across topics.

Algorithm 3's draws for nonzero j = (d, w) -- z_k ~ Poisson(m c θ_dk φ_kw / μ_j), then T_d
and P_w += z -- are :func:`same.model.kernels.elements.draw_nonzero`'s, counter for counter: the
early exit on the total rate m·c, topics with λ_k ≥ ``pool_max`` drawn alone (counter
j·(K+1) + k), the rest pooled into one Poisson draw (counter j·(K+1) + K) whose events are
split over the topics by their cumulative rates.  A block is one warp
(:mod:`same.model.kernels.cuda_warp`) taking :data:`~same.model.kernels.launch.NZ_CHUNK`
consecutive nonzeros in order, with K-long rows in its dynamic shared memory (θ_d and
φ_w in float32, as the model holds them):

1. θ_d is read into shared memory when the document changes, φ_w for every nonzero, the lanes
   across topics (coalesced);
2. :func:`~same.model.kernels.cuda_warp.warp_draw`: the lanes list the topics drawn alone and
   sum their pooled rates, a warp scan gives the cumulative rates, every Poisson draw (a listed
   topic's, the pooled count) is made by a lane of its own, and the pooled events are spread
   over the lanes (binary search, shared-memory atomic adds);
3. the draws are added to the document's running T row in shared memory and, with
   ``accumulate``, to P_w with int32 ``atomicAdd`` (one per topic with a positive draw); T_d
   goes to global memory with one ``atomicAdd`` per topic when the document changes or the
   chunk ends (a document may span blocks).

Integer counts add exactly in any order, so T and P are the draws' sums whatever the lanes'
interleaving; the cumulative rates are grouped by lane (identical to the CPU's draws except
where rounding flips one, :mod:`~same.model.kernels.cuda_warp`).  The early exit (m·c below
``pool_max`` and the pooled zero, probability about 1 − m·c) skips a nonzero before any
K-long work, all lanes agreeing.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float32, float64
from numba.core import config

from .cuda_warp import WARP, layout, slot, warp_draw
from .elements import element_counter, uniform
from .segments import advance, span

__all__ = ["sample_kernel", "signatures", "ROWS", "ROWS32"]

#: K-long shared rows of the kernel: float64 cumulative rates, draws and T_d (:data:`ROWS`),
#: then float32 θ_d and φ_w (:data:`ROWS32`, the model's own float32 values: at K = 256, 9.5
#: KB a block where five float64 rows took 11.8, so shared memory no longer limits the blocks
#: an H100 SM runs below what the registers allow: 22 against 20, where it was 18;
#: :func:`same.model.kernels.launch.blocks_per_sm`).
ROWS, ROWS32 = 3, 2


def _flush_t(d, t_out, tacc, n_topics, lay):  # pragma: no cover - device code
    """Add the running T row of document d to t_out[d] (int32 atomics), and zero it."""
    for k in range(cuda.threadIdx.x, n_topics, WARP):
        t = tacc[slot(k, lay)]
        if t > 0.0:
            cuda.atomic.add(t_out, (d, k), np.int32(t))
            tacc[slot(k, lay)] = 0.0


def sample_kernel(indptr, indices, data, theta, phi_t, mu, n_samples, key, t_out, p_out,
                  accumulate, pool_max, nz_chunk):  # pragma: no cover - device code
    n_topics = theta.shape[1]
    lay = layout(n_topics)
    R = WARP * lay[2]  # slots of a row
    lane = cuda.threadIdx.x
    sh = cuda.shared.array(0, float64)  # the same dynamic shared memory, two views
    sh32 = cuda.shared.array(0, float32)
    cum, z, tacc, scratch = sh[:R], sh[R:2 * R], sh[2 * R:3 * R], sh[3 * R:3 * R + WARP]
    at32 = 2 * (ROWS * R + WARP)  # the float32 rows after the float64 ones (shared_bytes)
    th, ph = sh32[at32:at32 + R], sh32[at32 + R:at32 + 2 * R]
    for k in range(lane, n_topics, WARP):
        tacc[slot(k, lay)] = 0.0
    cur = -1
    lo, hi, d = span(indptr, cuda.blockIdx.x * nz_chunk, nz_chunk, indices.shape[0])
    for j in range(lo, hi):  # the same j in every lane; d advanced over the run
        d = advance(indptr, j, d)
        mu_j, rate = mu[j], n_samples * data[j]
        ctr = element_counter(np.uint64(j) * np.uint64(n_topics + 1) + np.uint64(n_topics))
        if not mu_j > 0.0 or (rate < pool_max
                              and uniform(key, ctr) < 1.0 - rate * (1 + 1e-6)):
            continue
        w = indices[j]
        cuda.syncthreads()  # the previous nonzero's rows are done with
        if d != cur:
            if cur >= 0:
                flush_t(cur, t_out, tacc, n_topics, lay)
            for k in range(lane, n_topics, WARP):
                th[slot(k, lay)] = theta[d, k]
            cur = d
        for k in range(lane, n_topics, WARP):
            ph[slot(k, lay)] = phi_t[w, k]
        cuda.syncthreads()
        warp_draw(j, rate, rate / mu_j, th, ph, key, pool_max, cum, z, n_topics, lay, scratch)
        for k in range(lane, n_topics, WARP):
            i = slot(k, lay)
            zk = z[i]
            if zk > 0.0:
                tacc[i] += zk
                if accumulate:
                    cuda.atomic.add(p_out, (w, k), np.int32(zk))
    if cur >= 0:
        cuda.syncthreads()
        flush_t(cur, t_out, tacc, n_topics, lay)


flush_t = cuda.jit(device=True)(_flush_t)
if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    from . import segments as _segments
    from .cuda_host import python_twins

    _twins = python_twins()
    uniform, element_counter = _twins["uniform"], _twins["element_counter"]
    _seg_twins = python_twins(_segments)
    advance, span = _seg_twins["advance"], _seg_twins["span"]
    flush_t = _flush_t


def signatures() -> dict:
    """kernel name → the argument types it is launched with (compiled to PTX by the tests)."""
    from numba import types as t

    f32m = t.float32[:, ::1]
    return {"sample_accumulate": [(t.int64[::1], t.int32[::1], t.float32[::1], f32m, f32m,
                                   t.float32[::1], t.float64, t.uint64, t.int32[:, ::1],
                                   t.int32[:, ::1], t.boolean, t.float64, t.int64)]}
