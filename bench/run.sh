#!/usr/bin/env bash
# The benchmark suite (bench/README.md): one command, one Markdown table, measured in one run on
# this machine. Builds what it needs in release, runs every row (each figure the median of 3 runs),
# prints the report and writes it to bench/results/<date>-<shortcommit>.md.
#
#   bench/run.sh                  # the whole suite (~7 minutes on 2 cores, plus the build)
#   bench/run.sh --no-save        # print only
#   bench/run.sh --runs 5 --steps 40000 --ros-steps 20000 --pacing-seconds 60
#   bench/run.sh --no-ros         # rows 1-3, 6, 7 only
#   bench/run.sh --no-pacing --no-save   # a quick look (skips row 7's 3 x 60 s)
#   bench/run.sh --contacts-only  # row 11 alone: the cost of contact sensing
#
# Needs scripts/setup.sh (MuJoCo, the venv; `--ros` for rows 4-5). Not part of scripts/test.sh:
# it takes minutes and asserts nothing.
set -euo pipefail
case "${1:-}" in -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;; esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/env.sh
. "$ROOT/scripts/env.sh"

PY="$ROQSIM_VENV/bin/python"
if [ ! -x "$PY" ]; then
  echo "bench: $PY missing: run scripts/setup.sh first" >&2
  exit 2
fi

# Rows 1, 3, 6, 7 use the ROS-free core (no ROS libraries mapped: the RSS of a plain build);
# row 4 uses the `ros` build, as `roqsim sim --ros` does. Private copies of the binaries: other
# cargo builds in this tree may replace target/release/* mid-run.
BIN="$(mktemp -d "${TMPDIR:-/tmp}/roqsim-bench-bin.XXXXXX")"
trap 'rm -rf "$BIN"' EXIT
echo "bench: cargo build --release --example bench_rows --example camera_bench" >&2
cargo build --release --example bench_rows --example camera_bench >&2
cp target/release/examples/bench_rows "$BIN/bench_rows"
cp target/release/examples/camera_bench "$BIN/camera_bench"

ARGS=(--bench-rows "$BIN/bench_rows" --camera-bench "$BIN/camera_bench")
if [ "${ROQSIM_HAVE_ROS:-0}" = 1 ]; then
  echo "bench: cargo build --release --features ros --bin roqsim --example bench_rows --example bench_subscriber" >&2
  cargo build --release --features ros --bin roqsim --example bench_rows --example bench_subscriber >&2
  cp target/release/roqsim "$BIN/roqsim"
  cp target/release/examples/bench_rows "$BIN/bench_rows_ros"
  cp target/release/examples/bench_subscriber "$BIN/bench_subscriber"
  ARGS+=(--roqsim "$BIN/roqsim" --bench-rows-ros "$BIN/bench_rows_ros" --bench-subscriber "$BIN/bench_subscriber")
else
  echo "bench: no ROS 2 environment (scripts/setup.sh --ros, then . scripts/env.sh): rows 4 and 5 are skipped" >&2
  ARGS+=(--no-ros)
fi

"$PY" "$ROOT/bench/run.py" "${ARGS[@]}" "$@" -- "$@"
