"""The per-nonzero sampler's CUDA kernel: a block shares one nonzero's K topics at a time.

Algorithm 3's draws for nonzero j = (d, w) -- z_k ~ Poisson(m c θ_dk φ_kw / μ_j), then T_d
and P_w += z -- are :func:`same.model.kernels.elements.draw_nonzero`'s, counter for counter: the
early exit on the total rate m·c, topics with λ_k ≥ ``pool_max`` drawn alone (counter
j·(K+1) + k), the rest pooled into one Poisson draw (counter j·(K+1) + K) whose events are
split over the topics by their cumulative rates.  A thread per nonzero needs K-long scratch
(z, cumulative rates, guide table) per thread: 20·K bytes, too much for shared memory and,
in global memory, ~40·K bytes of traffic per nonzero.  Here a block of
:data:`~same.model.kernels.launch.THREADS` takes :data:`~same.model.kernels.launch.NZ_CHUNK`
consecutive nonzeros and draws them one after another, all its threads across the K topics,
with one K-long scratch in shared memory (cum float64, guide int32, z int32: 16 KiB at
K = 1024):

1. every thread the λ_k of its topics; a topic drawn alone is drawn by its thread into z;
2. one thread the prefix sums of the pooled λ in order k (float64, the CPU's order: the
   topic boundaries the events are compared with are the CPU's, bit for bit) and the pooled
   draw n -- the one K-long serial pass per nonzero, kept for that reason;
3. the n events across the threads (each its own counter), by the CPU's rule: fewer than
   K/4 events, each event's topic by binary search over cum (the topic the CPU's branch-free
   count gives, in log₂ K steps rather than K); more, a guide table, each entry found by
   binary search (the first topic whose cum exceeds i/K of the pooled rate: the table the
   CPU's sequential build gives), then the CPU's walk; z_k += 1 with shared-memory atomics;
4. the nonzero entries of z added to T_d and P_w with int32 ``atomicAdd`` (≤ 2 per topic with
   a positive draw, as before), z zeroed.

Integer counts add exactly in any order, so T and P are the CPU's whatever the threads'
interleaving (bit-identical under numba-cuda's simulator; on a GPU, fused multiply-adds in
λ may flip a draw).  No global scratch, no local arrays; the early exit (m·c below
``pool_max`` and the pooled zero, probability about 1 − m·c) skips a nonzero before any
K-long work, all threads agreeing.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float64, int32
from numba.core import config

from .elements import CAT_SALT, element_counter, poisson, uniform
from .segments import row_of

_TOPICS_MAX = 1024
_GUIDE_EVERY = 4  # elements._TOPICS_PER_EVENT_GUIDE: a guide table once n·4 ≥ K

__all__ = ["sample_kernel", "signatures"]


def _first_above(cum, x, n_topics):  # pragma: no cover - device code
    """min(K − 1, first k with cum[k] > x) by binary search (cum non-decreasing)."""
    lo, hi = 0, n_topics - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _split_events(n, pooled, cum, guide, z, key, ctr, n_topics):  # pragma: no cover
    """Step 3 of the module docstring: the n pooled events into z, threads striding."""
    tid, nth = cuda.threadIdx.x, cuda.blockDim.x
    cat_key = key ^ CAT_SALT
    if n * _GUIDE_EVERY < n_topics:
        for e in range(tid, n, nth):
            x = uniform(cat_key, ctr + np.uint64(e)) * pooled
            cuda.atomic.add(z, first_above(cum, x, n_topics), 1)
        return
    step = pooled / n_topics
    for i in range(tid, n_topics, nth):
        guide[i] = first_above(cum, step * i, n_topics)
    cuda.syncthreads()
    for e in range(tid, n, nth):
        u = uniform(cat_key, ctr + np.uint64(e))
        x = u * pooled
        k = guide[int(u * n_topics)]
        while k < n_topics - 1 and cum[k] <= x:
            k += 1
        cuda.atomic.add(z, k, 1)


def sample_kernel(indptr, indices, data, theta, phi_t, mu, n_samples, key, t_out, p_out,
                  accumulate, pool_max, nz_chunk):  # pragma: no cover - device code
    n_topics = theta.shape[1]
    tid, nth = cuda.threadIdx.x, cuda.blockDim.x
    cum = cuda.shared.array(_TOPICS_MAX, float64)
    guide = cuda.shared.array(_TOPICS_MAX, int32)
    z = cuda.shared.array(_TOPICS_MAX, int32)
    pooled_n = cuda.shared.array(2, float64)  # the pooled rate, the pooled draw
    for k in range(tid, n_topics, nth):
        z[k] = 0
    lo = cuda.blockIdx.x * nz_chunk
    for j in range(lo, min(lo + nz_chunk, indices.shape[0])):  # the same j in every thread
        mu_j, rate = mu[j], n_samples * data[j]  # each read once per thread
        base = np.uint64(j) * np.uint64(n_topics + 1)
        ctr = element_counter(base + np.uint64(n_topics))
        if not mu_j > 0.0 or (rate < pool_max
                              and uniform(key, ctr) < 1.0 - rate * (1 + 1e-6)):
            continue
        d, w, scale = row_of(indptr, j), indices[j], rate / mu_j
        cuda.syncthreads()  # the previous nonzero's z and cum are done with
        for k in range(tid, n_topics, nth):
            lam = scale * theta[d, k] * phi_t[w, k]
            cum[k] = 0.0 if lam >= pool_max else lam
            if lam >= pool_max:
                z[k] = poisson(lam, key, element_counter(base + np.uint64(k)))
        cuda.syncthreads()
        if tid == 0:
            pooled = np.float64(0.0)
            for k in range(n_topics):
                pooled += cum[k]
                cum[k] = pooled
            pooled_n[0] = pooled
            pooled_n[1] = poisson(pooled, key, ctr) if pooled > 0.0 else 0
        cuda.syncthreads()
        n = int(pooled_n[1])
        if n > 0:
            split_events(n, pooled_n[0], cum, guide, z, key, ctr, n_topics)
            cuda.syncthreads()
        for k in range(tid, n_topics, nth):
            if z[k] > 0:
                cuda.atomic.add(t_out, (d, k), z[k])
                if accumulate:
                    cuda.atomic.add(p_out, (w, k), z[k])
                z[k] = 0


first_above = cuda.jit(device=True)(_first_above)
split_events = cuda.jit(device=True)(_split_events)
if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    from . import segments as _segments
    from .cuda_host import python_twins

    _twins = python_twins()
    uniform, poisson = _twins["uniform"], _twins["poisson"]
    element_counter = _twins["element_counter"]
    row_of = python_twins(_segments)["row_of"]
    first_above, split_events = _first_above, _split_events


def signatures() -> dict:
    """kernel name → the argument types it is launched with (compiled to PTX by the tests)."""
    from numba import types as t

    f32m = t.float32[:, ::1]
    return {"sample_accumulate": [(t.int64[::1], t.int32[::1], t.float32[::1], f32m, f32m,
                                   t.float32[::1], t.float64, t.uint64, t.int32[:, ::1],
                                   t.int32[:, ::1], t.boolean, t.float64, t.int64)]}
