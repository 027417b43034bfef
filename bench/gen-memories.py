"""Ingest events for bench/recall.sh and bench/mcp.sh: N copies of an ingest-event input,
each with its own 10-word summary ("Bench memory i: ...") drawn from a 4,000-word
synthetic vocabulary (seeded, so every run writes the same store), as JSON Lines.

Prints one line: the two words of median frequency, their counts, and 20 words of the
vocabulary (a 20-term query).

Usage: gen-memories.py TEMPLATE N OUT.jsonl
"""

import json
import random
import sys


def main(template_path, n, out):
    rng = random.Random(20260816)
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "vo", "pe", "du", "ga", "zo", "bi",
                 "fe", "hu"]
    vocab = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
                    for _ in range(6000)})[:4000]
    with open(template_path) as f:
        template = json.load(f)
    counts = {}
    with open(out, "w") as f:
        for i in range(n):
            words = [rng.choice(vocab) for _ in range(10)]
            for w in words:
                counts[w] = counts.get(w, 0) + 1
            template["event"]["content_summary"] = f"Bench memory {i}: {' '.join(words)}."
            f.write(json.dumps(template) + "\n")
    rare = sorted((c, w) for w, c in counts.items())[len(counts) // 2 - 1: len(counts) // 2 + 1]
    twenty = rng.sample(vocab, 20)
    print(" ".join(w for _, w in rare), " ".join(str(c) for c, _ in rare), " ".join(twenty))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
