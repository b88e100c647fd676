#!/usr/bin/env bash
# The demo: set up (idempotent), build the ROS-enabled binary, run the demo world for 5 s.
#   scripts/demo.sh                      -> roqsim sim worlds/demo.yaml --seconds 5
#   scripts/demo.sh worlds/other.yaml    -> another world
#   scripts/demo.sh worlds/x.yaml --seconds 10 ...   (arguments after the world go to roqsim)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

WORLD="${1:-worlds/demo.yaml}"
[ $# -gt 0 ] && shift
ARGS=("$@")
[ "${#ARGS[@]}" -gt 0 ] || ARGS=(--seconds 5)

bash scripts/setup.sh --ros            # includes cargo build --release --features ros
# shellcheck source=scripts/env.sh
. scripts/env.sh
echo "+ target/release/roqsim sim $WORLD ${ARGS[*]}" >&2
exec target/release/roqsim sim "$WORLD" "${ARGS[@]}"
