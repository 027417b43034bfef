"""Known-item queries for the real-text corpora of bench/search-quality.sh: each query is
a short text that names exactly one document (a manual page's NAME description, an
application's summary), and judges that document relevant (grade 1) and nothing else."""

import json
import random


def write(out, docs, named, seed, n_queries):
    """Writes `docs` and up to `n_queries` queries drawn with `seed` to `out`
    (docs.jsonl, queries.jsonl); `named` maps a lower-cased name to its
    [(document id, name)]. A name becomes a query when it names one document, has three
    words or more and holds no `/` or `\\` (text the store refuses as path-like).
    Returns the number of queries written."""
    known = sorted(entries[0] for entries in named.values()
                   if len(entries) == 1 and len(entries[0][1].split()) >= 3
                   and "/" not in entries[0][1] and "\\" not in entries[0][1])
    chosen = random.Random(seed).sample(known, min(n_queries, len(known)))
    with open(f"{out}/docs.jsonl", "w") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    with open(f"{out}/queries.jsonl", "w") as f:
        for q, (doc, name) in enumerate(chosen):
            f.write(json.dumps({"id": q, "text": name, "qrels": {str(doc): 1}}) + "\n")
    return len(chosen)
