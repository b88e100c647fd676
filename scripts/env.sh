# shellcheck shell=bash
# roqsim environment: source it from bash (`. scripts/env.sh`); it is safe under `set -u`.
#
# Everything is computed relative to the repository root (the folder above this file) and
# points into the project-local deps prefix `.deps/` that `scripts/setup.sh` fills:
#   .deps/mujoco/{lib,include}   MuJoCo 3.17.0 from the PyPI wheel
#   .deps/venv                   Python 3.11 venv: mujoco, pytest, numpy, pyyaml (+ ROS 2 Jazzy wheels with --ros)
#   .deps/ros_ifaces/install     interface packages from interfaces/*/ that the environment lacks (merged install)
#   .deps/colcon/install         `colcon build` of the root package (setup.sh --colcon)
#
# Exports always: ROQSIM_ROOT, ROQSIM_DEPS, MUJOCO_DYNAMIC_LINK_DIR, HOME (default), PATH (+venv/bin
# when the venv exists). When the venv holds the ROS wheels, also: ROS_DISTRO, RMW_IMPLEMENTATION,
# ROS_AUTOMATIC_DISCOVERY_RANGE (these three only when unset: jazzy, rmw_fastrtps_cpp, LOCALHOST),
# AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH, LD_LIBRARY_PATH, PYTHONPATH,
# LIBCLANG_PATH, IDL_PACKAGE_FILTER, ROQSIM_HAVE_ROS=1.
# Sourcing it twice gives the same result (entries are not duplicated).

# --- the one place that lists the ROS interface packages r2r generates Rust code for --------
# Only those present in the environment (venv wheels, interfaces/ overlay, or a system ROS) end up
# in IDL_PACKAGE_FILTER.
ROQSIM_IDL_PACKAGES=(
  std_msgs std_srvs builtin_interfaces geometry_msgs sensor_msgs nav_msgs rosgraph_msgs
  trajectory_msgs action_msgs unique_identifier_msgs tf2_msgs ackermann_msgs control_msgs
  controller_manager_msgs simulation_interfaces lifecycle_msgs nav2_msgs vision_msgs
)

ROQSIM_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROQSIM_DEPS="$ROQSIM_ROOT/.deps"
ROQSIM_VENV="$ROQSIM_DEPS/venv"
ROQSIM_IFACE_PREFIX="$ROQSIM_DEPS/ros_ifaces/install"
ROQSIM_COLCON_PREFIX="$ROQSIM_DEPS/colcon/install"
ROQSIM_PYVER=3.11
export ROQSIM_ROOT ROQSIM_DEPS ROQSIM_VENV ROQSIM_IFACE_PREFIX ROQSIM_COLCON_PREFIX

# _roqsim_prepend VAR DIR: put DIR first in the colon list VAR (removing an older copy of it).
_roqsim_prepend() {
  local var="$1" dir="$2" cur out="" item
  cur="${!var:-}"
  local IFS=:
  for item in $cur; do
    if [ -n "$item" ] && [ "$item" != "$dir" ]; then out="${out:+$out:}$item"; fi
  done
  printf -v "$var" '%s' "$dir${out:+:$out}"
  export "${var?}"
}

export MUJOCO_DYNAMIC_LINK_DIR="$ROQSIM_DEPS/mujoco/lib"
# rcl logging needs HOME; CI and `env -i` may not set it.
export HOME="${HOME:-/root}"

if [ -x "$ROQSIM_VENV/bin/python" ]; then
  _roqsim_prepend PATH "$ROQSIM_VENV/bin"
fi

if [ -e "$ROQSIM_VENV/share/ament_index/resource_index/packages/rclpy" ]; then
  export ROQSIM_HAVE_ROS=1
  # Defaults only: a value the caller already set (another RMW, a wider discovery range) wins.
  export ROS_DISTRO="${ROS_DISTRO:-jazzy}"
  export ROS_VERSION="${ROS_VERSION:-2}"
  export ROS_PYTHON_VERSION="${ROS_PYTHON_VERSION:-3}"
  export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
  export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"

  # Prefix order: interfaces overlay, then the venv, then whatever AMENT_PREFIX_PATH held before.
  _roqsim_prepend AMENT_PREFIX_PATH "$ROQSIM_VENV"
  _roqsim_prepend CMAKE_PREFIX_PATH "$ROQSIM_VENV"
  if [ -d "$ROQSIM_IFACE_PREFIX/share" ]; then
    _roqsim_prepend AMENT_PREFIX_PATH "$ROQSIM_IFACE_PREFIX"
    _roqsim_prepend CMAKE_PREFIX_PATH "$ROQSIM_IFACE_PREFIX"
  fi

  _roqsim_site="$ROQSIM_VENV/lib/python$ROQSIM_PYVER/site-packages"
  for _roqsim_d in "$_roqsim_site"/ros_*.libs; do
    if [ -d "$_roqsim_d" ]; then _roqsim_prepend LD_LIBRARY_PATH "$_roqsim_d"; fi
  done
  _roqsim_prepend LD_LIBRARY_PATH "$ROQSIM_VENV/lib"
  if [ -d "$ROQSIM_IFACE_PREFIX/lib" ]; then
    _roqsim_prepend LD_LIBRARY_PATH "$ROQSIM_IFACE_PREFIX/lib"
  fi
  if [ -d "$ROQSIM_IFACE_PREFIX/lib/python$ROQSIM_PYVER/site-packages" ]; then
    _roqsim_prepend PYTHONPATH "$ROQSIM_IFACE_PREFIX/lib/python$ROQSIM_PYVER/site-packages"
  fi
  if [ -d "$ROQSIM_COLCON_PREFIX/roqsim/lib" ]; then
    _roqsim_prepend LD_LIBRARY_PATH "$ROQSIM_COLCON_PREFIX/roqsim/lib"
  fi

  # libclang for r2r's bindgen: prefer Debian 12's llvm-14, else the newest llvm-N present.
  if [ -z "${LIBCLANG_PATH:-}" ]; then
    for _roqsim_d in /usr/lib/llvm-14/lib $(ls -d /usr/lib/llvm-*/lib 2>/dev/null | sort -rV); do
      if ls "$_roqsim_d"/libclang*.so* >/dev/null 2>&1; then export LIBCLANG_PATH="$_roqsim_d"; break; fi
    done
  fi

  # IDL_PACKAGE_FILTER: the packages of ROQSIM_IDL_PACKAGES that some prefix provides, plus the
  # interface packages they depend on.
  # Dependencies are added (r2r needs every package a listed one refers to in the filter too).
  _roqsim_idl_filter() {
    local IFS=: p d dep seen=" " out=""
    local -a queue=("${ROQSIM_IDL_PACKAGES[@]}")
    while [ "${#queue[@]}" -gt 0 ]; do
      p="${queue[0]}"
      queue=("${queue[@]:1}")
      case "$seen" in *" $p "*) continue ;; esac
      seen="$seen$p "
      for d in $AMENT_PREFIX_PATH; do
        if [ -e "$d/share/ament_index/resource_index/rosidl_interfaces/$p" ]; then
          out="${out:+$out;}$p"
          if [ -f "$d/share/$p/package.xml" ]; then
            while IFS= read -r dep; do
              queue+=("$dep")
            done < <(sed -n 's:.*<\(depend\|build_depend\|exec_depend\|build_export_depend\)>[[:space:]]*\([A-Za-z0-9_]*\)[[:space:]]*</.*:\2:p' "$d/share/$p/package.xml")
          fi
          break
        fi
      done
    done
    printf '%s' "$out"
  }
  IDL_PACKAGE_FILTER="$(_roqsim_idl_filter)"
  export IDL_PACKAGE_FILTER
  unset -f _roqsim_idl_filter
  unset _roqsim_site _roqsim_d
else
  export ROQSIM_HAVE_ROS=0
fi

# Leave no helper function behind in the caller's shell.
unset -f _roqsim_prepend
