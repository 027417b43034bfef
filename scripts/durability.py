#!/usr/bin/env python3
"""Durability check of the embedded store: SIGKILL `ingest-event --execute` at random
moments, many times, against one store, then check what survived.

Uses the release binary (build it first: `cargo build --release --locked`) and only the
Python standard library. Steps:

1. Writes a registry, the embedded example's experiment config and N distinct events
   (fixtures/ingest_event/embedded/event.json with its own summary each).
2. Reference: ingests every event once, without kills, into separate stores (two at a
   time), and keeps each event's stored bytes; the median run time sets the kill window.
3. Kills: starts `ingest-event --execute` of a random event and sends SIGKILL after a
   random delay in [0, median run time], all against one store, until K runs were killed
   (runs that finish first count as ordinary runs). A run whose complete receipt says
   `activated` was acknowledged.
4. Checks: `PRAGMA integrity_check` is ok, the FTS index passes its own integrity check
   (on a copy) and every record has its index row; the term index is current and agrees
   with FTS5 word by word (documents per word, row and token totals); every acknowledged record is present
   with exactly the reference bytes, and every stored row is some event's exact record;
   a rerun of every event (two at a time) is `activated` (acknowledged ones with
   `write_count` 0), and a second rerun writes nothing; no staging leftovers in the runs' TMPDIR and nothing
   under the runtime root besides the store and its `-wal`/`-shm`/`-checked` files.

5. JSON Lines phase (`--jsonl-kills`, default 20; 0 skips it): one file of
   `--jsonl-events` (default 3000) distinct events, ingested once without kills into a
   reference store, then `ingest-event --input events.jsonl --execute --batch-size 200`
   against one store is killed with SIGKILL after a random delay in [0, reference run
   time], again and again. Every receipt line a killed run printed is acknowledged. Checks:
   integrity, FTS rows and the term index as above, every acknowledged record present with the reference
   bytes, every stored row some event's exact record (no half state), then a complete run
   activates every line (writing exactly the missing records) and a second writes nothing.

Exit status 0 when every check holds, 1 otherwise. `--keep` keeps the work directory.
"""

import argparse
import concurrent.futures
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures", "ingest_event", "embedded")
STORE_FILES = {"embedded.sqlite3", "embedded.sqlite3-wal", "embedded.sqlite3-shm",
               "embedded.sqlite3-checked"}


def log(text):
    print(f"[durability] {text}", file=sys.stderr, flush=True)


class Work:
    def __init__(self, binary, events, base):
        self.binary = binary
        self.dir = base
        self.tmp = os.path.join(base, "tmp")  # TMPDIR of every run: must stay empty
        os.makedirs(self.tmp)
        shutil.copytree(os.path.join(FIXTURES, "project"), os.path.join(base, "project"))
        with open(os.path.join(FIXTURES, "registry.json"), encoding="utf-8") as f:
            registry = json.load(f)
        registry["goals"][0]["repo"] = "project"
        with open(os.path.join(base, "registry.json"), "w", encoding="utf-8") as f:
            json.dump(registry, f)
        with open(os.path.join(FIXTURES, "event.json"), encoding="utf-8") as f:
            event = json.load(f)
        for i in range(events):
            event["event"]["content_summary"] = (
                f"Keep memory-core changes focused, durability variant {i}.")
            with open(os.path.join(base, f"ev{i}.json"), "w", encoding="utf-8") as f:
                json.dump(event, f)

    def argv(self, runtime_root, i):
        return [self.binary, "--registry", "registry.json", "--runtime-root", runtime_root,
                "ingest-event", "--input", f"ev{i}.json", "--goal-id", "embedded-demo",
                "--agent-id", "pilot", "--execute", "--format", "json"]

    def env(self):
        env = dict(os.environ)
        env["TMPDIR"] = self.tmp
        env["HOME"] = os.path.join(self.dir, "home")
        env.pop("LOOPX_REGISTRY", None)
        return env

    def start(self, runtime_root, i):
        return subprocess.Popen(self.argv(runtime_root, i), cwd=self.dir, env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)

    def run(self, runtime_root, i):
        proc = self.start(runtime_root, i)
        out, _ = proc.communicate()
        return receipt(out)

    def store(self, runtime_root):
        return os.path.join(self.dir, runtime_root, "reward-memory", "embedded.sqlite3")


def receipt(stdout):
    try:
        return json.loads(stdout)
    except ValueError:
        return None


def read_only(path):
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def rows(path):
    with read_only(path) as conn:
        return dict(conn.execute("SELECT resource_ref, content FROM resources"))


def term_index_current(conn, check, label):
    """The store's term index (docs/search.md) is current and agrees with FTS5: its
    generation is the store's, it covers the last record, and per word it holds as many
    documents as FTS5 does, with FTS5's row and token totals."""
    meta = dict(conn.execute("SELECT key, value FROM store_meta"))
    check(meta.get("search_generation") == meta.get("generation"),
          f"{label}: term index generation {meta.get('search_generation')} is not the store's "
          f"{meta.get('generation')}")
    last = conn.execute("SELECT coalesce(max(id), 0) FROM resources").fetchone()[0]
    check(meta.get("search_last_doc") == str(last),
          f"{label}: term index covers up to {meta.get('search_last_doc')}, last record {last}")
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_words "
                 "USING fts5vocab(main, resources_fts, row)")
    fts = dict(conn.execute("SELECT term, doc FROM temp.fts_words"))
    ours = dict(conn.execute("SELECT term, sum(count) FROM search_postings GROUP BY term"))
    check(fts == ours, f"{label}: term index and FTS5 disagree on "
          f"{len(set(fts.items()) ^ set(ours.items()))} word counts")
    rows_, tokens = conn.execute(
        "SELECT (SELECT count(*) FROM resources_fts), "
        "(SELECT coalesce(sum(cnt), 0) FROM temp.fts_words)").fetchone()
    check(meta.get("search_rows") == str(rows_) and meta.get("search_tokens") == str(tokens),
          f"{label}: term index totals {meta.get('search_rows')}/{meta.get('search_tokens')}, "
          f"FTS5 {rows_}/{tokens}")


def jsonl_argv(work, runtime_root):
    return [work.binary, "--registry", "registry.json", "--runtime-root", runtime_root,
            "ingest-event", "--input", "events.jsonl", "--goal-id", "embedded-demo",
            "--agent-id", "pilot", "--execute", "--batch-size", "200"]


def jsonl_lines(stdout):
    """The complete JSON lines of a (possibly killed) run's output."""
    out = []
    for line in stdout.decode("utf-8", "replace").split("\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def records_by_candidate(path):
    """candidate_ref -> (resource_ref, exact bytes) of every stored record."""
    out = {}
    for ref, content in rows(path).items():
        record = json.loads(bytes(content))
        out[record["candidate_ref"]] = (ref, bytes(content))
    return out


def jsonl_phase(work, events, kills, rng, check):
    """SIGKILL during JSON Lines ingests: printed receipts are stored, nothing is half."""
    with open(os.path.join(FIXTURES, "event.json"), encoding="utf-8") as f:
        event = json.load(f)
    with open(os.path.join(work.dir, "events.jsonl"), "w", encoding="utf-8") as f:
        for i in range(events):
            event["event"]["content_summary"] = (
                f"Keep memory-core changes focused, bulk durability variant {i}.")
            f.write(json.dumps(event, separators=(",", ":")) + "\n")

    def run(root, delay=None):
        proc = subprocess.Popen(jsonl_argv(work, root), cwd=work.dir, env=work.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        if delay is not None:
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        return proc.returncode, jsonl_lines(out)

    t0 = time.monotonic()
    code, lines = run("bulk-ref-rt")
    window = time.monotonic() - t0
    check(code == 0 and lines and lines[-1].get("ok") is True,
          f"reference JSON Lines run: exit {code}, summary {lines[-1] if lines else None}")
    reference = records_by_candidate(work.store("bulk-ref-rt"))
    check(len(reference) == events, f"reference store holds {len(reference)} of {events}")
    by_ref = {ref: content for ref, content in reference.values()}
    log(f"JSON Lines: {events} events in {window:.2f} s = kill window")

    acknowledged = set()
    killed = 0
    for _ in range(kills):
        code, lines = run("bulk-rt", rng.uniform(0, window))
        killed += code == -signal.SIGKILL
        for line in lines:
            if line.get("schema_version") == "reward_memory_ingest_receipt_v0" \
                    and line.get("status") == "activated":
                acknowledged.add(line["candidate_ref"])
    store = work.store("bulk-rt")
    with read_only(store) as conn:
        verdict = conn.execute("PRAGMA integrity_check").fetchall()
        check(verdict == [("ok",)], f"JSON Lines store integrity_check: {verdict}")
        unindexed = conn.execute(
            "SELECT count(*) FROM resources r LEFT JOIN resources_fts f ON f.rowid = r.id "
            "WHERE f.rowid IS NULL").fetchone()[0]
        check(unindexed == 0, f"JSON Lines store: {unindexed} records without an FTS row")
        orphans = conn.execute(
            "SELECT count(*) FROM resources_fts f LEFT JOIN resources r ON r.id = f.rowid "
            "WHERE r.id IS NULL").fetchone()[0]
        check(orphans == 0, f"JSON Lines store: {orphans} FTS rows without a record")
        term_index_current(conn, check, "JSON Lines store")
    stored = rows(store)
    for candidate in sorted(acknowledged):
        ref, content = reference[candidate]
        check(stored.get(ref) == content,
              f"acknowledged {candidate} is {'absent' if ref not in stored else 'different'}")
    for ref, content in stored.items():
        check(by_ref.get(ref) == bytes(content), f"stored row {ref} is no event's exact record")
    log(f"JSON Lines: {kills} runs, {killed} killed by SIGKILL; {len(acknowledged)} "
        f"acknowledged, {len(stored)} stored")

    missing = events - len(stored)
    code, lines = run("bulk-rt")
    summary = lines[-1] if lines else {}
    check(code == 0 and summary.get("status_counts") == {"activated": events}
          and summary.get("records_written") == missing,
          f"complete JSON Lines run: exit {code}, summary {summary}, expected {missing} writes")
    code, lines = run("bulk-rt")
    summary = lines[-1] if lines else {}
    check(code == 0 and summary.get("records_written") == 0
          and summary.get("records_already_stored") == events,
          f"second complete JSON Lines run is not a no-op: {summary}")
    stored = rows(store)
    check(len(stored) == events and all(by_ref.get(r) == bytes(c) for r, c in stored.items()),
          f"JSON Lines store after reruns: {len(stored)} records, expected {events} exact")
    for root in ("bulk-rt", "bulk-ref-rt"):
        shutil.rmtree(os.path.join(work.dir, root), ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release",
                                                         "reward-memory"))
    parser.add_argument("--kills", type=int, default=250,
                        help="runs to kill with SIGKILL (at least 200 is the check)")
    parser.add_argument("--events", type=int, default=150)
    parser.add_argument("--jsonl-kills", type=int, default=20,
                        help="SIGKILLs of JSON Lines ingests (0 skips that phase)")
    parser.add_argument("--jsonl-events", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.access(binary, os.X_OK):
        log(f"no executable at {binary}: run `cargo build --release --locked` first")
        return 1
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    started = time.monotonic()
    base = tempfile.mkdtemp(prefix="reward-memory-durability-")
    work = Work(binary, args.events, base)
    failures = []

    def check(ok, text):
        if not ok:
            failures.append(text)
            log(f"FAIL: {text}")

    # 2. reference bytes, and how long a run takes (two workers, one store each)
    reference = {}
    durations = []

    def reference_worker(w):
        root = f"ref-rt-{w}"
        for i in range(w, args.events, 2):
            t0 = time.monotonic()
            packet = work.run(root, i)
            durations.append(time.monotonic() - t0)
            check(packet is not None and packet.get("status") == "activated",
                  f"reference run of ev{i} did not activate")
            with read_only(work.store(root)) as conn:
                ref, content = conn.execute(
                    "SELECT resource_ref, content FROM resources ORDER BY id DESC LIMIT 1"
                ).fetchone()
            reference[i] = (ref, bytes(content))

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(reference_worker, range(2)))
    window = statistics.median(durations)
    log(f"seed {seed}; {args.events} events; median run {window * 1000:.1f} ms = kill window")

    # 3. random kills against one store
    acknowledged = set()
    killed = finished_first = 0
    while killed < args.kills and killed + finished_first < 4 * args.kills:
        i = rng.randrange(args.events)
        proc = work.start("rt", i)
        time.sleep(rng.uniform(0, window))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
        if proc.returncode == -signal.SIGKILL:
            killed += 1
        else:
            finished_first += 1
        packet = receipt(out)
        if packet is not None and packet.get("status") == "activated":
            acknowledged.add(i)
    log(f"{killed + finished_first} runs: {killed} killed by SIGKILL, "
        f"{finished_first} finished first; "
        f"{len(acknowledged)} distinct events acknowledged")
    check(killed >= 200, f"only {killed} runs were killed (need at least 200)")

    # 4. checks
    store = work.store("rt")
    with read_only(store) as conn:
        verdict = conn.execute("PRAGMA integrity_check").fetchall()
        check(verdict == [("ok",)], f"integrity_check: {verdict}")
        unindexed = conn.execute(
            "SELECT count(*) FROM resources r LEFT JOIN resources_fts f ON f.rowid = r.id "
            # The index row holds the record's search text: its content_summary (these
            # events' summaries are short, so the whole summary).
            "WHERE f.rowid IS NULL OR f.body IS NOT coalesce("
            "json_extract(CAST(r.content AS TEXT), '$.content_summary'), "
            "CAST(r.content AS TEXT))").fetchone()[0]
        check(unindexed == 0, f"{unindexed} records without their exact FTS row")
        term_index_current(conn, check, "store after kills")
    copy = os.path.join(base, "copy")
    os.makedirs(copy)
    for name in os.listdir(os.path.dirname(store)):
        if name.startswith("embedded.sqlite3") and not name.endswith("-checked"):
            shutil.copy2(os.path.join(os.path.dirname(store), name), copy)
    with sqlite3.connect(os.path.join(copy, "embedded.sqlite3")) as conn:
        try:
            conn.execute("INSERT INTO resources_fts (resources_fts) VALUES ('integrity-check')")
        except sqlite3.DatabaseError as err:
            check(False, f"FTS integrity-check: {err}")
    stored = rows(store)
    by_ref = {ref: content for ref, content in reference.values()}
    for i in sorted(acknowledged):
        ref, content = reference[i]
        check(stored.get(ref) == content,
              f"acknowledged ev{i} is {'absent' if ref not in stored else 'different'}")
    for ref, content in stored.items():
        check(by_ref.get(ref) == bytes(content), f"stored row {ref} is no event's exact record")
    log(f"store after kills: {len(stored)} records, {len(acknowledged)} acknowledged")

    def rerun_all():
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            return list(pool.map(lambda i: (i, work.run("rt", i)), range(args.events)))

    rewritten = 0
    for i, packet in rerun_all():
        ok = packet is not None and packet.get("status") == "activated"
        check(ok, f"rerun of ev{i}: {packet and packet.get('status')} "
                  f"{packet and packet.get('reason_codes')}")
        if not ok:
            continue
        writes = packet["write"]["write_count"]
        rewritten += writes
        if i in acknowledged:
            check(writes == 0 and packet["deduplicated"] is True,
                  f"rerun of acknowledged ev{i} wrote {writes}")
    for i, packet in rerun_all():
        check(packet is not None and packet.get("status") == "activated"
              and packet["write"]["write_count"] == 0,
              f"second rerun of ev{i} is not an idempotent no-op")
    stored = rows(store)
    check(len(stored) == args.events, f"{len(stored)} records after reruns, "
                                      f"expected {args.events}")
    for ref, content in stored.items():
        check(by_ref.get(ref) == bytes(content), f"after reruns, {ref} differs")
    log(f"reruns: every event activated, {rewritten} written by the first rerun, "
        "second rerun wrote nothing")

    if args.jsonl_kills > 0:
        jsonl_phase(work, args.jsonl_events, args.jsonl_kills, rng, check)

    leftovers = os.listdir(work.tmp)
    check(leftovers == [], f"{len(leftovers)} leftovers in TMPDIR, e.g. {leftovers[:3]}")
    runtime = os.path.join(base, "rt")
    entries = sorted(os.listdir(runtime))
    check(entries == ["reward-memory"], f"runtime root holds {entries}")
    extra = sorted(set(os.listdir(os.path.join(runtime, "reward-memory"))) - STORE_FILES)
    check(extra == [], f"unexpected files under the runtime root: {extra}")

    elapsed = time.monotonic() - started
    if args.keep:
        log(f"kept {base}")
    else:
        shutil.rmtree(base, ignore_errors=True)
    if failures:
        log(f"{len(failures)} check(s) failed in {elapsed:.1f} s (seed {seed})")
        return 1
    log(f"ok: {killed} SIGKILLs, integrity ok, {len(acknowledged)} acknowledged records "
        f"exact, reruns idempotent, no staging leftovers ({elapsed:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
