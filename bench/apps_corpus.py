"""A second real-text corpus for bench/search-quality.sh (BENCH_CORPUS=apps): the
application descriptions of Debian's AppStream metadata (DEP-11) that apt keeps on this
machine, as known-item search.

Documents: every component with an English (`C`) summary and description of 20 words or
more, the description's markup removed, words holding `/` or `\\` left out (the store
refuses text that looks like a local path, and both sides must index the same text).

Queries: the summaries (`Compare and merge your files`), of three words or more, that no
other component shares; each judges its own component relevant (grade 1) and nothing
else. A description rarely repeats its summary word for word, so a query is a short
paraphrase of its document, in English prose rather than manual-page jargon.

The figures depend on the metadata apt downloaded (`apt-get update`); the script prints
how many components it found, and refuses to run without any.
"""

import glob
import gzip
import re

import known_item
import yaml

SEED = 20261207
PATTERN = "/var/lib/apt/lists/*_dists_*_main_dep11_Components-*.yml.gz"
MIN_WORDS = 20


def components():
    """(summary, text) of every English component, in file order."""
    seen = set()
    for path in sorted(glob.glob(PATTERN)):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for doc in yaml.load_all(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
                if not isinstance(doc, dict) or "ID" not in doc:
                    continue
                summary = (doc.get("Summary") or {}).get("C")
                description = (doc.get("Description") or {}).get("C")
                if not summary or not description or doc["ID"] in seen:
                    continue
                seen.add(doc["ID"])
                text = re.sub(r"<[^>]+>", " ", description)
                words = [w for w in text.split() if "/" not in w and "\\" not in w]
                if len(words) >= MIN_WORDS:
                    yield " ".join(summary.split()), " ".join(words)


def gen(out, n_queries):
    docs, summaries = [], {}
    for summary, text in components():
        docs.append({"id": len(docs), "text": text})
        summaries.setdefault(summary.lower(), []).append((len(docs) - 1, summary))
    if not docs:
        raise SystemExit(f"no DEP-11 metadata at {PATTERN} (run apt-get update)")
    n = known_item.write(out, docs, summaries, SEED, n_queries)
    print(f"corpus: {len(docs)} Debian application descriptions (AppStream), "
          f"{n} known-item queries (their summaries)")
