"""The `--view` window, on a virtual X display (Xvfb), driven the way a person drives it.

python-xlib talks to the display as any X client does: it finds the window by its title, reads
its pixels (XGetImage), presses keys through the XTEST extension (what a keyboard does) and closes
the window with WM_DELETE_WINDOW (what a window manager sends for the title bar's close button).
/clock is read with rclpy.
"""

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

Xlib = pytest.importorskip("Xlib", reason="python-xlib (scripts/requirements.txt) is missing")
from Xlib import X, XK, display as xdisplay  # noqa: E402
from Xlib.ext import xtest  # noqa: E402
from Xlib.protocol import event as xevent  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
WORLD = "worlds/demo.yaml"  # five boxes dropping in the empty room
# The window test's world: demo.yaml plus a TurtleBot circling on its own. The boxes land within a
# second, before software GL has drawn the first frame, so they alone cannot show that the picture
# follows the simulation.
MOTION = "test/e2e/worlds/view_motion.yaml"


@pytest.fixture
def xvfb():
    if not shutil.which("Xvfb"):
        pytest.fail("Xvfb missing: scripts/setup.sh installs it (apt xvfb)")
    n = next(n for n in range(140, 240)
             if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists())
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        assert proc.poll() is None and time.monotonic() < end, "Xvfb did not start"
        time.sleep(0.05)
    yield f":{n}"
    proc.terminate()
    proc.wait(timeout=10)


def find_window(d, title, timeout=60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        def walk(w):
            try:
                name = w.get_wm_name()
            except Exception:  # a window closing mid-walk
                return None
            if name and title in name:
                return w
            for c in w.query_tree().children:
                found = walk(c)
                if found:
                    return found
            return None
        w = walk(d.screen().root)
        if w is not None:
            return w
        time.sleep(0.2)
    raise AssertionError(f"no window titled {title!r} within {timeout} s")


def grab(w):
    """The window's pixels as an HxWx3 uint8 array (RGB)."""
    g = w.get_geometry()
    raw = w.get_image(0, 0, g.width, g.height, X.ZPixmap, 0xFFFFFFFF).data
    a = np.frombuffer(raw, dtype=np.uint8).reshape(g.height, g.width, 4)
    return a[:, :, [2, 1, 0]]


def press(d, w, keysym):
    focus = d.get_input_focus().focus
    if getattr(focus, "id", None) != w.id:
        # as a person clicks a window before typing: winit drops a key that reaches the window
        # before it has processed gaining the focus
        w.set_input_focus(X.RevertToParent, X.CurrentTime)
        d.sync()
        time.sleep(0.5)
    code = d.keysym_to_keycode(keysym)
    xtest.fake_input(d, X.KeyPress, code)
    d.sync()
    time.sleep(0.05)
    xtest.fake_input(d, X.KeyRelease, code)
    d.sync()


def close(d, w):
    proto = d.intern_atom("WM_PROTOCOLS")
    delete = d.intern_atom("WM_DELETE_WINDOW")
    ev = xevent.ClientMessage(window=w, client_type=proto, data=(32, [delete, X.CurrentTime, 0, 0, 0]))
    w.send_event(ev, event_mask=X.NoEventMask)
    d.flush()


def clock_now(ros, Clock, timeout=10.0):
    got = ros.collect("/clock", Clock)
    ros.spin_until(lambda: len(got) > 0, timeout, "a /clock message")
    return got[-1].clock.sec + got[-1].clock.nanosec * 1e-9


def test_window_shows_steps_pauses_and_closes_cleanly(roqsim, ros, xvfb, tmp_path):
    from rosgraph_msgs.msg import Clock

    summary = tmp_path / "summary.json"
    sim = roqsim("sim", MOTION, "--view", "azimuth=120,elevation=-20,distance=2.5",
                 "--ros", "--profile", "--seed", "1", "--summary", summary, env={"DISPLAY": xvfb},
                 wait_ready="/clock", timeout=60)
    d = xdisplay.Display(xvfb)
    w = find_window(d, f"roqsim: {MOTION}")
    # The first frames may not be drawn yet (software GL): wait for a picture, 30 s at most.
    end = time.monotonic() + 30
    first = grab(w).astype(np.int16)
    while first.std() <= 10.0 and time.monotonic() < end:
        time.sleep(0.2)
        first = grab(w).astype(np.int16)
    # Not blank: the room, the boxes and the sky take many colours.
    assert first.std() > 10.0, f"blank window: pixel std {first.std():.2f}"
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 50
    time.sleep(1.0)
    second = grab(w).astype(np.int16)
    changed = np.abs(second - first).max(axis=2) > 30
    print(f"window {first.shape[1]}x{first.shape[0]}: std {first.std():.1f}, "
          f"{changed.mean() * 100:.2f} % of pixels changed while stepping")
    assert changed.mean() > 0.001, "the picture did not change while the robot drives"

    # Space pauses: /clock stands still (and the picture with it).
    press(d, w, XK.string_to_keysym("space"))
    # The pause lands at the physics thread's next loop (after a frame it may be rendering on a
    # loaded machine): wait for /clock to stop, then it must stay still.
    end = time.monotonic() + 15
    t0 = clock_now(ros, Clock)
    while True:
        ros.spin(0.5)
        t1 = clock_now(ros, Clock)
        if t1 == t0:
            break
        assert time.monotonic() < end, f"/clock still moving 15 s after Space ({t0} -> {t1})"
        t0 = t1
    ros.spin(1.0)
    t1 = clock_now(ros, Clock)
    paused = grab(w).astype(np.int16)
    time.sleep(0.5)
    paused2 = grab(w).astype(np.int16)
    print(f"paused: /clock {t0:.3f} -> {t1:.3f} s")
    assert t1 == t0, f"/clock moved while paused: {t0} -> {t1}"
    assert (np.abs(paused2 - paused).max(axis=2) > 30).mean() < 0.001
    # Right arrow steps once while paused: /clock advances by one physics step (2 ms).
    press(d, w, XK.string_to_keysym("Right"))
    ros.spin(0.5)
    t2 = clock_now(ros, Clock)
    print(f"one step: /clock {t1:.3f} -> {t2:.3f} s")
    assert abs((t2 - t1) - 0.002) < 1e-6, f"one step moved /clock by {t2 - t1} s"
    # Space again plays.
    press(d, w, XK.string_to_keysym("space"))
    ros.spin(1.0)
    assert clock_now(ros, Clock) > t2 + 0.2

    # Closing the window ends the run: exit 0, the summary, every shutdown hook ran once.
    close(d, w)
    assert sim.wait(timeout=30) == 0
    out = sim.output()
    assert "run finished (window closed)" in out, out[-3000:]
    # --summary is written by a windowed run as by a headless one.
    import json
    summ = json.loads(summary.read_text())
    print(f"summary: {summ['reason']}, {summ['steps']} steps")
    assert summ["reason"] == "window closed" and summ["steps"] > 500 and summ["seed"] == 1
    # The --profile table: "<address> (<plugin>)  <hook>  <avg µs>  <calls>".
    for addr in "abcde":
        assert any(line.split()[:1] == [addr] and line.split()[2:3] == ["shutdown"]
                   and line.split()[-1] == "1"
                   for line in out.splitlines()), f"no shutdown of `{addr}` in the profile:\n{out[-3000:]}"


def test_view_without_display_is_refused_naming_display(roqsim_bin):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    p = subprocess.run([roqsim_bin, "sim", WORLD, "--view"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "error: --view needs a display, and DISPLAY is not set" in p.stderr, p.stderr


def test_world_that_fails_to_load_with_view_exits_without_a_window(roqsim_bin, xvfb):
    p = subprocess.run([roqsim_bin, "sim", WORLD, "--view", "zoom=2"], cwd=ROOT,
                       env={**os.environ, "DISPLAY": xvfb}, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "sim.view" in p.stderr and "zoom" in p.stderr, p.stderr


def test_panel_flags_need_the_window(roqsim_bin):
    for flag, what in [("--left-ui", "MuJoCo's left panel (the viewer's toggles and its Actuator, Joint, "
                                     "Equality and Group windows)"),
                       ("--right-ui", "roqsim's run panel")]:
        p = subprocess.run([roqsim_bin, "sim", WORLD, flag], cwd=ROOT, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2
        assert p.stderr.strip() == (
            f"error: {flag} shows {what} in the --view window: add --view, or drop {flag}"), p.stderr


def wait_picture(w, timeout=30.0):
    """The window's first drawn picture (software GL may take a while)."""
    end = time.monotonic() + timeout
    a = grab(w).astype(np.int16)
    while a.std() <= 10.0 and time.monotonic() < end:
        time.sleep(0.2)
        a = grab(w).astype(np.int16)
    assert a.std() > 10.0, f"blank window: pixel std {a.std():.2f}"
    return a


def wait_clock(ros, Clock, t, timeout=60.0):
    end = time.monotonic() + timeout
    now = clock_now(ros, Clock)
    while now < t:
        assert time.monotonic() < end, f"/clock stayed below {t} s (at {now})"
        ros.spin(0.1)
        now = clock_now(ros, Clock)
    return now


# A red 0.2 m cube where the camera looks, nothing moving: the window must show exactly what
# `roqsim render` draws of it.
STILL = """sim:
  timestep: 0.002
  pacing: realtime
  seed: 1
  view: {lookat: [0.0, 0.0, 0.2], distance: 2.0, azimuth: 90, elevation: -20}
components:
  - box: {pose: {position: {x: 0.4, y: 0.0, z: 0.2}}, size: [0.2, 0.2, 0.2], color: [1.0, 0.0, 0.0]}
    name: red
"""


def test_window_is_the_shared_renderers_frame_with_no_left_panel(roqsim, roqsim_bin, xvfb, tmp_path):
    world = tmp_path / "still.yaml"
    world.write_text(STILL)
    shot = tmp_path / "shot.png"
    p = subprocess.run([roqsim_bin, "render", world, "--size", "1280x720", "--out", shot], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    import cv2
    want = cv2.imread(str(shot))[:, :, ::-1].astype(np.int16)
    sim = roqsim("sim", world, "--view", env={"DISPLAY": xvfb}, wait_ready=r"t = ", timeout=60)
    d = xdisplay.Display(xvfb)
    w = find_window(d, f"roqsim: {world}")
    got = wait_picture(w)
    time.sleep(0.5)
    got = grab(w).astype(np.int16)
    assert got.shape == (720, 1280, 3), got.shape
    diff = np.abs(got - want).max(axis=2)
    left = diff[:, :320]
    print(f"window vs render: mean |diff| {diff.mean():.3f}, max {diff.max()}, "
          f"{(diff > 8).mean() * 100:.3f} % of pixels over 8; left quarter mean {left.mean():.3f}")
    # The same frame from the same renderer and camera: the whole window, its left quarter too
    # (where MuJoCo's viewer opens its panel), matches the render.
    assert (diff > 8).mean() < 0.001 and left.mean() < 0.5
    close(d, w)
    assert sim.wait(timeout=30) == 0


def test_track_keeps_a_driving_robot_centred(roqsim, ros, xvfb, tmp_path):
    from rosgraph_msgs.msg import Clock
    import json

    world = tmp_path / "track.yaml"
    world.write_text("""sim:
  timestep: 0.002
  pacing: realtime
  seed: 1
  view: {distance: 2.0, azimuth: 90, elevation: -60, track: robot}
components:
  - spawn_robot: {model: turtlebot4}
    name: robot
    components:
      - diff_drive: {test_cmd: [0.5, 0.0]}
""")
    summary = tmp_path / "summary.json"
    sim = roqsim("sim", world, "--view", "--ros", "--summary", summary, env={"DISPLAY": xvfb},
                 wait_ready="/clock", timeout=60)
    d = xdisplay.Display(xvfb)
    w = find_window(d, f"roqsim: {world}")
    wait_picture(w)
    t_first = clock_now(ros, Clock)
    first = grab(w).astype(np.int16)
    wait_clock(ros, Clock, t_first + 6.0)
    last = grab(w).astype(np.int16)
    close(d, w)
    assert sim.wait(timeout=30) == 0
    x = json.loads(summary.read_text())["poses"]["robot"]["position"][0]
    h, wd = last.shape[:2]
    centre = lambda a: a[h // 2 - 40:h // 2 + 40, wd // 2 - 40:wd // 2 + 40]
    # the floor: the frame's median colour away from the centre
    floor = np.median(last[:h // 4].reshape(-1, 3), axis=0)
    robot_px = (np.abs(centre(last) - floor).max(axis=2) > 30).mean()
    same = np.abs(centre(last) - centre(first)).mean()
    print(f"robot at x {x:.2f} m; centre: {robot_px * 100:.1f} % robot pixels, "
          f"mean |diff| to the first frame {same:.2f} (first at t {t_first:.2f} s)")
    assert x > 1.5, f"the robot drove only {x} m"
    assert robot_px > 0.5, "the robot left the centre of the window"
    assert same < 20.0, "the centre does not show the robot as it did at the start"


SPIN = """sim:
  timestep: 0.002
  pacing: realtime
  world: empty_room
  seed: 1
  view: {distance: 2.0, azimuth: 180, elevation: -20, track: robot, follow_heading: FOLLOW}
components:
  - spawn_robot: {model: turtlebot4}
    name: robot
    components:
      - diff_drive: {test_cmd: [0.0, 1.0]}
"""


@pytest.mark.parametrize("follow", [True, False])
def test_follow_heading_turns_the_view_with_the_robot(roqsim, ros, xvfb, tmp_path, follow):
    from rosgraph_msgs.msg import Clock

    world = tmp_path / "spin.yaml"
    world.write_text(SPIN.replace("FOLLOW", "true" if follow else "false"))
    sim = roqsim("sim", world, "--view", "--ros", env={"DISPLAY": xvfb}, wait_ready="/clock",
                 timeout=60)
    d = xdisplay.Display(xvfb)
    w = find_window(d, f"roqsim: {world}")
    wait_picture(w)
    t0 = clock_now(ros, Clock)
    first = grab(w).astype(np.int16)
    wait_clock(ros, Clock, t0 + 1.0)  # about 1 rad of turning
    second = grab(w).astype(np.int16)
    close(d, w)
    assert sim.wait(timeout=30) == 0
    h, wd = first.shape[:2]
    border = np.ones((h, wd), bool)
    border[h // 4:3 * h // 4, wd // 4:3 * wd // 4] = False  # the robot turns in the middle
    changed = (np.abs(second - first).max(axis=2) > 30)[border].mean()
    print(f"follow_heading {follow}: {changed * 100:.2f} % of the room around the robot changed")
    if follow:
        assert changed > 0.05, "the view did not turn with the robot"
    else:
        assert changed < 0.03, "the view moved without follow_heading"
