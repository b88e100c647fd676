#!/usr/bin/env bash
# The campaign row: trials per minute of one ROS-free campaign run with --jobs 1 and with
# --jobs <cores>, and the speed-up between them. Each trial is its own `roqsim sim` process (the
# TurtleBot 4 driving to a goal under the navigator, 20 s of sim time, lidar noise as the factor).
#
#   bench/campaign.sh [--trials N] [--seconds S] [--no-save]
#
# Builds target/release/roqsim (ROS-free) if missing; prints a Markdown report and writes it to
# bench/results/<date>-campaign-<shortcommit>.md. Reports only; asserts no timing.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC1091
. scripts/env.sh >/dev/null
REPS=4 SECONDS_SIM=20 SAVE=1
while [ $# -gt 0 ]; do
  case "$1" in
    --trials) REPS=$(( ($2 + 2) / 3 )); shift 2 ;;
    --seconds) SECONDS_SIM="$2"; shift 2 ;;
    --no-save) SAVE=0; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
BIN="$ROOT/target/release/roqsim"
[ -x "$BIN" ] || cargo build --release --bin roqsim >&2
CORES="$(nproc)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cat > "$WORK/world.yaml" <<'EOF'
sim: {timestep: 0.002, world: empty_room}
components:
  - spawn_robot: {model: turtlebot4, pose: {position: {x: 0.0, y: 0.0}}}
    name: robot
    components:
      - contact_monitor: {}
      - navigator: {speed: 0.3, goals: [[3.0, 2.0], [-2.0, 1.0]], arrival_radius: 0.2}
EOF
cat > "$WORK/campaign.yaml" <<EOF
world: world.yaml
factors:
  components.robot.rplidar.lidar.range_stddev: [0.0, 0.01, 0.05]
repetitions: $REPS
seed: 1
limits: {seconds: $SECONDS_SIM}
collect: {poses: [robot]}
EOF
TRIALS=$((3 * REPS))
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
run() {  # run JOBS -> wall seconds
  local t0 t1
  rm -rf "$WORK/out$1"
  t0=$(date +%s.%N)
  (cd "$WORK" && "$BIN" campaign run campaign.yaml -o "out$1" --jobs "$1" -q >&2)
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
echo "campaign row: $TRIALS trials of $SECONDS_SIM s, --jobs 1 then --jobs $CORES" >&2
W1="$(run 1)"
WN="$(run "$CORES")"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 0 $((TRIALS - 1))); do
  f="$(printf 'trials/%04d/results.json' "$i")"
  cmp -s "$WORK/out1/$f" "$WORK/out$CORES/$f" || { echo "trial $i differs between the runs" >&2; exit 1; }
done
REPORT="$(python3 - "$W1" "$WN" "$TRIALS" "$CORES" <<'EOF'
import sys
w1, wn, n, cores = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
r1, rn = 60 * n / w1, 60 * n / wn
print("| jobs | wall (s) | trials/min | speed-up |")
print("| ---: | ---: | ---: | ---: |")
print(f"| 1 | {w1:.2f} | {r1:.1f} | 1.00 |")
print(f"| {cores} | {wn:.2f} | {rn:.1f} | {rn / r1:.2f} ({rn / r1 / cores:.2f} × cores) |")
EOF
)"
COMMIT="$(git rev-parse --short HEAD)"
TEXT="# roqsim benchmark, campaign row — $(date +%F) — commit $COMMIT

- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') ($CORES logical CPUs visible); load average before $LOAD_BEFORE, after $LOAD_AFTER
- \`roqsim campaign run\` (release build), $TRIALS trials (lidar noise [0, 0.01, 0.05] × $REPS repetitions), each a
  \`roqsim sim\` process: the TurtleBot 4 under the navigator in the empty room, $SECONDS_SIM s of sim time at 0.002 s
- wall time of the whole command (validation of every trial's world included); every trial's
  results.json is bitwise the same in both runs
- command: \`bench/campaign.sh --trials $TRIALS --seconds $SECONDS_SIM\`

$REPORT
"
echo "$TEXT"
if [ "$SAVE" = 1 ]; then
  mkdir -p bench/results
  echo "$TEXT" > "bench/results/$(date +%F)-campaign-$COMMIT.md"
fi
