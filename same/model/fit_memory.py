"""Memory a fit implies, checked before anything is allocated.

A spec's K or a corpus header's W can imply arrays far beyond any machine (``n_components:
10**7`` on KOS: 515 GiB for one float64 φ); numpy then fails deep inside training with a
MemoryError, or the kernel kills the process.  :func:`check_fit_memory` compares a *lower
bound* of what every method holds at once with the memory available now and refuses clearly
beyond it.  Being a lower bound it never refuses a fit that could run; a fit just below it
may still run out of memory.
"""

from __future__ import annotations

__all__ = ["fit_memory_lower_bound", "device_memory_lower_bound", "check_fit_memory",
           "PHI_BYTES_PER_ENTRY", "DEVICE_BYTES_PER_ENTRY"]

#: Bytes per topic-word entry (K × W) that a method holds at once, at least, read off its
#: code: SAME's initial φ (two float64 arrays: the draw and its product with the word
#: counts) beside its float32 φᵀ; CGS's float64 export counts and φ beside tomotopy's int32
#: counts; gensim VB's float64 λ, sufficient statistics, exp E[log β] and the sufficient
#: statistics of the update in progress, and the float64 φ exported from them (gensim holds
#: about six such arrays at its peak: results/bench/scale.json).
PHI_BYTES_PER_ENTRY = {"same": 20, "cgs": 20, "vb_online": 40, "vb_batch": 40,
                       "sklearn_online": 32, "sklearn_batch": 32}


#: Bytes per topic-word entry a SAME fit holds on the GPU at once, at least (cupy backend):
#: φᵀ (float32), its IncNorm successor (float32, same.model.algorithm.incnorm_update), the step's P
#: counts (int32) and IncNorm's float64 blend (same.model.kernels.incnorm: φᵀ as float64, made
#: while the other three are held; its further temporaries are not counted).
DEVICE_BYTES_PER_ENTRY = 20


def device_memory_lower_bound(n_topics: int, n_words: int, n_docs_kept: int = 0) -> int:
    """Bytes a SAME fit on the GPU holds there at least: K × W × :data:`DEVICE_BYTES_PER_ENTRY`
    plus θ (float32) of the ``n_docs_kept`` documents kept on the device (PubMed at K = 1024:
    33.6 GB of θ alone)."""
    return (int(n_topics) * int(n_words) * DEVICE_BYTES_PER_ENTRY
            + int(n_docs_kept) * int(n_topics) * 4)


def fit_memory_lower_bound(method: str, n_topics: int, n_words: int,
                           n_docs_in_ram: int = 0) -> int:
    """Bytes a fit of ``method`` with K = ``n_topics`` topics over W = ``n_words`` words holds
    at least: K × W × :data:`PHI_BYTES_PER_ENTRY`, plus θ (float32) of ``n_docs_in_ram``
    documents kept in RAM."""
    return (int(n_topics) * int(n_words) * PHI_BYTES_PER_ENTRY[method]
            + int(n_docs_in_ram) * int(n_topics) * 4)


def check_fit_memory(method: str, n_topics: int, n_words: int, n_docs_kept: int = 0,
                     xp=None) -> None:
    """Refuse a fit whose :func:`fit_memory_lower_bound` exceeds the memory available now
    (``psutil.virtual_memory().available``).  θ of ``n_docs_kept`` documents counts when
    :func:`same.model.backend.doc_topic_in_ram` says it is held in host RAM on backend ``xp``
    (default NumPy).  On CuPy, SAME's :func:`device_memory_lower_bound` is compared with the
    GPU's free memory (the driver's, plus what CuPy's pool holds free) first.

    Raises
    ------
    MemoryError
        One line naming K, W, the bound and what is available (integers of any size: no
        float conversion), on the host or the GPU.
    """
    import numpy as np
    import psutil

    from .backend import doc_topic_in_ram

    xp = np if xp is None else xp
    if xp is not np and method == "same":
        _check_device_memory(xp, n_topics, n_words, n_docs_kept)
    in_ram = doc_topic_in_ram(n_docs_kept, n_topics, xp)
    n_docs_in_ram = n_docs_kept if in_ram else 0
    _refuse(method, n_topics, n_words, n_docs_in_ram,
            fit_memory_lower_bound(method, n_topics, n_words, n_docs_in_ram),
            psutil.virtual_memory().available)


def _check_device_memory(xp, n_topics: int, n_words: int, n_docs_kept: int) -> None:
    """Refuse a SAME fit on CuPy whose device arrays exceed the GPU's free memory."""
    have = int(xp.cuda.runtime.memGetInfo()[0]) + int(xp.get_default_memory_pool().free_bytes())
    _refuse("same", n_topics, n_words, n_docs_kept,
            device_memory_lower_bound(n_topics, n_words, n_docs_kept), have, device=True)


def _refuse(method: str, n_topics: int, n_words: int, n_docs: int, need: int, have: int,
            device: bool = False) -> None:
    """The one-line MemoryError of :func:`check_fit_memory` when ``need`` > ``have`` bytes,
    of host memory or (``device``) of the GPU's."""
    if need <= have:
        return
    from same.io.textinput import gib_text, int_text

    theta = f" and θ of {int_text(n_docs)} documents" if n_docs else ""
    on, of, left, use = ((" on the GPU", " of device memory", "free",
                          "fewer topics, a smaller vocabulary or keep_doc_topic=False")
                         if device else ("", "", "available", "fewer topics or a smaller vocabulary"))
    raise MemoryError(f"{method} with n_components={int_text(n_topics)} × {int_text(n_words)} "
                      f"words{on}: its φ arrays{theta} need at least {gib_text(need)} GiB{of}, more "
                      f"than the {gib_text(have)} GiB {left}; use {use}")
