"""A corpus spec (a workflow ``corpora:`` entry, ``same-lda split --corpus-spec``) checked
whole before any file is read: its name (not a built-in corpus's), source and keys, each
value's type, a text encoding, CountVectorizer's own parameter checks, a token pattern that can
count words (:mod:`same.data.textcorpus` reads it); and the one check that a path the spec names
is a regular file (:func:`regular_file`), never a FIFO that would block its reader.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from pathlib import Path

import numpy as np

from .docword import CorpusFormatError, CorpusNotFoundError
from .registry import check_own_name

__all__ = ["SOURCES", "corpus_files", "VECTORIZER_DEFAULTS", "TABLE_DEFAULTS", "TextCorpusError",
           "check_corpus_spec", "check_corpus_paths", "check_outside_corpus",
           "check_text_encoding", "regular_file", "folder_path", "at_line"]

#: The kinds of ``source`` a corpus spec may name, and the keys each takes beside
#: ``source``, ``vectorizer``, ``n_components`` and :data:`ORDER_KEYS`.
SOURCES = {"uci": {"docword", "vocab"}, "folder": {"path"},
           "csv": {"path", "column", "label", "max_line_bytes"},
           "jsonl": {"path", "column", "label", "max_line_bytes"}, "20newsgroups": set()}
#: A table's (csv, jsonl) reading limits, with their defaults: ``max_line_bytes``, the longest
#: line read (bytes, as UTF-8); pyarrow reads the table in blocks of that size, so a longer
#: line is refused naming the file, the line and this key to raise (up to 1 GiB).
TABLE_DEFAULTS = {"max_line_bytes": 16 * 2**20}
_MAX_LINE_BYTES_CAP = 2**30  # pyarrow's block size is an int32
#: Every source's keys of the stored order (:mod:`same.data.order`): ``shuffle`` (default true,
#: false for uci: the file's order) and ``shuffle_seed`` (default 0).
ORDER_KEYS = {"shuffle", "shuffle_seed"}

#: CountVectorizer settings (scikit-learn's names) and ours, with their defaults: lowercase
#: words of two or more letters (no digits), scikit-learn's English stop words, every word
#: kept; UTF-8 text, nothing stripped, an empty document refused.
VECTORIZER_DEFAULTS = {
    "lowercase": True,
    "token_pattern": r"(?u)\b[^\W\d_][^\W\d_]+\b",
    "stop_words": "english",
    "min_df": 1,          # CountVectorizer: documents (int) or fraction of them (float)
    "max_df": 1.0,        # CountVectorizer: documents (int) or fraction of them (float)
    "min_count": 1,       # ours: occurrences in the whole corpus (UCI: 11, "more than ten")
    "strip": [],          # any of headers, footers, quotes (fetch_20newsgroups' remove=), html
    "encoding": "utf-8",  # of every file; a byte outside it is an error
    "drop_empty": False,  # drop documents left with no word (else: an error naming one)
}
_STRIP = ("headers", "footers", "quotes", "html")
_CACHE_VERSION = 1  # bump when the cached arrays' meaning changes
_CACHE_REMEDY = "delete it: the next load rebuilds it"


class TextCorpusError(CorpusFormatError):
    """A corpus spec or its text cannot make a corpus (one line: the file and the setting)."""


# --------------------------------------------------------------------------- the spec


def _check_spec_paths(where: str, spec: dict) -> None:
    """The files or folder a spec names exist (a folder for ``folder``, else regular files)."""
    for key in ("path", "docword", "vocab"):
        if key not in spec:
            continue
        if spec["source"] == "folder":
            try:
                folder_path(spec[key], f"{where}.{key}")
            except CorpusNotFoundError:
                raise TextCorpusError(f"{where}.{key}: {spec[key]}: no such folder") from None
        else:
            try:
                regular_file(spec[key], f"{where}.{key}")
            except CorpusNotFoundError:
                raise TextCorpusError(f"{where}.{key}: {spec[key]}: no such file") from None


def corpus_files(spec: dict) -> list[str]:
    """The files a corpus spec's documents are read from, sorted: a ``folder`` corpus's every
    file in its category folders (``sklearn.datasets.load_files``' layout, links followed), a
    ``csv``/``jsonl`` corpus's ``path``, a ``uci`` corpus's ``docword`` and ``vocab``; none for
    20 Newsgroups (the archive is verified by its checksum).  The workflow's split rule takes
    them as its input, so that an edited, added or removed document reruns the split and all
    that reads it (Snakemake compares their times and their set).  A path that is not there
    lists nothing: the split's own check names it."""
    if spec.get("source") == "folder":
        folder = Path(spec.get("path", "")).expanduser()
        out = []
        try:
            for category in os.scandir(folder):
                if category.is_dir():
                    out += [e.path for e in os.scandir(category.path) if e.is_file()]
        except OSError:  # no such folder, or unreadable: the split names it
            return []
        return sorted(out)
    return sorted(str(Path(spec[key]).expanduser()) for key in ("path", "docword", "vocab")
                  if isinstance(spec.get(key), str) and Path(spec[key]).expanduser().is_file())


#: The one declaration of a corpus spec's keys and their types (the workflow config's schema
#: refers to it for its ``corpora:`` entries); :func:`check_corpus_spec` checks it strictly.
SPEC_SCHEMA = Path(__file__).with_name("corpus.schema.json")


def check_corpus_spec(name: str, spec: dict, *, check_paths: bool = False) -> dict:
    """The spec with its vectorizer's defaults filled in.

    Every value is checked here, before any file is read: each key's type, CountVectorizer's
    own parameter checks, a token pattern that compiles, has at most one group and yields no
    empty word; then the whole spec against :data:`SPEC_SCHEMA` (strictly, by
    :mod:`same.io.schema`), the schema the workflow's config checks its ``corpora:`` entries
    against, so ``same-lda split --corpus-spec`` accepts exactly what the workflow does; with
    ``check_paths`` (the workflow's config check, before any job) also that the named files or
    folders exist.

    Raises
    ------
    TextCorpusError
        One line naming ``corpora.<name>.<key>`` and what is wrong.
    """
    from same.io.schema import check_schema

    checked = _check_spec(name, spec, check_paths)
    try:
        check_schema(spec, SPEC_SCHEMA, f"corpora.{name}", sep=".")
    except ValueError as exc:
        raise TextCorpusError(str(exc)) from None
    return checked


def _check_spec(name: str, spec: dict, check_paths: bool) -> dict:
    """:func:`check_corpus_spec`'s checks of what the schema cannot say, with their own
    messages (run first: a value both refuse is named in these words)."""
    where = f"corpora.{name}"
    try:
        check_own_name(name, where, "corpus")
    except ValueError as exc:
        raise TextCorpusError(str(exc)) from None
    if not isinstance(spec, dict):
        raise TextCorpusError(f"{where}: must be a mapping with a source")
    source = spec.get("source")
    if not isinstance(source, str) or source not in SOURCES:
        raise TextCorpusError(f"{where}.source: must be one of {', '.join(SOURCES)}")
    # n_components and other_order are the workflow's (same.experiments.runs.order_labels)
    allowed = SOURCES[source] | {"source", "vectorizer", "n_components", "other_order"} \
        | ORDER_KEYS
    extra = sorted(map(str, set(spec) - allowed))
    if extra:
        raise TextCorpusError(f"{where}.{extra[0]}: not a key of a {source} corpus "
                              f"(keys: {', '.join(sorted(allowed))})")
    needed = {"uci": {"docword"}, "csv": {"path", "column"}, "jsonl": {"path", "column"},
              "folder": {"path"}}.get(source, set())
    missing = sorted(needed - set(spec))
    if missing:
        raise TextCorpusError(f"{where}.{missing[0]}: required for a {source} corpus")
    for key in ("path", "docword", "vocab", "column", "label"):
        if key in spec and not (isinstance(spec[key], str) and spec[key].strip()):
            raise TextCorpusError(f"{where}.{key}: must be a non-empty string")
    for key in ("column", "label"):  # a column's name is text (a path may hold any bytes)
        if key in spec and not _is_unicode(spec[key]):
            raise TextCorpusError(f"{where}.{key}: {spec[key]!r} is not Unicode text (a "
                                  "lone surrogate), so no column is named so")
    if "max_line_bytes" in spec:
        n = spec["max_line_bytes"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= _MAX_LINE_BYTES_CAP:
            raise TextCorpusError(f"{where}.max_line_bytes: must be an integer from 1 to "
                                  f"{_MAX_LINE_BYTES_CAP} (bytes of the longest line read)")
    _check_order(where, spec)
    if check_paths:
        _check_spec_paths(where, spec)
    vec = spec.get("vectorizer") or {}
    if not isinstance(vec, dict):
        raise TextCorpusError(f"{where}.vectorizer: must be a mapping of settings")
    if source == "uci":
        if vec:
            raise TextCorpusError(f"{where}.vectorizer: a uci corpus is counts already")
        return dict(spec)
    unknown = sorted(map(str, set(vec) - set(VECTORIZER_DEFAULTS)))
    if unknown:
        raise TextCorpusError(f"{where}.vectorizer.{unknown[0]}: unknown setting (settings: "
                              f"{', '.join(VECTORIZER_DEFAULTS)})")
    settings = VECTORIZER_DEFAULTS | vec
    _check_settings(f"{where}.vectorizer", settings)
    return {**spec, "vectorizer": settings}


def check_outside_corpus(spec, target, setting: str, where: str | None = None) -> None:
    """Refuse an output path ``target`` (a split, the cache folder) inside a folder corpus's
    folder or equal to it: load_files reads every file under it as a document, so the next
    run would read the output as one (or fail on a folder where a document belongs).

    Raises
    ------
    TextCorpusError
        ``<setting> <target>: inside the corpus folder <path> (<where>.path), whose every
        file is read as a document; give a path outside it``.
    """
    folder = spec.get("path") if isinstance(spec, dict) and spec.get("source") == "folder" \
        else None
    if not (isinstance(folder, str) and folder):
        return
    if Path(target).expanduser().resolve().is_relative_to(Path(folder).expanduser().resolve()):
        named = f" ({where}.path)" if where else ""
        raise TextCorpusError(f"{setting} {target}: inside the corpus folder {folder}{named}, "
                              "whose every file is read as a document; give a path outside it")


def check_corpus_paths(config: dict) -> None:
    """The workflow's check before any job that each ``corpora:`` entry's files exist (paths
    relative to the folder snakemake runs in); :func:`same.experiments.config.check_config` checks the
    rest of each entry.

    Raises
    ------
    ValueError
        ``config corpora.<name>.<key>: <path>: no such file`` (one line).
    """
    for name, spec in (config.get("corpora") or {}).items():
        try:
            check_corpus_spec(name, spec, check_paths=True)
        except ValueError as exc:
            raise ValueError(f"config {exc}") from None


def at_line(path, line: int) -> str:
    """Where a line of a corpus file is, as every message names it: ``<path>: line <n>``,
    the path as the spec gives it (``~`` expanded) and the line as an editor counts it, from
    1 (a csv file's header is line 1; a row written over several lines is at its first)."""
    return f"{path}: line {line}"


def regular_file(path, setting: str, hint: str | None = None) -> Path:
    """``path`` (``~`` expanded), once it is known to be a regular file (or a link to one),
    checked before it is opened: a FIFO or a device would block or never end its reader.
    ``hint`` ends the message (default: ``<setting> names a file``).

    Raises
    ------
    CorpusNotFoundError
        ``<path>: no such file (<setting>)``.
    TextCorpusError
        ``<path>: is a FIFO (named pipe), not a regular file; <setting> names a file``.
    """
    return _of_kind(path, setting, "file", stat.S_ISREG, "a regular file",
                    hint or setting + " names a file")


def _of_kind(path, setting: str, noun: str, is_kind, kind: str, hint: str) -> Path:
    """``path`` (``~`` expanded) once its mode passes ``is_kind``; else the one line of
    :func:`regular_file` or :func:`folder_path`."""
    path = Path(path).expanduser()
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):  # missing, a dangling link, a name the system refuses
        raise CorpusNotFoundError(f"{path}: no such {noun} ({setting})") from None
    if not is_kind(mode):
        raise TextCorpusError(f"{path}: is {_kind_of(mode)}, not {kind}; {hint}")
    return path


def folder_path(path, setting: str) -> Path:
    """``path`` (``~`` expanded), once it is known to be a folder (or a link to one).

    Raises
    ------
    CorpusNotFoundError
        ``<path>: no such folder (<setting>)``.
    TextCorpusError
        ``<path>: is a file, not a folder; <setting> names a folder of category folders``
        (a FIFO, a socket, a device: named as such).
    """
    return _of_kind(path, setting, "folder", stat.S_ISDIR, "a folder",
                    f"{setting} names a folder of category folders, one file per document")


def _kind_of(mode: int) -> str:
    """What a file system entry is, for messages."""
    for test, kind in ((stat.S_ISREG, "a file"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a file"


def _is_unicode(text: str) -> bool:
    """Whether ``text`` is Unicode text (no lone surrogate: it can be written as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text_encoding(key: str, encoding) -> str:
    """``encoding``'s codec name, once it is known to be a text encoding that works: the one
    check of a corpus's ``vectorizer.encoding`` (the spec check, ``same-lda split`` and the
    workflow's config check all call :func:`check_corpus_spec`).  A bytes-to-bytes codec
    (``base64``, ``hex``, ``bz2``, ``quopri``, ...) or one that refuses every use
    (``undefined``) is refused here, not at the job that reads the text.

    Raises
    ------
    TextCorpusError
        ``<key>: 'base64' is not a text encoding (it turns bytes into bytes) ...``.
    """
    if not isinstance(encoding, str):
        raise TextCorpusError(f"{key}: must be the name of a text encoding")
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError, ValueError):  # ValueError: a NUL or surrogate in the name
        raise TextCorpusError(f"{key}: unknown text encoding {encoding!r}") from None
    if not getattr(info, "_is_text_encoding", True):
        raise TextCorpusError(f"{key}: {encoding!r} is not a text encoding (a bytes-to-bytes "
                              "or text-to-text codec); name one that decodes bytes to text, "
                              "such as utf-8 or latin-1")
    try:
        info.decode(b"")
        info.encode("")
    except (LookupError, ValueError) as exc:  # codec 'undefined' raises on every use
        raise TextCorpusError(f"{key}: {encoding!r} cannot decode text ({exc})") from None
    return info.name


def _check_order(where: str, spec: dict) -> None:
    """``shuffle`` a boolean; ``shuffle_seed`` a non-negative integer, only with a shuffle."""
    if "shuffle" in spec and not isinstance(spec["shuffle"], bool):
        raise TextCorpusError(f"{where}.shuffle: must be true or false")
    seed = spec.get("shuffle_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise TextCorpusError(f"{where}.shuffle_seed: must be a non-negative integer below "
                              "2**32")
    if "shuffle_seed" in spec and not spec.get("shuffle", spec["source"] != "uci"):
        raise TextCorpusError(f"{where}.shuffle_seed: applies only with shuffle: true"
                              + ("" if "shuffle" in spec else " (a uci corpus keeps file "
                                 "order by default)"))


def _check_settings(where: str, s: dict) -> None:
    """Each vectorizer setting's type and value (see :func:`check_corpus_spec`)."""
    for key in ("lowercase", "drop_empty"):
        if not isinstance(s[key], bool):
            raise TextCorpusError(f"{where}.{key}: must be true or false")
    if not isinstance(s["strip"], list) or not all(isinstance(p, str) for p in s["strip"]):
        raise TextCorpusError(f"{where}.strip: must be a list of {', '.join(_STRIP)}")
    bad = [p for p in s["strip"] if p not in _STRIP]
    if bad:
        raise TextCorpusError(f"{where}.strip: {bad[0]!r} is not one of {', '.join(_STRIP)}")
    check_text_encoding(f"{where}.encoding", s["encoding"])
    if isinstance(s["min_count"], bool) or not isinstance(s["min_count"], int) \
            or s["min_count"] < 1:
        raise TextCorpusError(f"{where}.min_count: must be an integer >= 1")
    for key in ("min_df", "max_df"):
        if isinstance(s[key], bool):
            raise TextCorpusError(f"{where}.{key}: must be a number, not {s[key]}")
    pattern = s["token_pattern"]
    if not isinstance(pattern, str):
        raise TextCorpusError(f"{where}.token_pattern: must be a regular expression")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise TextCorpusError(f"{where}.token_pattern: not a regular expression ({exc})") \
            from None
    if compiled.groups > 1:
        raise TextCorpusError(f"{where}.token_pattern: has {compiled.groups} groups; "
                              "CountVectorizer takes at most one (the word)")
    try:
        cv = _vectorizer(s)
        cv._validate_params()
    except ValueError as exc:  # sklearn's InvalidParameterError: names the parameter
        raise TextCorpusError(f"{where}: {str(exc).splitlines()[0]}") from None
    # the words CountVectorizer's own preprocessor and tokenizer make of a sample of text:
    # a pattern matching nothing (``a*``), an empty group (``(x*)[a-z]+``) or a lookahead
    # alone (``(?=a)``) yields empty words; a text without such a sample's characters is
    # caught once vectorized (same.data.textcorpus.vectorize)
    if "" in cv.build_tokenizer()(cv.build_preprocessor()(_SAMPLE_TEXT)):
        raise TextCorpusError(empty_word_message(where, pattern))
    low, high = s["min_df"], s["max_df"]
    if type(low) is type(high) and low > high:
        raise TextCorpusError(f"{where}.min_df: {low} is above max_df ({high}): no word "
                              "could be kept")


#: Text a token pattern is tried on before any file is read: letters of either case and of
#: several scripts, digits, punctuation, spaces.
_SAMPLE_TEXT = ("The quick brown fox jumps over the lazy dog. PACK MY BOX WITH FIVE DOZEN "
                "LIQUOR JUGS! 0123456789 _-'\"?#$%&()*+,/:;<=>@[\\]^`{|}~ café naïve "
                "Ωμέγα слово 日本語 \t\n")


def empty_word_message(where: str, pattern: str) -> str:
    """The one line refusing a token pattern that yields an empty word (``where``: the
    vectorizer's settings, ``corpora.<name>.vectorizer``)."""
    return (f"{where}.token_pattern: {pattern!r} yields empty words (a match or its group "
            "of no characters), so it would count an empty word; give a pattern whose every "
            "match holds a character")


def _vectorizer(settings: dict):
    """scikit-learn's CountVectorizer with ``settings``' parameters (counts as int64)."""
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(lowercase=settings["lowercase"],
                           token_pattern=settings["token_pattern"],
                           stop_words=settings["stop_words"], min_df=settings["min_df"],
                           max_df=settings["max_df"], dtype=np.int64)
