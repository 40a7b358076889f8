"""The UCI "Bag of Words" collection (Newman 2008): each corpus's official shape, files,
checksums and download sources (:data:`REGISTRY`), the one source of these facts for the
loader (:mod:`same.data.corpus`), the download (:mod:`same.data.download`), synthetic corpora,
benchmarks and reports."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["REGISTRY", "CorpusInfo", "UCI_ARCHIVE_URL", "UCI_BASE_URL", "check_own_name",
           "NAME_PATTERN"]

UCI_BASE_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"
#: UCI's static archive of the whole collection (dataset 164, "Bag of Words"; about 2 GB with
#: PubMed), the second source of every file: members are extracted after the download.
UCI_ARCHIVE_URL = "https://archive.ics.uci.edu/static/public/164/bag+of+words.zip"


@dataclass(frozen=True)
class CorpusInfo:
    """Registry entry for one UCI bag-of-words corpus (official figures).

    ``*_sha256`` is the SHA-256 of the file as distributed by UCI, or None
    where no verified hash is known (then pooch downloads without a check and
    the parsed header is still validated against ``n_docs, n_words, nnz``).
    """

    name: str
    n_docs: int
    n_words: int
    nnz: int
    n_tokens: int
    docword_bytes: int | None
    docword_sha256: str | None
    vocab_bytes: int | None
    vocab_sha256: str | None

    @property
    def docword_file(self) -> str:
        return f"docword.{self.name}.txt.gz"

    @property
    def vocab_file(self) -> str:
        return f"vocab.{self.name}.txt"

    def url(self, filename: str) -> str:
        """Download URL: ``$SAME_UCI_URL`` (a mirror; tests use a loopback server) or UCI's."""
        base = os.environ.get("SAME_UCI_URL") or UCI_BASE_URL
        return base.rstrip("/") + "/" + filename

    def sources(self, filename: str) -> list[tuple[str, str | None]]:
        """Where ``filename`` is downloaded from, in the order tried: (URL, None) for the file
        itself, then (archive URL, member) for UCI's archive of the collection
        (``$SAME_UCI_ARCHIVE_URL`` overrides it)."""
        archive = os.environ.get("SAME_UCI_ARCHIVE_URL") or UCI_ARCHIVE_URL
        return [(self.url(filename), None), (archive, filename)]


#: The UCI collection; D, W, NNZ from the files' headers (UCI page, ../shared/datasets/uci/
#: README.md); tokens (Σ counts) of KOS and NIPS counted from the files, of NYTimes and PubMed
#: as counted in the literature (UCI gives ~100M, ~730M), of Enron UCI's ~6.4M (not verified
#: here). The one source of these shapes: synthetic corpora, benchmarks and reports read them.
REGISTRY: dict[str, CorpusInfo] = {
    info.name: info
    for info in [
        CorpusInfo("kos", 3430, 6906, 353160, 467714, 1053803,
                   "6439c39f2fccb4876563e4b4c9628974d8ccbeada43d661292a5024911389e30",
                   55467, "623b7b969793b32c4ea7d1ae8cd2e9ed99038bf51628f33f52349f9485aeab8e"),
        CorpusInfo("nips", 1500, 12419, 746316, 1932365, 2288169,
                   "d45f9f7ceeadf118117e14346f018273007b765593a4dbe02915d37a1faa58b7",
                   100807, "be3f6337e3406ddc24837118e203da57c4c898ad5f6c9280908cd08a2609cf91"),
        CorpusInfo("enron", 39861, 28102, 3710420, 6_400_000, None, None,
                   236180, "16ebfa3155516f5129aaedc978297dbe741f628dd7663eaf026c657c09bab011"),
        CorpusInfo("nytimes", 300000, 102660, 69679427, 99542125, None, None,
                   1345665, "e92598bca61f4fc4eb3f954d813d21552ef058a0bfe129eb52cc3ae8214858ef"),
        CorpusInfo("pubmed", 8200000, 141043, 483450157, 737869083, None, None,
                   1460677, "ca84c971366b1599227d645b4e8128b20826f45ed1af388372252668e1462f13"),
    ]
}


#: A dataset's name: it names folders (``results/<name>/``, the cache), so never a path.
NAME_PATTERN = re.compile(r"[a-z0-9]+")


def check_own_name(name: str, where: str, what: str) -> None:
    """Refuse a name that is not lowercase letters and digits (:data:`NAME_PATTERN`: an empty
    name, ``a/b`` or ``Toy Name`` would name folders wrongly, and an empty one was sealed into
    a synthetic corpus), or the name of a built-in UCI corpus (:data:`REGISTRY`) for a dataset
    of another kind (a synthetic corpus, a corpus named by its files): its outputs would go
    where the real corpus's do (``results/<name>/``) and its split would be labelled as that
    corpus.  The one rule ``same-lda synthesize``, ``same-lda split --corpus-spec`` and the
    workflow's config check apply.

    Raises
    ------
    ValueError
        ``<where>: a <what> name is lowercase letters and digits only (it names folders:
        results/<name>/, the cache)``; ``<where>: 'kos' is the name of a UCI corpus (kos,
        ...); give the <what> another name``.
    """
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise ValueError(f"{where}: a {what} name is lowercase letters and digits only (it "
                         "names folders: results/<name>/, the cache)")
    if name in REGISTRY:
        raise ValueError(f"{where}: {name!r} is the name of a UCI corpus "
                         f"({', '.join(REGISTRY)}); give the {what} another name")


def _registry_entry(name: str) -> CorpusInfo:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown corpus {name!r}; known: {', '.join(REGISTRY)}") from None
