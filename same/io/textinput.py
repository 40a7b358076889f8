"""A user's JSON and YAML, read strictly: a key given twice is an error, never "last one wins".

Python's ``json`` and PyYAML keep the last of two equal keys without a word, so a run spec
``{"n_components": 4, ..., "n_components": 7}`` trains K = 7 and a config file repeating a
key takes the later value.  Every reader of user-written JSON or YAML goes through this
module: run specs (:meth:`same.experiments.spec.RunSpec.from_json`), ``same-lda synthesize --spec``,
``tuning.json`` (:func:`same.experiments.tuning.load_tuning`) and the workflow's config files
(:func:`same.experiments.config.check_config_files`).  It also names, in one short line, an integer too
long to show (:func:`int_text`) and input nested beyond what the parsers can recurse into.
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

__all__ = ["DuplicateKeyError", "loads_json", "load_config_file", "int_text", "gib_text"]

#: Integers with more digits are refused while parsing (Python's own limit for converting
#: text to int is 4300 digits; its message names ``sys.set_int_max_str_digits``).
MAX_INT_DIGITS = 4000


class DuplicateKeyError(ValueError):
    """A JSON object or YAML mapping gives one key twice (the message names the key)."""


def int_text(value: int) -> str:
    """An integer as text short enough for one line: ``1000...0 (401 digits)`` above 20
    digits, the sign kept; never fails (Python refuses ``str()`` above 4300 digits)."""
    value = int(value)
    sign = "-" if value < 0 else ""
    if abs(value).bit_length() > 3 * MAX_INT_DIGITS:  # over ~3600 digits: no str() at all
        return f"{sign}an integer of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    digits = str(abs(value))
    if len(digits) <= 20:
        return sign + digits
    return f"{sign}{digits[:4]}...{digits[-1]} ({len(digits)} digits)"


def gib_text(n_bytes: int) -> str:
    """``n_bytes`` in GiB to one decimal; a byte count of any size (``n_components: 10**400``)
    gives text (whole GiB, rounded down), never an OverflowError converting to float."""
    n_bytes = int(n_bytes)
    if n_bytes.bit_length() < 80:
        return f"{n_bytes / 2**30:.1f}"
    return int_text(n_bytes // 2**30)


def _unique_pairs(source: str, pairs: list) -> dict:
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(f"{source}: key {key!r} is given twice; give each key once")
        seen[key] = value
    return seen


def _parse_int(source: str, text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"{source}: the integer {text[:4]}... ({len(text.lstrip('-'))} "
                         "digits) is too large")
    return int(text)


def read_utf8(path, what: str) -> str:
    """The text of a user's file ``path``, UTF-8; ``what`` names it in messages ("spec
    file", "Markdown file").

    Raises
    ------
    OSError
        ``<what> <path>: No such file or directory`` (the reason only, one line).
    ValueError
        ``<what> <path>: not UTF-8 text (invalid start byte at byte 0)``.
    """
    try:
        return Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise OSError(f"{what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {path}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None


def loads_json(text: str, source: str):
    """``json.loads(text)``, refusing a key given twice in any object.

    Parameters
    ----------
    text : str
        The JSON document.
    source : str
        What the text is (``--spec``, a file's path), for the messages.

    Raises
    ------
    json.JSONDecodeError
        Not JSON (the caller words it; it is a ValueError).
    DuplicateKeyError
        ``<source>: key 'n_components' is given twice; give each key once``.
    ValueError
        An integer of more than :data:`MAX_INT_DIGITS` digits, or nesting deeper than the
        parser can recurse: one line naming ``source``.
    """
    try:
        return json.loads(text, object_pairs_hook=partial(_unique_pairs, source),
                          parse_int=partial(_parse_int, source))
    except RecursionError:
        raise ValueError(f"{source}: nested too deeply to read") from None


def _yaml_loader():
    """A PyYAML SafeLoader whose mappings refuse a key given twice (merge keys ``<<``, which
    are meant to be overridden, excepted)."""
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                lines = {}
                for key_node, _ in node.value:
                    if key_node.tag == "tag:yaml.org,2002:merge":
                        continue
                    key = self.construct_object(key_node, deep=True)
                    line = key_node.start_mark.line + 1
                    try:
                        first = lines.get(key)
                    except TypeError:  # an unhashable key: SafeLoader's own error follows
                        continue
                    if first is not None:
                        at = f"line {line}" if first == line else f"lines {first} and {line}"
                        raise DuplicateKeyError(f"{self.name}: key {key!r} is given twice "
                                                f"({at}); give each key once")
                    lines[key] = line
            return super().construct_mapping(node, deep=deep)

    return UniqueKeyLoader


def load_config_file(path: str | os.PathLike):
    """A config file's content, read as Snakemake reads it (JSON first, else YAML), with
    every key given once.

    Raises
    ------
    DuplicateKeyError
        ``<path>: key 'seeds' is given twice (lines 3 and 9); give each key once`` (JSON:
        without lines).
    ValueError
        Nested too deeply to read.
    OSError
        The file cannot be read.
    yaml.YAMLError
        Neither JSON nor YAML (Snakemake refuses such a file before this is called).
    """
    text = Path(path).read_text(encoding="utf-8")
    try:
        return loads_json(text, str(path))
    except json.JSONDecodeError:
        pass  # not JSON: YAML, as Snakemake reads it
    loader = _yaml_loader()(text)
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply to read") from None
    finally:
        loader.dispose()

