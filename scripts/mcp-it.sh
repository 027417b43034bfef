#!/usr/bin/env bash
# The MCP server against the official MCP Python SDK: installs `mcp` (pinned, from PyPI)
# into a cached venv under ~/.cache/reward-memory/ when it is missing, then runs
# scripts/mcp-it.py, which drives the attribution loop through `reward-memory mcp`
# (ingest -> recall -> apply -> attribute -> ledger_subject -> rank_evaluate -> recall with
# the prior) and asserts every packet.
#
# Usage: scripts/mcp-it.sh [BINARY]   (default target/release/reward-memory, else
# target/debug/reward-memory)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
MCP_VERSION=2.3.0
CACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/reward-memory"
VENV="$CACHE_DIR/mcp-$MCP_VERSION"
log() { printf '[mcp-it] %s\n' "$*" >&2; }

BIN="${1:-}"
if [ -z "$BIN" ]; then
    BIN="$ROOT/target/release/reward-memory"
    [ -x "$BIN" ] || BIN="$ROOT/target/debug/reward-memory"
fi
[ -x "$BIN" ] || { log "FAIL: no binary at $BIN (cargo build first)"; exit 1; }

if [ ! -f "$VENV/.complete" ] || [ ! -x "$VENV/bin/python" ]; then
    log "installing mcp==$MCP_VERSION into $VENV"
    rm -rf "$VENV"
    mkdir -p "$CACHE_DIR"
    if command -v uv >/dev/null 2>&1; then
        uv venv --quiet --python python3 "$VENV"
        uv pip install --quiet --python "$VENV/bin/python" --compile-bytecode "mcp==$MCP_VERSION"
    else
        python3 -m venv "$VENV"
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$MCP_VERSION"
    fi
    touch "$VENV/.complete"
else
    log "reusing $VENV"
fi

"$VENV/bin/python" "$ROOT/scripts/mcp-it.py" --binary "$BIN"
