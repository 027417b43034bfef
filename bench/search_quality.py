"""Helper of bench/search-quality.sh: a synthetic corpus with graded judgments, the
embedded store filled with it, and nDCG@10 / P@10 / latency of `reward-memory recall`
(whole process) beside bm25s (in process) on the same corpus and queries.

Corpus: a 20,000-word vocabulary of syllable words drawn with Zipf-like frequencies
(exponent 1.07); 200 topics of 40 topic words each (taken from the middle of the
frequency ranks). A document has a primary and a secondary topic and 20-120 words, each
from its primary topic with probability 0.25, from its secondary with 0.10, else from the
global Zipf distribution. A query has a topic and 20 distinct terms: 14 of its topic's
words and 6 global words. Judgments: grade 2 for documents of that primary topic, grade 1
for those of that secondary topic, else 0 -- fixed by the generator, not by either ranker.

`gen-man` and `gen-apps` make real-text corpora instead (bench/man_corpus.py: this
machine's manual pages; bench/apps_corpus.py: Debian's application descriptions; both
known-item search).

bm25s is run twice, with the BM25 of the store (its `lucene` variant, k1 = 1.5, b = 0.75,
its defaults):
* with its defaults otherwise: `bm25s.tokenize` lower-cases, keeps words of two or more
  word characters (`\\w\\w+`) and drops its English stop words (Lucene's 33), no stemming;
* with the store's tokenization as near as bm25s allows it: no stop words, and under the
  store's `porter` tokenizer PyStemmer's original Porter algorithm (FTS5's `porter` is the
  same algorithm, read slightly differently: `y` is a vowel after any consonant). The two
  tokenizations still differ in one respect: FTS5 keeps one-character tokens and splits
  at `_`, bm25s drops them and keeps `snake_case` whole.

Only what the store holds is compared: bm25s indexes the documents the ingest stored (a
document the store refuses, e.g. for text that looks like a credential, is in neither),
and a query counts when recall answered it and one of its relevant documents is stored.

Usage: search_quality.py gen DIR DOCS QUERIES | gen-man DIR QUERIES | gen-apps DIR QUERIES
       | fill STORE DIR
       | events DIR TEMPLATE OUT
       | jsonl DIR TEMPLATE FILE
       | eval DIR STORE BIN ROUTE... (see the shell script).
"""

import hashlib
import json
import math
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time

SEED = 20261203
VOCAB = 20_000
TOPICS = 200
TOPIC_WORDS = 40
QUERY_TERMS = 20
K = 10
SUMMARY_CHARS = 500  # LoopX's bound on a record's content_summary


def vocabulary(rng):
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "vo", "pe", "du", "ga", "zo",
                 "bi", "fe", "hu", "ja", "wy", "qo"]
    words = set()
    while len(words) < VOCAB:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))))
    words = sorted(words)
    rng.shuffle(words)
    return words


def gen(out, n_docs, n_queries):
    rng = random.Random(SEED)
    vocab = vocabulary(rng)
    weights = [1.0 / (r + 1) ** 1.07 for r in range(VOCAB)]
    cum = []
    total = 0.0
    for w in weights:
        total += w
        cum.append(total)
    mid = vocab[500:500 + TOPICS * TOPIC_WORDS]
    topics = [mid[t * TOPIC_WORDS:(t + 1) * TOPIC_WORDS] for t in range(TOPICS)]

    def zipf_word():
        return rng.choices(vocab, cum_weights=cum)[0]

    docs = []
    for i in range(n_docs):
        primary = rng.randrange(TOPICS)
        secondary = (primary + 1 + rng.randrange(TOPICS - 1)) % TOPICS
        words = []
        for _ in range(rng.randint(20, 120)):
            u = rng.random()
            if u < 0.25:
                words.append(rng.choice(topics[primary]))
            elif u < 0.35:
                words.append(rng.choice(topics[secondary]))
            else:
                words.append(zipf_word())
        text = " ".join(words).capitalize() + "."
        docs.append({"id": i, "text": text, "primary": primary, "secondary": secondary})
    by_primary, by_secondary = {}, {}
    for d in docs:
        by_primary.setdefault(d["primary"], []).append(d["id"])
        by_secondary.setdefault(d["secondary"], []).append(d["id"])
    queries = []
    for q in range(n_queries):
        topic = rng.randrange(TOPICS)
        terms = rng.sample(topics[topic], 14)
        while len(terms) < QUERY_TERMS:
            w = zipf_word()
            if w not in terms:
                terms.append(w)
        rng.shuffle(terms)
        qrels = {str(i): 1 for i in by_secondary.get(topic, [])}
        qrels.update({str(i): 2 for i in by_primary.get(topic, [])})
        queries.append({"id": q, "text": " ".join(terms), "qrels": qrels})
    with open(f"{out}/docs.jsonl", "w") as f:
        for d in docs:
            f.write(json.dumps(d) + "\n")
    with open(f"{out}/queries.jsonl", "w") as f:
        for q in queries:
            f.write(json.dumps(q) + "\n")
    long = sum(len(d["text"]) > SUMMARY_CHARS for d in docs)
    print(f"corpus: {n_docs} documents ({long} longer than {SUMMARY_CHARS} characters), "
          f"{n_queries} queries of {QUERY_TERMS} terms, vocabulary {VOCAB}")


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def shorten(text):
    """LoopX's compact text at 500 characters (whitespace collapsed, cut with '…')."""
    text = " ".join(text.split())
    if len(text) <= SUMMARY_CHARS:
        return text
    return text[:SUMMARY_CHARS - 1].rstrip() + "…"


def fill(store, out):
    """Copies the store's one record (written by a real ingest) once per document, with the
    document as its summary, and indexes each as ingest does: the whole text."""
    docs = load(f"{out}/docs.jsonl")
    db = sqlite3.connect(store)
    ref, content = db.execute("SELECT resource_ref, content FROM resources").fetchone()
    db.execute("DELETE FROM resources")
    db.execute("DELETE FROM resources_fts")
    template = json.loads(content)
    prefix = ref.rsplit("/", 1)[0]
    rows, fts = [], []
    for d in docs:
        i = d["id"]
        record = dict(template)
        record["content_summary"] = shorten(d["text"])
        record["candidate_ref"] = "candidate:" + hashlib.sha256(f"c{i}".encode()).hexdigest()[:20]
        record["activation_ref"] = "activation:" + hashlib.sha256(f"a{i}".encode()).hexdigest()[:20]
        data = (json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                + "\n").encode()
        rows.append((i + 1, "reward_memory", f"{prefix}/bench-{i:06d}.json", data,
                     hashlib.sha256(data).hexdigest(), "2026-07-16T00:30:00+00:00"))
        fts.append((i + 1, " ".join(d["text"].split())))
    with db:
        db.executemany("INSERT INTO resources (id, namespace, resource_ref, content,"
                       " content_sha256, observed_at) VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO resources_fts (rowid, body) VALUES (?, ?)", fts)
        db.execute("DELETE FROM store_meta WHERE key = 'generation'")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def events(out, template_path, events_dir):
    """One ingest-event input per document (the template event, its summary replaced)."""
    for d, event in documents_as_events(out, template_path):
        with open(f"{events_dir}/ev{d['id']:06d}.json", "w") as f:
            json.dump(event, f)


def jsonl(out, template_path, path):
    """Every document's ingest-event input, one per line (`ingest-event --input *.jsonl`)."""
    with open(path, "w") as f:
        for _, event in documents_as_events(out, template_path):
            f.write(json.dumps(event) + "\n")


def documents_as_events(out, template_path):
    with open(template_path) as f:
        template = json.load(f)
    for d in load(f"{out}/docs.jsonl"):
        event = json.loads(json.dumps(template))
        event["event"]["content_summary"] = d["text"]
        yield d, event


def ndcg(ranked, qrels, k=K):
    dcg = sum((2 ** qrels.get(str(d), 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(qrels.values(), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def precision(ranked, qrels, k=K):
    return sum(1 for d in ranked[:k] if qrels.get(str(d), 0) > 0) / k


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def evaluate(out, store, binary, route):
    import bm25s

    docs = load(f"{out}/docs.jsonl")
    queries = load(f"{out}/queries.jsonl")
    # candidate_ref -> document: the bulk ingest's receipts, one per input line in order,
    # else the summary each record holds.
    cand = {}
    receipts = f"{out}/ingest.jsonl"
    if os.path.exists(receipts):
        for doc, line in zip(docs, load(receipts)):
            if line.get("ok") and line.get("candidate_ref"):
                cand.setdefault(line["candidate_ref"], doc["id"])  # a duplicate: the first
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    by_summary = {} if cand else {shorten(d["text"]): d["id"] for d in docs}
    by_ref, scope = {}, None
    for resource_ref, content in db.execute("SELECT resource_ref, content FROM resources"):
        record = json.loads(content)
        doc = cand.get(record.get("candidate_ref"))
        if doc is None:
            doc = by_summary.get(record.get("content_summary"))
            if doc is not None:
                cand[record["candidate_ref"]] = doc
        if doc is not None:
            by_ref[resource_ref] = doc
            scope = resource_ref.rsplit("/", 1)[0]
    row = db.execute("SELECT value FROM store_meta WHERE key = 'tokenizer'").fetchone()
    tokenizer = row[0] if row else "unicode61"
    db.close()
    stored = set(by_ref.values())

    ours, ours_ms, limit, answered = [], [], 0, []
    for q in queries:
        argv = [binary, *route, "recall", "--goal-id", "embedded-demo", "--agent-id", "pilot",
                "--query", q["text"], "--query-summary", "bench", "--observed-at",
                "2026-07-16T01:00:00+00:00", "--limit", os.environ.get("BENCH_LIMIT", "10"),
                "--format", "json"]
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, check=False)
        ours_ms.append((time.perf_counter() - start) * 1000)
        packet = json.loads(done.stdout)
        results = packet.get("results") or []
        limit = max(limit, len(results))
        ours.append([cand.get(r.get("candidate_ref"), -1) for r in results])
        answered.append(done.returncode == 0
                        and any(int(d) in stored for d, g in q["qrels"].items() if g > 0))
    floor = []
    for _ in range(30):
        start = time.perf_counter()
        subprocess.run(["/bin/true"], check=False)
        floor.append((time.perf_counter() - start) * 1000)

    indexed = [d for d in docs if d["id"] in stored]

    def bm25s_run(stopwords, stemmer):
        corpus_tokens = bm25s.tokenize([d["text"] for d in indexed], stopwords=stopwords,
                                       stemmer=stemmer, show_progress=False)
        retriever = bm25s.BM25()  # its defaults: the lucene variant, k1 = 1.5, b = 0.75
        retriever.index(corpus_tokens, show_progress=False)
        ranked, ms = [], []
        for q in queries:
            start = time.perf_counter()
            tokens = bm25s.tokenize([q["text"]], stopwords=stopwords, stemmer=stemmer,
                                    show_progress=False)
            ids, _ = retriever.retrieve(tokens, k=K, show_progress=False, n_threads=1)
            ms.append((time.perf_counter() - start) * 1000)
            ranked.append([indexed[int(i)]["id"] for i in ids[0]])
        return ranked, ms

    theirs, theirs_ms = bm25s_run("english", None)  # bm25s.tokenize's own defaults
    stemmer = None
    if tokenizer == "porter":
        import Stemmer

        stemmer = Stemmer.Stemmer("porter")
    same, same_ms = bm25s_run(None, stemmer)

    cut = max(limit, 1)
    # The same search in process: the provider's retrieve, one query at a time
    # (examples/search_timing.rs), when the shell built it.
    timing = os.environ.get("BENCH_SEARCH_TIMING")
    inproc, inproc_ms = None, None
    if timing and scope:
        done = subprocess.run([timing, store, f"{out}/queries.jsonl",
                               os.environ.get("BENCH_LIMIT", "10"), scope],
                              capture_output=True, check=True, text=True)
        inproc = []
        for line in done.stdout.splitlines():
            if line.startswith("ranked"):
                inproc.append([by_ref.get(r, -1) for r in line.split()[1:]])
            elif line.startswith("timing"):
                inproc_ms = [float(x) for x in line.split()[1:]]

    def judged(ranked):
        return [(r, q) for r, q, a in zip(ranked, queries, answered) if a]

    def row(name, ranked, ms, note):
        n10 = statistics.mean(ndcg(r, q["qrels"]) for r, q in judged(ranked))
        n8 = statistics.mean(ndcg(r, q["qrels"], cut) for r, q in judged(ranked))
        p10 = statistics.mean(precision(r, q["qrels"]) for r, q in judged(ranked))
        print(f"| {name} | {n10:.4f} | {n8:.4f} | {p10:.4f} | {statistics.median(ms):.2f} ms "
              f"median, {pct(ms, 95):.2f} p95 ({note}) |")
        return n10, n8

    print(f"{len(stored)} of {len(docs)} documents stored; {sum(answered)} of {len(queries)} "
          f"queries judged (answered by recall, a relevant document stored); recall returned "
          f"at most {limit} results")
    print(f"| system | nDCG@10 | nDCG@{cut} | P@10 | latency per query |")
    print("| --- | --- | --- | --- | --- |")
    o10, o8 = row("reward-memory recall (embedded store)", ours, ours_ms,
                  f"whole process; spawn floor /bin/true {statistics.median(floor):.2f} ms")
    if inproc is not None and inproc_ms is not None:
        n10 = statistics.mean(ndcg(r, q["qrels"]) for r, q in judged(inproc))
        n8 = statistics.mean(ndcg(r, q["qrels"], cut) for r, q in judged(inproc))
        p10 = statistics.mean(precision(r, q["qrels"]) for r, q in judged(inproc))
        print(f"| reward-memory search (provider retrieve) | {n10:.4f} | {n8:.4f} | {p10:.4f} | "
              f"{inproc_ms[0]:.2f} ms median, {inproc_ms[1]:.2f} p95 (in process: open, term "
              f"index, rows read) |")
    b10, b8 = row(f"bm25s {bm25s.__version__}, its defaults (English stop words, no stemming)",
                  theirs, theirs_ms, "in process, one query at a time")
    s10, s8 = row(f"bm25s {bm25s.__version__}, the store's tokenization (no stop words"
                  + (", Porter stemming)" if stemmer else ")"), same, same_ms,
                  "in process, one query at a time")
    print(f"store tokenizer: {tokenizer}")
    print(f"gap (ours - bm25s defaults): nDCG@10 {o10 - b10:+.4f}, nDCG@{cut} {o8 - b8:+.4f}")
    print(f"gap (ours - bm25s, same tokenization): nDCG@10 {o10 - s10:+.4f}, "
          f"nDCG@{cut} {o8 - s8:+.4f}")


def main(argv):
    cmd = argv[1]
    if cmd == "gen":
        gen(argv[2], int(argv[3]), int(argv[4]))
    elif cmd == "gen-man":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import man_corpus

        man_corpus.gen(argv[2], int(argv[3]))
    elif cmd == "gen-apps":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import apps_corpus

        apps_corpus.gen(argv[2], int(argv[3]))
    elif cmd == "fill":
        fill(argv[2], argv[3])
    elif cmd == "events":
        events(argv[2], argv[3], argv[4])
    elif cmd == "jsonl":
        jsonl(argv[2], argv[3], argv[4])
    elif cmd == "eval":
        evaluate(argv[2], argv[3], argv[4], argv[5:])
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
