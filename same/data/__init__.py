"""Layer 1, data: count matrices, corpora and held-out splits, each checked before use.

- the input gate of every count matrix (:mod:`same.data.count_matrix`, over the sparse
  structure check of :mod:`same.data.csr_structure`) and our sealed ``.npz`` artefacts
  (:mod:`same.data.artefact`);
- corpora: the UCI registry (:mod:`same.data.registry`), where files are found and their
  download (:mod:`same.data.download`), parsing (:mod:`same.data.docword`) and the loader
  (:mod:`same.data.corpus`); corpora named by their files, raw text and 20 Newsgroups
  (:mod:`same.data.textcorpus`, :mod:`same.data.corpusspec`, :mod:`same.data.newsgroups`);
  random corpora of a given shape (:mod:`same.data.synthetic`) and LDA corpora with planted
  topics (:mod:`same.data.planted`);
- the held-out split (:mod:`same.data.split`) and the walk every method shares: the paper's
  minibatches and the checkpoint series (:mod:`same.data.protocol`).

Imports: :mod:`same.io` only (no model, experiment or report code).
"""
