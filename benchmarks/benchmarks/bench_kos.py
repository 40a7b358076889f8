"""Whole-pass speed and model quality on real KOS; evaluator and parser speed."""

import numpy as np

from .common import (
    BACKENDS,
    TOPICS,
    docword_file,
    kos,
    kos_split,
    require_backend,
    same_module,
    sync,
)


class PassKOS:
    """One pass over the full KOS corpus (20 minibatches, n_inner = 5, m = 100)."""

    params = [BACKENDS, TOPICS]
    param_names = ["backend", "n_topics"]
    timeout = 600
    number = 1
    repeat = 3

    def setup(self, backend, n_topics):
        SameLDA = same_module("same.model.sampler").SameLDA

        self.xp = require_backend(backend)
        self.counts = kos().counts
        self.model = SameLDA(n_components=n_topics, n_copies=100, max_iter=1, backend=backend,
                             random_state=0)
        SameLDA(n_components=n_topics, max_iter=1, batch_size=2000, backend=backend,
                random_state=0).fit(self.counts[:50])  # compile / load kernels

    def time_pass(self, backend, n_topics):
        self.model.fit(self.counts)
        sync(self.xp)


class Quality:
    """Held-out ll after 3 passes on KOS (K=64, m=100, seed 0): a faster but broken
    sampler shows up here."""

    params = [["nonzero", "summed"]]
    param_names = ["sampler"]
    unit = "nats/token"
    timeout = 600

    def setup(self, sampler):
        kos_split()

    def track_heldout_ll(self, sampler):
        evaluate = same_module("same.model.evaluate").evaluate
        SameLDA = same_module("same.model.sampler").SameLDA

        s = kos_split()
        model = SameLDA(n_components=64, n_copies=100, max_iter=3, sampler=sampler,
                        random_state=0).fit(s.train)
        return evaluate(model.topic_word_, 0.1, s).ll


class Evaluator:
    params = [BACKENDS, TOPICS]
    param_names = ["backend", "n_topics"]
    timeout = 300

    def setup(self, backend, n_topics):
        evaluate = same_module("same.model.evaluate").evaluate

        self.xp = require_backend(backend)
        self.split = kos_split()
        phi = np.random.default_rng(0).dirichlet(np.full(6906, 0.05), size=n_topics)
        self.phi = phi if self.xp is np else self.xp.asarray(phi, dtype=self.xp.float32)
        self.evaluate = evaluate
        evaluate(self.phi, 0.1, self.split)

    def time_evaluate(self, backend, n_topics):
        self.evaluate(self.phi, 0.1, self.split)
        sync(self.xp)


class Parse:
    """Parsing a generated 1M-line docword.gz (pyarrow) and the cached reload."""

    timeout = 300

    def setup(self):
        self.path = docword_file(1_000_000)

    def time_parse_docword(self):
        read_docword = same_module("same.data.corpus").read_docword

        read_docword(self.path)

    def peakmem_parse_docword(self):
        read_docword = same_module("same.data.corpus").read_docword

        read_docword(self.path)
