"""The shop's search engine: a SQLite FTS5 full-text index ranked by BM25.

WebShop searches a pyserini (Lucene, Java) BM25 index of each product's title, description,
bullet points and option values, returns the top 50 and shows them 10 per page. FTS5 ships in
Python's own ``sqlite3``, so the same ranking needs no JVM and no prebuilt index: the index is
built in memory when a catalog is loaded (about 1.3 s per 100k products here). Lucene's analyzer
is mirrored where it matters: Porter stemming, its English stop words, any-term (OR) queries.
FTS5's BM25 constants are fixed at k1 = 1.2, b = 0.75 (pyserini's defaults are 0.9 and 0.4), so
rankings can differ from WebShop's in ties and near-ties.

Any query string is safe. The query is split into word tokens, and each token is passed to FTS5
as a quoted string literal (word characters only, so it cannot close the quote), joined by OR:
no FTS5 syntax, SQL or quoting in the user's text reaches the parser. The connection is switched
to ``query_only`` after the build, so nothing can change the index.
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading

from rl4vlm_gym.envs.webshop.catalog import Catalog, Product

__all__ = ["MAX_QUERY_TERMS", "RESULTS", "SearchIndex", "query_terms"]

RESULTS = 50  # WebShop's SEARCH_RETURN_N
MAX_QUERY_TERMS = 32  # a 10 kB query would otherwise OR thousands of terms
# Lucene's default English stop words (StandardAnalyzer / pyserini's default analyzer).
_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split()
)
_TOKEN = re.compile(r"\w+")


def query_terms(query: str) -> list[str]:
    """The distinct, lower-cased, non-stop-word tokens of ``query`` (at most MAX_QUERY_TERMS)."""
    terms = [t for t in _TOKEN.findall(query.lower()) if t not in _STOP_WORDS]
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def _contents(product: Product) -> str:
    options = " ".join(v for values in product.options.values() for v in values)
    return " ".join((product.title, product.description, " ".join(product.bullet_points), options))


class SearchIndex:
    """A BM25 index over a catalog; ``search`` is thread-safe (the shop's server thread uses it)."""

    def __init__(self, catalog: Catalog) -> None:
        self._asins = [p.asin for p in catalog.products]
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE products USING fts5(contents, tokenize='porter unicode61')")
        self._db.executemany(
            "INSERT INTO products(rowid, contents) VALUES (?, ?)",
            ((i, _contents(p)) for i, p in enumerate(catalog.products)),
        )
        self._db.commit()
        self._db.execute("PRAGMA query_only = ON")
        self._lock = threading.Lock()
        self.search = functools.lru_cache(maxsize=1024)(self._search)

    def _search(self, query: str) -> tuple[str, ...]:
        """The ASINs of the top RESULTS products for ``query``, best first (ties: catalog order)."""
        terms = query_terms(query)
        if not terms:
            return ()
        match = " OR ".join(f'"{t}"' for t in terms)
        with self._lock:
            rows = self._db.execute(
                "SELECT rowid FROM products WHERE products MATCH ? ORDER BY bm25(products), rowid LIMIT ?",
                (match, RESULTS),
            ).fetchall()
        return tuple(self._asins[r[0]] for r in rows)

    def close(self) -> None:
        with self._lock:
            self._db.close()
