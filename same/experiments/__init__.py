"""Layer 3, experiments: runs as data, the one runner of every method, and the command line.

- a run (:mod:`same.experiments.spec`), the runs a workflow config implies
  (:mod:`same.experiments.plan`, :mod:`same.experiments.runs`) and the config's checks
  (:mod:`same.experiments.config`); every method behind one protocol
  (:mod:`same.experiments.methods`: SAME and the :mod:`baselines`);
- each method's step sizes chosen on validation documents (:mod:`same.experiments.tuning`);
- the runner and its output folder (:mod:`same.experiments.runner`,
  :mod:`same.experiments.rundir`), provenance and code fingerprints
  (:mod:`same.experiments.provenance`), ``same-lda check``
  (:mod:`same.experiments.verify_artefacts`), claim C9's seconds per pass against corpus size
  (:mod:`same.experiments.size_cost`) and ``same-lda`` itself (:mod:`same.experiments.cli`).

Imports: :mod:`same.model`, :mod:`baselines`, :mod:`same.data`, :mod:`same.io`; never the
report.
"""
