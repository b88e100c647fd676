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
    w.set_input_focus(X.RevertToParent, X.CurrentTime)
    d.sync()
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
    time.sleep(0.5)
    t0 = clock_now(ros, Clock)
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


def test_panel_flags_that_would_do_nothing_are_refused(roqsim_bin):
    p = subprocess.run([roqsim_bin, "sim", WORLD, "--view", "--left-ui"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "error: --left-ui: the window's left panel (the viewer's own UI: toggles, the Actuator, Joint, "
        "Equality and Group windows) always opens expanded, and mujoco-rs 7.0.0's viewer has no switch "
        "to start it shown or hidden, so the flag would change nothing; drop it and press X in the "
        "window to hide or show that panel"), p.stderr
    p = subprocess.run([roqsim_bin, "sim", WORLD, "--right-ui"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "error: --right-ui shows roqsim's run panel in the --view window: add --view, or drop --right-ui"), p.stderr
