"""Warp-cooperative device code shared by every CUDA sampling kernel: a block is one warp.

Every sampling kernel runs blocks of :data:`~same.model.kernels.launch.WARP` (32) threads, each
block one item at a time (a document, a word, a chunk of nonzeros), its 32 lanes across the
item's K topics.  No lane runs a K-long loop: a lane touches ⌈K/32⌉ topics per pass.

- Sums over the K topics (μ of a nonzero) are a lane's partial sum over its topics k ≡ lane
  (mod 32), then :func:`warp_sum`, a butterfly over the 32 lanes (``shfl.bfly``: every lane
  ends with the same bits).
- :func:`warp_draw` makes :func:`same.model.kernels.elements.draw_nonzero`'s K Poisson draws,
  counter for counter: lane l owns topics ⌈K/32⌉·l …; in one pass the lanes list the topics
  with λ_k ≥ ``pool_max`` (a ballot per step, :func:`warp_rank`) and sum their pooled λ in
  order k.  Every Poisson draw -- each listed topic's and the pooled count n -- is then made
  by its own lane, 32 at a time (entry i of the list by lane i mod 32), so no lane draws
  while the others wait: where one lane's topics held every large rate, it drew them one
  after another.  An exclusive scan over the lanes (:func:`warp_scan`, ``shfl.up``) gives
  every lane the pooled rate before its topics, so the cumulative rates are written by all
  lanes at once; the n events go across the lanes, each placed by binary search over the
  cumulative rates (:func:`first_above`: the topic the CPU's count or guide-table walk gives)
  and counted with a shared-memory atomic add.

The cumulative rates are the CPU's sums grouped by lane, so they may differ from the CPU's
sequential ones in the last bits: an event whose uniform falls within that rounding of a
topic boundary can land one topic over (probability ~1e-16 per event); otherwise the draws are
the CPU's.  The shuffles have simulator twins (numba-cuda's simulator has no warp intrinsics):
the same additions in the same order through a shared scratch, so the simulator computes the
bits a GPU computes, fused multiply-adds aside.  Which lane makes a draw changes no draw: each
uses its own topic's counters.

Scratch lives in the block's dynamic shared memory (:func:`shared_bytes`): float64 rows of K
values (sums, cumulative rates, draws) and a 32-value scratch, then, where a kernel keeps them
apart, float32 rows of the model's float32 values (θ_d, φ_w: half the bytes, so more blocks
fit an SM); integer draws are held as float64 (exact below 2^53) and added with float64
atomics.  A rate reads its factors as float64 (:func:`warp_draw`), so a float32 row gives the
bits a float64 row holding the same values gives.
"""

from __future__ import annotations

import numpy as np
from numba import cuda
from numba.core import config

from .elements import CAT_SALT, element_counter, poisson, ratio, uniform
from .segments import advance, span

__all__ = ["WARP", "shared_bytes", "row_slots", "layout", "slot", "warp_dots", "warp_sum", "warp_scan", "warp_shift", "warp_take", "warp_rank", "warp_draw", "first_above"]

#: Threads per block of the sampling kernels: one warp.
WARP = 32
_FULL = 0xFFFFFFFF


def _layout(n_topics):  # pragma: no cover - device code (and the host's row_slots)
    """(shift, mask, stride) of a K-long shared row: lane l owns topics l·per … l·per + per − 1
    (per = 2^shift ≥ ⌈K/32⌉), stored ``stride`` = per + 1 slots apart (an odd stride, so the
    32 lanes' accesses to their i-th topics fall in distinct banks; without the pad, 8-byte
    values 8 apart collide 16-way)."""
    per = 1
    shift = 0
    while per * 32 < n_topics:
        per *= 2
        shift += 1
    return shift, per - 1, per + 1 if per > 1 else 1


def _slot(k, lay):  # pragma: no cover - device code
    """The shared slot of topic k in a row of layout ``lay``."""
    return (k >> lay[0]) * lay[2] + (k & lay[1])


def row_slots(n_topics: int) -> int:
    """Slots of one K-long shared row (:func:`_layout`): 32 lanes × the stride."""
    return WARP * _layout(int(n_topics))[2]


def shared_bytes(n_rows: int, n_topics: int, n_rows32: int = 0) -> int:
    """Dynamic shared memory of a block holding ``n_rows`` K-long float64 rows
    (:func:`row_slots` each), the 32-value float64 scratch of the warp functions, then
    ``n_rows32`` K-long float32 rows, in bytes."""
    return 8 * (int(n_rows) * row_slots(n_topics) + WARP) + 4 * int(n_rows32) * row_slots(n_topics)


def _warp_sum(x, scratch):  # pragma: no cover - device code
    """Σ over the 32 lanes of x (every lane gets the same bits): butterfly, offsets 16 … 1."""
    off = 16
    while off > 0:
        x = x + cuda.shfl_xor_sync(_FULL, x, off)
        off //= 2
    return x


def _warp_scan(x, scratch):  # pragma: no cover - device code
    """Inclusive prefix sum of x over lanes 0 … lane: Hillis–Steele, offsets 1 … 16."""
    lane = cuda.threadIdx.x
    off = 1
    while off < 32:
        y = cuda.shfl_up_sync(_FULL, x, off)
        if lane >= off:
            x = y + x
        off *= 2
    return x


def _lanes(x, scratch):  # pragma: no cover - simulator only
    """Every lane's x, in lane order (one exchange through shared memory)."""
    scratch[cuda.threadIdx.x] = x
    cuda.syncthreads()
    vals = [type(x)(scratch[i]) for i in range(32)]
    cuda.syncthreads()
    return vals


def _warp_sum_twin(x, scratch):  # pragma: no cover - simulator only
    """:func:`_warp_sum` in the simulator: the lanes' values exchanged once, then the
    butterfly's additions, level by level in the same order, for this lane."""
    vals = _lanes(x, scratch)
    off = 16
    while off > 0:
        vals = [vals[i] + vals[i ^ off] for i in range(32)]
        off //= 2
    return vals[cuda.threadIdx.x]


def _warp_scan_twin(x, scratch):  # pragma: no cover - simulator only
    """:func:`_warp_scan` in the simulator: the same additions in the same order."""
    vals = _lanes(x, scratch)
    off = 1
    while off < 32:
        vals = [vals[i - off] + vals[i] if i >= off else vals[i] for i in range(32)]
        off *= 2
    return vals[cuda.threadIdx.x]


def _warp_dots(indptr, indices, data, theta, phi_t, first, nz_chunk, zero, out,
               scratch):  # pragma: no cover - device code
    """μ_j = Σ_k θ_dk φ_kw for the warp's run of ``nz_chunk`` nonzeros from ``first``, each the
    lanes' partial sums (in ``zero``'s type) added by :func:`warp_sum`; lane 0 writes
    ``out[j]`` = μ_j, or c_j / μ_j (:func:`~same.model.kernels.elements.ratio`) when ``data``
    has entries."""
    n_topics = theta.shape[1]
    lane = cuda.threadIdx.x
    lo, hi, d = span(indptr, first, nz_chunk, indices.shape[0])
    for j in range(lo, hi):  # the same j in every lane; d advanced over the run
        d = advance(indptr, j, d)
        w = indices[j]
        p = zero
        for k in range(lane, n_topics, WARP):
            p += theta[d, k] * phi_t[w, k]
        mu = warp_sum(p, scratch)
        if lane == 0:
            out[j] = ratio(data[j], mu) if data.shape[0] > 0 else mu


def _first_above(cum, x, n_topics, lay):  # pragma: no cover - device code
    """min(K − 1, first k with cum[k] > x) by binary search (cum non-decreasing, in layout
    ``lay``): the topic of :func:`same.model.kernels.elements._split_pooled` (its count and its
    guide-table walk)."""
    lo, hi = 0, n_topics - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[slot(mid, lay)] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _warp_draw(j, rate, scale, a, b, key, pool_max, cum, z, n_topics, lay,
               scratch):  # pragma: no cover - device code
    """Element j's K draws z_k ~ Poisson(scale · a_k · b_k) into z (shared, float64), the warp
    together; :func:`same.model.kernels.elements.draw_nonzero`'s counters and early exit.

    a, b : shared rows of K values (float32 rows, or float64 rows: θ_d's or φ_w's float32
    values, or the summed sampler's float64 sums; read as float64); cum : shared K scratch
    (the list of topics drawn alone, then the cumulative pooled rates); all in layout ``lay``
    (:func:`_layout`); scratch : the block's 32-value scratch (its first value carries the
    pooled count).  Returns False (z untouched) on the early exit, else True with z written
    for every k.  Every lane must call it (it synchronises the block); z is complete when it
    returns.  Per lane: 3 passes over its topics and at most ⌈(K + 1)/32⌉ Poisson draws
    (:data:`same.model.kernels.launch.DRAW_PASSES`).
    """
    lane = cuda.threadIdx.x
    base = np.uint64(j) * np.uint64(n_topics + 1)
    ctr = element_counter(base + np.uint64(n_topics))
    if rate < pool_max:
        if uniform(key, ctr) < 1.0 - rate * (1 + 1e-6):
            return False
    per = lay[1] + 1
    lo = min(lane * per, n_topics)
    hi = min(lo + per, n_topics)
    at = lane * lay[2] - lo  # slot of topic k: at + k (the lane's own, contiguous)
    s, n_alone = list_alone(scale, a, b, pool_max, z, cum, lo, hi, at, lay, scratch)
    before = warp_shift(warp_scan(s, scratch), scratch)  # pooled rate of the lanes before
    # Σ pooled λ: the cumulative rate of the last topic, as its lane writes it below
    pooled = warp_take(before + s, (n_topics - 1) >> lay[0], scratch)
    if n_alone > 0:
        cuda.syncthreads()
    # every draw spread over the lanes, entry i of the list by lane i mod 32, the pooled
    # count as entry n_alone: one Poisson call site, no lane drawing while the others wait
    n_draws = n_alone + (1 if pooled > 0.0 else 0)
    for i in range(lane, n_draws, 32):
        q = 0
        if i < n_alone:
            k = int(cum[slot(i, lay)])
            q = slot(k, lay)
            lam = scale * np.float64(a[q]) * np.float64(b[q])
            c = element_counter(base + np.uint64(k))
        else:
            lam, c = pooled, ctr
        v = poisson(lam, key, c)
        if i < n_alone:
            z[q] = v
        else:
            scratch[0] = v
    cuda.syncthreads()
    n = int(scratch[0]) if pooled > 0.0 else 0
    s = np.float64(0.0)
    for k in range(lo, hi):  # the cumulative pooled rates, the list overwritten
        lam = scale * np.float64(a[at + k]) * np.float64(b[at + k])
        if not lam >= pool_max:
            s += lam
        cum[at + k] = before + s
    cuda.syncthreads()
    if n > 0:
        cat_key = key ^ CAT_SALT
        for e in range(lane, n, 32):
            x = uniform(cat_key, ctr + np.uint64(e)) * pooled
            cuda.atomic.add(z, slot(first_above(cum, x, n_topics, lay), lay), 1.0)
    cuda.syncthreads()
    return True


def _list_alone(scale, a, b, pool_max, z, cum, lo, hi, at, lay,
                scratch):  # pragma: no cover - device code
    """:func:`_warp_draw`'s first pass: z zeroed over the lane's topics lo … hi − 1 (slots
    at + k), the topics with λ_k ≥ ``pool_max`` listed in cum (a scratch until the cumulative
    rates), in order of (position in a lane, lane): the order of the draws changes none of
    them.  Returns (this lane's pooled rates summed in order k, the topics listed: every lane
    the same)."""
    s = np.float64(0.0)
    n_alone = 0
    for i in range(lay[1] + 1):  # every lane every step (the ballot takes all 32)
        k = lo + i
        alone = False
        if k < hi:
            z[at + k] = 0.0
            lam = scale * np.float64(a[at + k]) * np.float64(b[at + k])
            alone = lam >= pool_max
            if not alone:
                s += lam
        rank, count = warp_rank(alone, scratch)
        if alone:
            cum[slot(n_alone + rank, lay)] = k
        n_alone += count
    return s, n_alone


def _warp_rank(flag, scratch):  # pragma: no cover - device code
    """(lanes before this one whose flag is set, lanes whose flag is set): a ballot."""
    votes = cuda.ballot_sync(_FULL, flag)
    return cuda.popc(votes & cuda.lanemask_lt()), cuda.popc(votes)


def _warp_rank_twin(flag, scratch):  # pragma: no cover - simulator only
    votes = _lanes(1.0 if flag else 0.0, scratch)
    return int(sum(votes[:cuda.threadIdx.x])), int(sum(votes))


def _warp_take(x, src, scratch):  # pragma: no cover - device code
    """x of lane ``src`` in every lane."""
    return cuda.shfl_sync(_FULL, x, src)


def _warp_take_twin(x, src, scratch):  # pragma: no cover - simulator only
    return _lanes(x, scratch)[src]


def _warp_shift(x, scratch):  # pragma: no cover - device code
    """x of lane − 1 (0 in lane 0): an inclusive scan made exclusive without a subtraction."""
    y = cuda.shfl_up_sync(_FULL, x, 1)
    return y if cuda.threadIdx.x > 0 else np.float64(0.0)


def _warp_shift_twin(x, scratch):  # pragma: no cover - simulator only
    lane = cuda.threadIdx.x
    scratch[lane] = x
    cuda.syncthreads()
    y = type(x)(scratch[lane - 1]) if lane > 0 else type(x)(0.0)
    cuda.syncthreads()
    return y


layout = cuda.jit(device=True)(_layout)
slot = cuda.jit(device=True)(_slot)
first_above = cuda.jit(device=True)(_first_above)
warp_sum = cuda.jit(device=True)(_warp_sum)
warp_scan = cuda.jit(device=True)(_warp_scan)
warp_shift = cuda.jit(device=True)(_warp_shift)
warp_take = cuda.jit(device=True)(_warp_take)
warp_rank = cuda.jit(device=True)(_warp_rank)
list_alone = cuda.jit(device=True)(_list_alone)
warp_draw = cuda.jit(device=True)(_warp_draw)
warp_dots = cuda.jit(device=True)(_warp_dots)
if config.ENABLE_CUDASIM:  # pragma: no cover - only in the simulator's process
    from .cuda_host import python_twins

    _twins = python_twins()
    uniform, poisson = _twins["uniform"], _twins["poisson"]
    element_counter, ratio = _twins["element_counter"], _twins["ratio"]
    from . import segments as _segments

    _seg_twins = python_twins(_segments)
    advance, span = _seg_twins["advance"], _seg_twins["span"]
    warp_dots = _warp_dots
    first_above, warp_draw, layout, slot = _first_above, _warp_draw, _layout, _slot
    warp_sum, warp_scan, warp_shift = _warp_sum_twin, _warp_scan_twin, _warp_shift_twin
    warp_take, warp_rank = _warp_take_twin, _warp_rank_twin
    list_alone = _list_alone

    class _SimulatedThread:
        """What these functions use of ``cuda`` in the simulator: it swaps ``cuda`` only in
        the launched kernel's own module, so this one reads the simulated thread directly."""

        from numba.cuda.simulator.kernelapi import FakeCUDAAtomic as _Atomic

        atomic = _Atomic()

        @property
        def threadIdx(self):  # noqa: N802 - CUDA's name
            import threading

            return threading.current_thread().threadIdx

        @staticmethod
        def syncthreads():
            import threading

            threading.current_thread().syncthreads()

    cuda = _SimulatedThread()

