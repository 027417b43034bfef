#!/usr/bin/env bash
# Peak RSS of every `--input` command for inputs of one size and many shapes, as a
# multiple of the input size (the target: under 16x for every shape).
#
# Usage: bench/input-memory.sh [MEGABYTES] [BINARY]
#        (defaults: 60 MB, target/release/reward-memory built first)
# Every shape is the bench input's object (scope, snapshot refs, ...) with its
# "observations" list replaced by one repeated item up to the size, minified.
# Figures are printed only; nothing here asserts.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mb=${1:-60}
bin=${2:-}
if [[ -z "$bin" ]]; then
    (cd "$root" && cargo build --release --quiet)
    bin="$root/target/release/reward-memory"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$mb" "$root/../shared/bench/utility-project-1024.json" <<'PY'
import json, os, sys
work, mb, bench = sys.argv[1], int(sys.argv[2]), sys.argv[3]
size = mb * 1_000_000
chain = "[" * 500 + "]" * 500
shapes = {
    "nested-[[[]]]": "[[[]]]",
    "tiny-arrays-[]": "[]",
    "one-item-arrays-[0]": "[0]",
    "digits-0": "0",
    "short-strings": '"ab"',
    "small-objects": '{"a":0}',
    "long-strings": '"' + "x" * 1_000_000 + '"',
    "chains-500-deep": chain,
}
head = '{"observations":['
if os.path.exists(bench):
    # The real stream's other fields, so that the reducer runs on each shape.
    doc = json.load(open(bench))
    obs = doc.pop("observations")
    head = json.dumps(doc, separators=(",", ":"))[:-1] + ',"observations":['
    shapes["observations"] = ",".join(json.dumps(o, separators=(",", ":")) for o in obs[:64])
for name, item in shapes.items():
    n = max(1, (size - len(head)) // (len(item) + 1))
    with open(f"{work}/{name}.json", "w") as f:
        f.write(head)
        f.write(",".join([item] * n))
        f.write("]}")
# One object with many keys (skipped with SKIP_MANY_KEYS=1: quadratic before issue 8).
if os.environ.get("SKIP_MANY_KEYS") != "1":
    with open(f"{work}/many-keys.json", "w") as f:
        n = size // 14
        f.write("{" + ",".join(f'"k{i:08d}":0' for i in range(n)) + "}")
PY

# Every command that reads --input; COMMANDS="utility-project ..." picks some.
declare -A extra=(
    [operator-control]="--action retire --control-ref control:bench --reasoning-summary bench"
)
commands=${COMMANDS:-ingest-event dogfood-evaluate operator-control utility-project utility-observe utility-validate recall apply rank-prior}

printf '%-18s %-22s %9s %12s %8s %5s  %s\n' command shape "input MB" "peak RSS MiB" ratio exit "error (if any)"
for cmd in $commands; do
    read -r -a more <<<"${extra[$cmd]:-}"
    for file in "$work"/*.json; do
        name=$(basename "$file" .json)
        bytes=$(stat -c %s "$file")
        /usr/bin/time -v "$bin" "$cmd" "${more[@]}" --input "$file" --format json \
            >"$work/out.txt" 2>"$work/time.txt" || true
        rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
        code=$(awk -F': ' '/Exit status/ {print $2}' "$work/time.txt")
        err=$(python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1])).get("error","")[:50])
except Exception: print("(no JSON)")' "$work/out.txt")
        awk -v c0="$cmd" -v n="$name" -v b="$bytes" -v r="$rss" -v c="$code" -v e="$err" 'BEGIN {
            printf "%-18s %-22s %9.1f %12.1f %7.2fx %5s  %s\n", c0, n, b/1e6, r/1024, r*1024/b, c, e }'
    done
done
