"""Kernel speed and memory: SDDMM and Poisson sample-and-accumulate on a KOS-sized minibatch."""

import numpy as np

from .common import BACKENDS, TOPICS, block, require_backend, same_module, sync, to_xp


class Kernels:
    params = [BACKENDS, TOPICS]
    param_names = ["backend", "n_topics"]
    timeout = 300

    def setup(self, backend, n_topics):
        kernels = same_module("same.model.kernels")

        self.xp = require_backend(backend)
        self.kernels = kernels
        counts, theta, phi_t = block(n_topics)
        self.indptr, self.indices, self.data, self.theta, self.phi_t = to_xp(
            self.xp, counts, theta, phi_t)
        self.mu = kernels.sddmm(self.indptr, self.indices, self.theta, self.phi_t)
        self.T = self.xp.empty(self.theta.shape, dtype=self.xp.int32)
        self.P = self.xp.empty(self.phi_t.shape, dtype=self.xp.int32)
        # warm up (JIT compile / module load) outside the timed bodies
        self.time_sample_accumulate(backend, n_topics)
        sync(self.xp)

    def time_sddmm(self, backend, n_topics):
        self.kernels.sddmm(self.indptr, self.indices, self.theta, self.phi_t, out=self.mu)
        sync(self.xp)

    def time_sample_accumulate(self, backend, n_topics):
        self.kernels.sample_accumulate(self.indptr, self.indices, self.data, self.theta,
                                       self.phi_t, self.mu, 100.0, 12345, self.T, self.P)
        sync(self.xp)

    def peakmem_sample_accumulate(self, backend, n_topics):
        self.time_sample_accumulate(backend, n_topics)


class MinibatchStep:
    """One Algorithm 3 minibatch (n_inner=5 sweeps, φ update) for each sampler."""

    params = [BACKENDS, TOPICS, ["nonzero", "summed"]]
    param_names = ["backend", "n_topics", "sampler"]
    timeout = 300

    def setup(self, backend, n_topics, sampler):
        algorithm = same_module("same.model.algorithm")
        to_backend = same_module("same.model.backend").to_backend

        self.xp = require_backend(backend)
        counts, _, _ = block(n_topics)
        self.block = to_backend(counts.astype(np.float32), self.xp)
        word_counts = np.asarray(counts.sum(axis=0), dtype=np.float64).ravel()
        self.state = algorithm.init_state(word_counts, n_topics, 0, self.xp)
        self.settings = algorithm.StepSettings(
            n_samples=100.0, prior_scale=1.0, doc_topic_prior=0.1, topic_word_prior=0.1,
            n_inner=5, sampler=sampler, learning_rate=lambda step, seen, first: 0.5)
        self.step = algorithm.minibatch_step
        self.step(self.state, self.block, self.settings)  # warm up
        sync(self.xp)

    def time_step(self, backend, n_topics, sampler):
        self.step(self.state, self.block, self.settings)
        sync(self.xp)
