#!/usr/bin/env bash
# The demo: set up (idempotent), build the ROS-enabled binary, then show what roqsim does.
#   scripts/demo.sh        -> worlds/first_run.yaml on ROS 2, recorded: a rclpy peer
#                             (scripts/demo_peer.py) drives the TurtleBot through the open door
#                             while the arm picks a parcel off the belt, fires the two faults and
#                             reads back the measurements; then a picture and a video of that run
#                             drawn from its recording (`roqsim render run.mcap`), into
#                             demo-output/, and a summary of what was measured.
#   scripts/demo.sh worlds/other.yaml [--seconds 10 ...]  -> just `roqsim sim` that world
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

bash scripts/setup.sh --ros            # includes cargo build --release --features ros
# shellcheck source=scripts/env.sh
. scripts/env.sh
BIN=target/release/roqsim

if [ $# -gt 0 ]; then
  WORLD="$1"
  shift
  ARGS=("$@")
  [ "${#ARGS[@]}" -gt 0 ] || ARGS=(--seconds 5)
  echo "+ $BIN sim $WORLD ${ARGS[*]}" >&2
  exec "$BIN" sim "$WORLD" "${ARGS[@]}"
fi

WORLD=worlds/first_run.yaml
OUT="$ROOT/demo-output"
mkdir -p "$OUT"
# Keep the demo's ROS graph on this machine and off other sessions' default domain.
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-57}"

# 1. The run, on ROS 2 (recorded): roqsim in real time with simulation_interfaces served; a rclpy
#    peer (scripts/demo_peer.py) drives it like any ROS node would.
echo "+ $BIN sim $WORLD --ros --sim-control --seconds 30 --record demo-output/run.mcap   (log: demo-output/sim.log)" >&2
rm -f "$OUT/measured.json" "$OUT/run.mcap"
"$BIN" sim "$WORLD" --ros --sim-control --seconds 30 --record "$OUT/run.mcap" >"$OUT/sim.log" 2>&1 &
SIM_PID=$!
trap 'kill "$SIM_PID" 2>/dev/null || true' EXIT
python3 scripts/demo_peer.py "$OUT/measured.json" \
  || echo "demo: the ROS peer failed (above); the picture and video follow anyway" >&2
kill -INT "$SIM_PID" 2>/dev/null || true
wait "$SIM_PID" || true
trap - EXIT

# 2. A picture and a video of that run, drawn offscreen from its recording (no window, no ROS):
#    the picture when the arm holds the parcel and the base has crossed the door, the video from
#    the peer's start to its end. Without a measured run, the world alone (the belt runs by itself).
TIMES="$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["sim_times"]
print("%.3f %.3f" % (t["done"], max(0.0, t["start"] - 0.5)))
' "$OUT/measured.json" 2>/dev/null || true)"
if [ -n "$TIMES" ] && [ -s "$OUT/run.mcap" ]; then
  # The video runs from the peer's start to the recording's end (no --seconds: a clip past the
  # last recorded sample is refused).
  read -r AT FROM <<<"$TIMES"
  SRC="$OUT/run.mcap"
  LEN_ARGS=()
else
  AT=3 FROM=0
  SRC="$WORLD"
  LEN_ARGS=(--seconds 6)
fi
echo "+ $BIN render ${SRC#"$ROOT"/} --at $AT --size 1280x720 --out demo-output/first_run.png" >&2
"$BIN" render "$SRC" --at "$AT" --size 1280x720 --out "$OUT/first_run.png" >"$OUT/render.json"
echo "+ $BIN render ${SRC#"$ROOT"/} --at $FROM --video demo-output/first_run.mp4 ${LEN_ARGS[*]} --fps 30 --overlay clock" >&2
"$BIN" render "$SRC" --at "$FROM" --video "$OUT/first_run.mp4" "${LEN_ARGS[@]}" --fps 30 --size 1280x720 \
  --overlay clock >"$OUT/video.json"

# 3. What was measured.
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
try:
    m = json.load(open(f"{out}/measured.json"))
except FileNotFoundError:
    m = None
shot = json.load(open(f"{out}/render.json"))
clip = json.load(open(f"{out}/video.json"))
f = lambda v, d=3: "n/a" if v is None else f"{v:.{d}f}"
print("\n== roqsim: what this run measured ==")
if m is None:
    print("the ROS run measured nothing: its peer failed (see above and demo-output/sim.log)")
    m = {"faults": {}, "parcels_start": {}}
if "odom_start" in m:
    print(f"TurtleBot: drove {f(m['distance_driven_m'], 2)} m by odometry, "
          f"x {f(m['odom_start'][0], 2)} -> {f(m['odom_end'][0], 2)} "
          f"({'through' if m['through_door'] else 'NOT through'} door_1 at x 8.00, "
          f"door openness {f(m['door_openness'], 2)})")
    print(f"  world x {f(m['world_start'][0], 2)} -> {f(m['world_end'][0], 2)} (ground truth from /get_entity_state)")
    print(f"  min clearance {f(m['min_clearance_m'])} m, upright throughout: {m['upright_throughout']}, "
          f"battery {' -> '.join(f(b * 100, 2) + ' %' for b in m['battery_percentage'] or [])}")
k = m.get("pick")
if k and "parcel_lift_m" in k:
    g = k["gripper"]
    print(f"UR5e-class arm: took {k['parcel']} off the belt at x {k['parcel_x_at_grasp']:.3f}, the gripper "
          f"{'stalled on it' if g['stalled'] else 'closed'} at {g['position_m'] * 1000:.1f} mm per jaw "
          f"({g['effort_n']:.1f} N), lifted it {k['parcel_lift_m'] * 1000:.1f} mm")
    held, after = m["parcels_end"][k["parcel"]], m["picked_after_grip_fault"]
    moved = sum((a - b) ** 2 for a, b in zip(after, held)) ** 0.5
    print(f"  after /grip_fault/override the pads lost their friction: {k['parcel']} slipped out of "
          f"the jaws, {moved:.2f} m from where it was held (now at z {after[2]:.3f} m)")
for p, s in m["parcels_start"].items():
    e = m["parcels_end"][p]
    print(f"{p}: belt carried it {e[0] - s[0]:.3f} m along x (x {s[0]:.3f} -> {e[0]:.3f}, z {e[2]:.3f})")
for srv, r in m["faults"].items():
    print(f"{srv} -> success={r['success']} message={r['message']!r}")
print(f"picture: {shot['out']} at t={shot['time']} s ({shot['size'][0]}x{shot['size'][1]})")
print(f"video:   {clip['video']}: {clip['frames']} frames at {clip['fps']} fps, "
      f"sim {clip['from']} -> {clip['to']} s")
print(f"everything is in {out}/ (sim.log, measured.json, render.json, video.json)")
PY
