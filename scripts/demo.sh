#!/usr/bin/env bash
# The demo: set up (idempotent), build the ROS-enabled binary, then show what roqsim does.
#   scripts/demo.sh        -> worlds/first_run.yaml on ROS 2: a rclpy peer drives the TurtleBot
#                             through the open door, fires the two faults, reads back the
#                             measurements; then a picture and a video of the world via
#                             `roqsim render`, into demo-output/, and a summary of what was measured.
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

# 1. The run, on ROS 2: roqsim in real time, a rclpy peer drives it like any ROS node would.
echo "+ $BIN sim $WORLD --ros --seconds 25   (log: demo-output/sim.log)" >&2
"$BIN" sim "$WORLD" --ros --seconds 25 >"$OUT/sim.log" 2>&1 &
SIM_PID=$!
trap 'kill "$SIM_PID" 2>/dev/null || true' EXIT
rm -f "$OUT/measured.json"
python3 - "$OUT/measured.json" <<'PY' || echo "demo: the ROS peer failed (above); the picture and video follow anyway" >&2
"""The demo's ROS peer: drive, fire faults, and report only what the run measured."""
import json, math, sys, time
import rclpy
from rclpy.node import Node
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from sensor_msgs.msg import BatteryState
from std_msgs.msg import Bool, Float64
from std_srvs.srv import SetBool
from simulation_interfaces.srv import GetEntityState

rclpy.init()
n = Node("roqsim_demo")
seen = {"odom": [], "door": [], "clearance": [], "upright": [], "battery": [], "clock": False}
n.create_subscription(Odometry, "/robot/odom", lambda m: seen["odom"].append(
    (m.pose.pose.position.x, m.pose.pose.position.y)), 10)
n.create_subscription(Float64, "/door_1/state", lambda m: seen["door"].append(m.data), 10)
n.create_subscription(Float64, "/robot/clearance", lambda m: seen["clearance"].append(m.data), 10)
n.create_subscription(Bool, "/robot/upright", lambda m: seen["upright"].append(m.data), 10)
n.create_subscription(BatteryState, "/robot/battery_state",
                      lambda m: seen["battery"].append(m.percentage), 10)
cmd = n.create_publisher(Twist, "/robot/cmd_vel", 10)
entity = n.create_client(GetEntityState, "/get_entity_state")


def spin_for(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(n, timeout_sec=0.05)


def call(client, req, what):
    if not client.wait_for_service(timeout_sec=20.0):
        sys.exit(f"demo: {what} never appeared")
    fut = client.call_async(req)
    rclpy.spin_until_future_complete(n, fut, timeout_sec=10.0)
    if fut.result() is None:
        sys.exit(f"demo: {what} did not answer")
    return fut.result()


def parcel(name):
    req = GetEntityState.Request()
    req.entity = name
    p = call(entity, req, "/get_entity_state").state.pose.position
    return [p.x, p.y, p.z]


deadline = time.monotonic() + 60.0
while not seen["odom"]:
    rclpy.spin_once(n, timeout_sec=0.1)
    if time.monotonic() > deadline:
        sys.exit("demo: no /robot/odom from roqsim within 60 s")
parcels0 = {p: parcel(p) for p in ("parcel_1", "parcel_2", "parcel_3")}
start = seen["odom"][-1]

# Drive 0.3 m/s straight ahead (-x, through the door at x = 8) for 10 s.
t = Twist()
t.linear.x = 0.3
end = time.monotonic() + 10.0
while time.monotonic() < end:
    cmd.publish(t)
    spin_for(0.1)
cmd.publish(Twist())
spin_for(1.5)
stop = seen["odom"][-1]
parcels1 = {p: parcel(p) for p in parcels0}

faults = {}
for name, srv in (("grip_fault", "/grip_fault/override"),
                  ("rplidar fault", "/robot/rplidar/lidar/override")):
    req = SetBool.Request()
    req.data = True
    r = call(n.create_client(SetBool, srv), req, srv)
    faults[srv] = {"success": r.success, "message": r.message}
spin_for(1.0)

out = {
    "odom_start": start, "odom_end": stop,
    "distance_driven_m": math.dist(start, stop),
    "through_door": start[0] > 8.0 > stop[0],
    "door_openness": seen["door"][-1] if seen["door"] else None,
    "min_clearance_m": min(seen["clearance"]) if seen["clearance"] else None,
    "upright_throughout": all(seen["upright"]) if seen["upright"] else None,
    "battery_percentage": [seen["battery"][0], seen["battery"][-1]] if seen["battery"] else None,
    "parcels_start": parcels0, "parcels_end": parcels1,
    "faults": faults,
}
json.dump(out, open(sys.argv[1], "w"), indent=1)
n.destroy_node()
rclpy.shutdown()
PY
kill -INT "$SIM_PID" 2>/dev/null || true
wait "$SIM_PID" || true
trap - EXIT

# 2. A picture and a video of the same world, offscreen (no window, no ROS needed).
echo "+ $BIN render $WORLD --at 3 --size 1280x720 --out demo-output/first_run.png" >&2
"$BIN" render "$WORLD" --at 3 --size 1280x720 --out "$OUT/first_run.png" >"$OUT/render.json"
echo "+ $BIN render $WORLD --video demo-output/first_run.mp4 --seconds 6 --fps 30 --overlay clock" >&2
"$BIN" render "$WORLD" --video "$OUT/first_run.mp4" --seconds 6 --fps 30 --size 1280x720 \
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
    print(f"  min clearance {f(m['min_clearance_m'])} m, upright throughout: {m['upright_throughout']}, "
          f"battery {' -> '.join(f(b * 100, 2) + ' %' for b in m['battery_percentage'] or [])}")
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
