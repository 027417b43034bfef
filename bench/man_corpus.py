"""A real-text corpus for bench/search-quality.sh (BENCH_CORPUS=man): this machine's
manual pages, as known-item search.

Documents: every manual page under /usr/share/man/man{1..8} that is a file of its own (no
symbolic links, no `.so` redirections) and has a NAME section of the form `name - what it
does`, at most 500 of the (templated) `gcloud` pages, drawn with a fixed seed. A
document's text is its page after the NAME section, roff requests and escapes removed,
words holding `/` or `\\` left out (the store refuses text that looks like a local path,
and both sides must index the same text), cut to its first 400 words.

Queries: the NAME descriptions (`copy files and directories`), of three words or more,
whose text no other page shares; each judges its own page relevant (grade 1) and nothing
else. The page's text never holds its NAME line, so a query is not a quotation of it.

The figures depend on the pages installed; the script prints how many it found.
"""

import gzip
import os
import random
import re

import known_item

SEED = 20261204
GCLOUD_PAGES = 500
WORDS = 400
SECTIONS = ["man1", "man2", "man3", "man4", "man5", "man6", "man7", "man8"]
INLINE = {".B", ".I", ".BR", ".IR", ".RB", ".RI", ".BI", ".IB", ".Nm", ".Nd", ".Ar", ".Fl",
          ".It", ".Xr", ".Op", ".Pa", ".Dq", ".Em", ".Cm", ".Ev", ".Va", ".Li", ".Fn", ".Ft",
          ".Fa"}
ESCAPES = re.compile(r"\\f[BIRP5]|\\f\(..|\\\(..|\\[e&|^%]|\\s[-+]?\d|\\\*\(?..?")


def clean(line):
    line = ESCAPES.sub(" ", line)
    return line.replace("\\-", "-").replace("\\ ", " ").replace('"', " ")


def page_sections(raw):
    """[(heading, [lines])] of a roff page: text lines and the text of inline requests."""
    sections = []
    for line in raw.splitlines():
        if line.startswith((".\\\"", "'\\\"")):
            continue
        if line.startswith((".SH", ".Sh")):
            sections.append((clean(line[3:]).strip().upper(), []))
            continue
        if line.startswith((".", "'")):
            parts = line.split(None, 1)
            if parts[0] not in INLINE:
                continue
            line = parts[1] if len(parts) > 1 else ""
        if sections:
            sections[-1][1].append(clean(line))
    return sections


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".gz"):
        data = gzip.decompress(data)
    return data.decode("utf-8", "replace")


def pages(root="/usr/share/man"):
    rng = random.Random(SEED)
    for section in SECTIONS:
        folder = os.path.join(root, section)
        if not os.path.isdir(folder):
            continue
        names = sorted(os.listdir(folder))
        gcloud = [n for n in names if n.startswith("gcloud")]
        kept = set(rng.sample(gcloud, min(len(gcloud), GCLOUD_PAGES)))
        for name in names:
            path = os.path.join(folder, name)
            if (name.startswith("gcloud") and name not in kept) or os.path.islink(path):
                continue
            try:
                raw = read(path)
            except (OSError, EOFError, gzip.BadGzipFile):
                continue
            if raw.lstrip().startswith(".so "):
                continue
            sections = page_sections(raw)
            if not sections or sections[0][0] != "NAME":
                continue
            name_line = " ".join(" ".join(sections[0][1]).split())
            parts = re.split(r"\s+-+\s+", name_line, maxsplit=1)
            if len(parts) != 2:
                continue
            words = [w for w in " ".join(" ".join(s[1]) for s in sections[1:]).split()
                     if "/" not in w and "\\" not in w]
            if len(words) < 30:
                continue
            yield f"{section}/{name}", parts[1], " ".join(words[:WORDS])


def gen(out, n_queries):
    docs, descriptions = [], {}
    for key, description, text in pages():
        docs.append({"id": len(docs), "page": key, "text": text})
        descriptions.setdefault(description.lower(), []).append((len(docs) - 1, description))
    n = known_item.write(out, docs, descriptions, SEED, n_queries)
    print(f"corpus: {len(docs)} manual pages of this machine (first {WORDS} words each), "
          f"{n} known-item queries (their NAME descriptions)")
