#!/usr/bin/env bash
# The benchmarks' driver is bench/bench.sh (docs/BENCHMARKS.md); this runs it with the same arguments.
exec bash "$(dirname "${BASH_SOURCE[0]}")/../bench/bench.sh" "$@"
