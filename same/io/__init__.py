"""Layer 0, files: the one write discipline and strict reading of a user's text.

- :mod:`same.io.outputs` (with :mod:`same.io.outputkinds`): every output is written into what
  the command created or recognisably its own earlier output, through a temporary and one
  rename, under the user's umask; :mod:`same.io.atomic` is its old entry point;
- :mod:`same.io.textinput`: JSON and YAML read strictly (a key given twice is an error);
- :mod:`same.io.schema`: a spec or config checked against its JSON schema strictly (integers
  are ints, numbers finite), in one line naming the key;
- :mod:`same.io.cache`: same-lda's cache folder (downloads, parsed corpora).

Imports: the standard library, NumPy, PyYAML and jsonschema only; no other layer of ``same``.
"""
