#!/usr/bin/env bash
# The project's test command (README "run the tests"): the whole cargo test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked
