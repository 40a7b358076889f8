"""Layer 2, the model: SAME Gibbs sampling for LDA and the one held-out evaluator.

- paper Algorithm 3 as plain functions (:mod:`same.model.algorithm`), the scikit-learn
  estimator looping over them (:class:`same.model.sampler.SameLDA`, with
  :mod:`same.model.training`, :mod:`same.model.inference`, :mod:`same.model.params`,
  :mod:`same.model.schedules`), the NumPy/CuPy backend (:mod:`same.model.backend`) and the
  kernels (:mod:`same.model.kernels`: numba CPU and numba-cuda GPU, one per-element source);
- the memory a fit needs, checked before it allocates (:mod:`same.model.fit_memory`);
- evaluation: held-out log-likelihood by document completion, left-to-right and BIDMach's
  estimator (:mod:`same.model.evaluate`, :mod:`same.model.lefttoright`), and topic recovery
  against planted topics (:mod:`same.model.topic_recovery`).

Imports: :mod:`same.data` and :mod:`same.io`; never :mod:`baselines` (a layer beside this
one), the experiments or the report.
"""
