#!/usr/bin/env bash
# Retrieval quality and speed of `reward-memory recall` on the embedded store, side by side
# with bm25s (PyPI) on the same corpus, queries and BM25, bm25s run twice: with its own
# defaults (English stop words) and with the store's tokenization: nDCG@10, nDCG@k
# (k: the most results recall returned), P@10 and per-query latency (recall: whole process, timed by a Python loop whose spawn
# floor, /bin/true, is printed beside; bm25s: in process, one query at a time), and the
# same search in process through the provider's retrieve (examples/search_timing.rs).
#
# The corpus (bench/search_quality.py explains it): BENCH_DOCS (10,000) documents from a
# Zipf-like vocabulary with graded topic judgments, BENCH_QUERIES (200) queries of 20
# distinct terms. BENCH_CORPUS=man uses real text instead: this machine's manual pages,
# with their NAME descriptions as known-item queries (BENCH_QUERIES, 400 there;
# bench/man_corpus.py explains it); BENCH_CORPUS=apps the application descriptions of
# Debian's AppStream metadata with their summaries as queries (bench/apps_corpus.py).
# BENCH_TOKENIZER=unicode61|porter builds the store with that tokenizer (the binding's
# store_tokenizer); unset, the store is built as a new store is (porter). Getting it into
# the store:
# * BENCH_INGEST=bulk (the default): one `ingest-event --input events.jsonl --execute`
#   (JSON Lines, one event per document, batches of 500): the store exactly as the CLI
#   writes it, its term index included; the ingest rate is printed.
# * BENCH_INGEST=cli: every document goes through `ingest-event --execute` (one process
#   each, BENCH_JOBS (2) at a time): slow (about 13 ms a document per job), the same store.
# * BENCH_INGEST=direct: Python's sqlite3 copies one ingested record once per document
#   (the summary cut at 500 characters as LoopX cuts it, the whole text indexed) without
#   the term index, so recall answers from FTS5's own ranking: the fallback's figures.
# Recall is asked for `--limit BENCH_LIMIT` (10) results, so nDCG@10 and P@10 compare
# like with like; nDCG@k compares both on the k results recall returned.
#
# Usage: bench/search-quality.sh   (from the repository root). bm25s, numpy, PyStemmer
# and PyYAML are installed into ~/.cache/reward-memory/venv-search when missing. BENCH_KEEP=1 keeps the
# work directory; BENCH_BIN=path uses that binary instead of building one. Figures are printed only; nothing here asserts a figure.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
work="$(mktemp -d)"
if [ -n "${BENCH_KEEP:-}" ]; then echo "work dir kept: $work"; else trap 'rm -rf "$work"' EXIT; fi
docs="${BENCH_DOCS:-10000}"
queries="${BENCH_QUERIES:-200}"
venv="$HOME/.cache/reward-memory/venv-search"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import bm25s, Stemmer, yaml' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet bm25s numpy PyStemmer PyYAML
fi
py="$venv/bin/python"

if [ -n "${BENCH_BIN:-}" ]; then
    bin="$BENCH_BIN" # an already built binary (a rebuild follows every commit)
else
    cargo build --release --quiet
    bin="$root/target/release/reward-memory"
fi
# The in-process timing of the same search (examples/search_timing.rs).
if cargo build --release --quiet --example search_timing 2>/dev/null; then
    export BENCH_SEARCH_TIMING="$root/target/release/examples/search_timing"
fi
registry=fixtures/ingest_event/embedded/registry.json
if [ -n "${BENCH_TOKENIZER:-}" ]; then
    registry=$(python3 bench/registry-with-tokenizer.py "$work" "$BENCH_TOKENIZER" "$registry")
fi
route=(--registry "$registry" --runtime-root "$work/rt")
store="$work/rt/reward-memory/embedded.sqlite3"

case "${BENCH_CORPUS:-synthetic}" in
man) "$py" bench/search_quality.py gen-man "$work" "${BENCH_QUERIES:-400}" ;;
apps) "$py" bench/search_quality.py gen-apps "$work" "${BENCH_QUERIES:-400}" ;;
*) "$py" bench/search_quality.py gen "$work" "$docs" "$queries" ;;
esac
start=$(date +%s.%N)
case "${BENCH_INGEST:-bulk}" in
cli)
    mkdir -p "$work/events"
    "$py" bench/search_quality.py events "$work" fixtures/recall/loop/event-a.json "$work/events"
    find "$work/events" -name '*.json' | sort | xargs -P "${BENCH_JOBS:-2}" -I{} \
        "$bin" "${route[@]}" ingest-event --input {} --goal-id embedded-demo --agent-id pilot \
        --execute --format json >/dev/null
    ;;
direct)
    "$bin" "${route[@]}" ingest-event --input fixtures/recall/loop/event-a.json \
        --goal-id embedded-demo --agent-id pilot --execute --format json >/dev/null
    "$py" bench/search_quality.py fill "$store" "$work"
    ;;
*)
    "$py" bench/search_quality.py jsonl "$work" fixtures/recall/loop/event-a.json "$work/events.jsonl"
    start=$(date +%s.%N)
    # Exit 1 when a line was refused (the summary counts them); the others are stored.
    "$bin" "${route[@]}" ingest-event --input "$work/events.jsonl" --goal-id embedded-demo \
        --agent-id pilot --execute --format jsonl >"$work/ingest.jsonl" || true
    tail -n 1 "$work/ingest.jsonl" | python3 -c 'import json, sys; s = json.load(sys.stdin); print("ingest summary:", s["status_counts"], "records written", s["records_written"])'
    ;;
esac
n_records=$(sqlite3 "$store" 'SELECT count(*) FROM resources')
echo "ingest (${BENCH_INGEST:-bulk}): $n_records records in $(python3 -c "e = $(date +%s.%N) - $start; print(f'{e:.2f} s, {$n_records / e:,.0f} records/s')"), store $(du -h "$store" | cut -f1), $("$bin" --version)"
"$py" bench/search_quality.py eval "$work" "$store" "$bin" "${route[@]}"
