"""A user's spec or config checked against a JSON schema, strictly, in one line naming the key.

One mechanism for every declarative check of user-written settings: the workflow's config
(``config/config.schema.yaml``, :func:`same.experiments.config.check_config`) and the spec of
``same-lda synthesize`` (``same/data/synthetic.schema.json``, which the config's schema
refers to for its ``synthetic:`` entries) and the corpus spec of ``same-lda split
--corpus-spec`` (``same/data/corpus.schema.json``, likewise for its ``corpora:``
entries).  jsonschema's own types are too loose for what these values feed: its ``integer``
accepts 8.0 (a folder ``K8.0``), and its ``number`` accepts NaN and infinity (JSON's ``NaN``,
YAML's ``.nan``), which pass ``minimum`` (NaN compares false) and reach the numbers drawn.
Here an integer is an ``int`` and a number a finite ``int`` or ``float``, never a ``bool``; a
``$ref`` to another schema file is read relative to the schema's own file.
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from pathlib import Path

__all__ = ["check_schema", "load_schema", "schema_error", "error_key", "error_message",
           "is_number"]


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    """A JSON number as the schemas mean it: an int or a finite float, not a boolean."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and (not isinstance(value, float) or math.isfinite(value)))


def load_schema(path: str | os.PathLike) -> dict:
    """A schema file: JSON, or YAML for ``.yaml`` / ``.yml``."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".yaml", ".yml"):
        import yaml

        return yaml.safe_load(text)
    return json.loads(text)


@lru_cache(maxsize=8)
def _validator(path: Path):
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    import jsonschema
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    base = jsonschema.Draft202012Validator
    checker = base.TYPE_CHECKER.redefine_many({"integer": lambda _c, v: _is_int(v),
                                               "number": lambda _c, v: is_number(v)})
    strict = jsonschema.validators.extend(base, type_checker=checker)

    def retrieve(uri: str):
        # without its "$schema", a referenced file is checked by this strict validator: with
        # it, jsonschema would switch to that dialect's own (loose) validator
        contents = load_schema(url2pathname(urlparse(uri).path))
        contents.pop("$schema", None)
        return Resource.from_contents(contents, default_specification=DRAFT202012)

    schema = {**load_schema(path), "$id": path.as_uri()}
    return strict(schema, registry=Registry(retrieve=retrieve))


def schema_error(instance, schema: str | os.PathLike):
    """The most relevant :class:`jsonschema.ValidationError` of ``instance`` against the
    schema file ``schema`` (jsonschema's ``best_match``), or None when it is valid."""
    import jsonschema

    validator = _validator(Path(schema).resolve())
    return jsonschema.exceptions.best_match(validator.iter_errors(instance))


def error_key(error) -> str:
    """The dotted key path of a ValidationError: ``same.passes``, ``datasets[0]`` ('' at the
    top)."""
    key = ""
    for part in error.absolute_path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key


def error_message(error) -> str:
    """A ValidationError's message on one line; a NaN or infinity refused by the strict
    ``number`` is called what it is (``nan is not a finite number``)."""
    value = error.instance
    if (error.validator == "type" and isinstance(value, float) and not math.isfinite(value)):
        return f"{value!r} is not a finite number"
    return " ".join(error.message.split())


def check_schema(instance, schema: str | os.PathLike, where: str, sep: str = " ") -> None:
    """Refuse ``instance`` unless it is valid against the schema file ``schema``.

    Raises
    ------
    ValueError
        One line: ``<where><sep><key>: <message>``, e.g. ``config same.passes: 'five' is not
        of type 'integer'`` (``<where>: <message>`` for the whole instance).
    """
    error = schema_error(instance, schema)
    if error is not None:
        key = error_key(error)
        raise ValueError(f"{where}{sep + key if key else ''}: {error_message(error)}")
