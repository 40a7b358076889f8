"""Inference with a fitted topic-word matrix through the shared evaluator (README "The workflow": evaluation).

:class:`FoldInMixin` gives an estimator with ``topic_word_``, ``doc_topic_prior``
and ``backend`` the scikit-learn ``transform`` / ``score`` methods and the
document-completion ``heldout_score``; all go through :mod:`same.model.evaluate`,
the one evaluator every method is scored with.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from same.data.count_matrix import check_counts

from .backend import get_xp, to_backend, to_numpy

__all__ = ["FoldInMixin"]


class FoldInMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """transform (θ̄ by fold-in), score (BIDMach-style ll) and heldout_score (document
    completion), in nats/token, higher is better.

    A scikit-learn transformer: ``set_output(transform="pandas")`` is honoured by transform
    and fit_transform (scikit-learn wraps the ``transform`` a subclass of its
    ``_SetOutputMixin`` defines itself, so this class, which defines it, is one), with the
    columns ``get_feature_names_out`` names (``samelda0``, ``samelda1``, ..., as
    LatentDirichletAllocation's ``latentdirichletallocation0``, ...)."""

    def _phi(self):
        check_is_fitted(self)
        return to_backend(self.topic_word_, get_xp(self.backend), dtype=np.float64)

    def transform(self, X) -> np.ndarray:
        """θ̄ of documents X with φ fixed (the shared evaluator's fold-in).

        Returns
        -------
        ndarray of shape (n_docs, n_topics), float64, rows sum to 1, on the host (a
        DataFrame under ``set_output(transform="pandas")``).

        Raises
        ------
        ValueError
            X fails the input gate (:func:`same.data.count_matrix.validate_counts`: malformed sparse
            structure, an index out of range, NaN/inf, negative or complex counts, ...) or
            has another vocabulary size than the fitted model, one line naming X.
        """
        from .evaluate import fold_in

        check_is_fitted(self)
        X = check_counts(self, X, reset=False, require_tokens=False)
        return to_numpy(fold_in(self._phi(), X, float(self.doc_topic_prior)))

    def score(self, X, y=None) -> float:
        """BIDMach-style log-likelihood of X in nats/token (θ fitted on X; higher is better).

        Raises
        ------
        ValueError
            As :meth:`transform`, or X holds no tokens.
        """
        from .evaluate import bidmach_loglik

        check_is_fitted(self)
        X = check_counts(self, X, reset=False)
        return bidmach_loglik(self._phi(), float(self.doc_topic_prior), X)

    def heldout_score(self, X_observed, X_heldout) -> float:
        """Document-completion held-out log-likelihood in nats/token (:func:`same.model.evaluate.heldout_loglik`).

        θ is folded in on ``X_observed`` with φ fixed, then ``X_heldout`` is scored.

        Raises
        ------
        ValueError
            Either matrix fails the input gate or has another vocabulary size than the fitted
            model (one line naming X_observed or X_heldout), or X_heldout holds no tokens.
        """
        from .evaluate import heldout_loglik

        check_is_fitted(self)
        observed = check_counts(self, X_observed, reset=False, name="X_observed",
                                require_tokens=False)
        heldout = check_counts(self, X_heldout, reset=False, name="X_heldout")
        return heldout_loglik(self._phi(), float(self.doc_topic_prior), observed, heldout)
