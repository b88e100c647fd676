#!/usr/bin/env bash
# Run every roqsim test (this is what CI runs, through .ci/run):
#   0. scripts/setup.sh --ros --no-build       (idempotent; seconds on a ready machine)
#      fmt:     `cargo fmt --check` (rustfmt.toml; also what `colcon test` runs for the package)
#   1. core:    `cargo test` with NO ROS environment (env -i: PATH, HOME only), proving the
#               library and its tests need nothing but MuJoCo (.cargo/config.toml finds it)
#   2. ros:     `cargo build --release --features ros --bins --example custom_plugin` (the
#               out-of-tree plugin template, run by test/e2e/test_custom_plugin.py)
#      clippy:  `cargo clippy --release --all-targets --features ros -- -D warnings` (release, so
#               it reuses the ROS build's generated message code)
#   3. colcon:  `colcon build` of the root package (scripts/setup.sh --colcon; reuses target/)
#      colcon test: `colcon test` of the root package — colcon-ros-cargo's `cargo test` (no cargo
#               arguments: the core stage's debug test binaries, run again in colcon's environment)
#               and `cargo fmt --check` — then `colcon test-result --verbose` on its two cases
#               (docs/ros.md#colcon-test; its tests are not added to the totals: they are stage 1's)
#      ros:     `cargo test --release --features ros --lib --test ros_bridge --test ros_nav2_msgs`
#               (the ROS-gated unit tests, the in-process bridge test, r2r's nav2_msgs; the
#               ROS-free integration tests already ran in stage 1, so they are not rebuilt in
#               release here)
#   4. e2e:     pytest test/e2e, the whole run inside a private network namespace
#               (`unshare --net`, lo up with multicast), against target/release/roqsim
# Every stage runs even when an earlier one failed (except that 3 and 4 need 2); the script
# exits non-zero if any stage failed. Long logs go to .deps/logs/test-*.log; the runners' own
# summary lines are printed, then one closing line with the totals.
#
# Options: --no-setup (skip stage 0), pytest arguments after `--` (e.g. -- -k clock -x).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
LOGS="$ROOT/.deps/logs"

RUN_SETUP=1
PYTEST_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-setup) RUN_SETUP=0; shift ;;
    --) shift; PYTEST_ARGS=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

T0=$(date +%s)
say() { printf '\n=== [test %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }

if [ "$RUN_SETUP" = 1 ]; then
  say "setup (scripts/setup.sh --ros --no-build)"
  bash "$ROOT/scripts/setup.sh" --ros --no-build
fi
mkdir -p "$LOGS"

FAILED=()
PASSED_N=0 FAILED_N=0 SKIPPED_N=0

# cargo_summary LOG: print cargo's per-binary result lines (with the binary they belong to) and
# add them to the totals.
cargo_summary() {
  local log="$1" line bin="" p f i
  while IFS= read -r line; do
    case "$line" in
      *"Running "*|*"Doc-tests "*) bin="$(echo "$line" | sed -E 's/^ *(Running|Doc-tests) +//; s/ \(.*//')" ;;
      "test result:"*)
        printf '  %-60s %s\n' "${bin##*/}" "$line"
        p="$(echo "$line" | sed -nE 's/.* ([0-9]+) passed.*/\1/p')"
        f="$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')"
        i="$(echo "$line" | sed -nE 's/.* ([0-9]+) ignored.*/\1/p')"
        PASSED_N=$((PASSED_N + ${p:-0})); FAILED_N=$((FAILED_N + ${f:-0})); SKIPPED_N=$((SKIPPED_N + ${i:-0}))
        ;;
    esac
  done < "$log"
}

# cargo_stage NAME LOG CMD...: run a cargo command with output in LOG; summarize; on failure
# show the failing tests (or the compiler's errors).
cargo_stage() {
  local name="$1" log="$2"; shift 2
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  cargo_summary "$log"
  grep -E '^ *Finished ' "$log" | tail -n 1 || true
  if [ "$rc" != 0 ]; then
    FAILED+=("$name")
    echo "--- $name failed (exit $rc); full log: $log"
    if grep -q '^failures:' "$log"; then
      sed -n '/^failures:/,/^test result:/p' "$log" | head -n 150
    else
      grep -E -A12 '^error(\[|:)' "$log" | head -n 120 || true
      tail -n 30 "$log"
    fi
    return 1
  fi
}

# ---------------------------------------------------------------------------------------------
say "fmt: cargo fmt --check"
if ! cargo fmt --check >"$LOGS/test-fmt.log" 2>&1; then
  FAILED+=(fmt)
  echo "--- fmt failed: run \`cargo fmt\`; the first differences:"
  head -n 40 "$LOGS/test-fmt.log"
else
  echo "  formatted"
fi

# ---------------------------------------------------------------------------------------------
say "core: cargo test (no ROS environment)"
CLEAN_ENV=(env -i "PATH=$(dirname "$(command -v cargo)"):/usr/local/bin:/usr/bin:/bin" "HOME=${HOME:-/root}")
for v in CARGO_HOME RUSTUP_HOME RUSTUP_TOOLCHAIN CI TERM; do
  if [ -n "${!v:-}" ]; then CLEAN_ENV+=("$v=${!v}"); fi
done
CORE_OK=0
if cargo_stage core "$LOGS/test-core.log" "${CLEAN_ENV[@]}" cargo test --no-fail-fast; then
  CORE_OK=1
fi

# ---------------------------------------------------------------------------------------------
# shellcheck source=scripts/env.sh
. "$ROOT/scripts/env.sh"
ROS_BUILD_OK=0
say "ros: cargo build --release --features ros --bins --example custom_plugin"
if cargo_stage ros-build "$LOGS/test-ros-build.log" cargo build --release --features ros --bins --example custom_plugin; then
  ROS_BUILD_OK=1
fi

if [ "$ROS_BUILD_OK" = 1 ]; then
  say "clippy: cargo clippy --release --all-targets --features ros -- -D warnings"
  cargo_stage clippy "$LOGS/test-clippy.log" cargo clippy --release --all-targets --features ros -- -D warnings || true

  say "colcon: colcon build of the root package (ament install in .deps/colcon/install)"
  COLCON_OK=0
  if bash "$ROOT/scripts/setup.sh" --colcon; then
    COLCON_OK=1
  else
    FAILED+=(colcon)
  fi

  if [ "$COLCON_OK" = 1 ] && [ "$CORE_OK" = 1 ]; then
    say "colcon test: colcon test of the root package, then colcon test-result"
    # The colcon build stage's bases. colcon-ros-cargo runs `cargo test --target-dir build/roqsim`
    # (a symlink to target/) with no cargo arguments, i.e. the core stage's build: nothing is
    # rebuilt (its environment differs only in variables the ROS-free build does not read).
    # test-result walks build/roqsim itself: it does not descend into a symlink below its base.
    COLCON_BASE="$ROOT/.deps/colcon"
    rm -f "$COLCON_BASE/build/roqsim/cargo_test.xml"
    rc=0
    (cd "$COLCON_BASE" && "$ROQSIM_VENV/bin/colcon" --log-base log test --paths "$ROOT" \
      --packages-select roqsim --build-base build --install-base install) \
      >"$LOGS/test-colcon.log" 2>&1 || rc=$?
    (cd "$COLCON_BASE" && "$ROQSIM_VENV/bin/colcon" test-result --test-result-base build/roqsim \
      --verbose) 2>&1 | tee -a "$LOGS/test-colcon.log" || rc=$?
    if [ "$rc" != 0 ] || [ ! -f "$COLCON_BASE/build/roqsim/cargo_test.xml" ]; then
      FAILED+=(colcon-test)
      echo "--- colcon test failed (exit $rc); full log: $LOGS/test-colcon.log"
      tail -n 30 "$LOGS/test-colcon.log"
    fi
  fi

  say "ros: cargo test --release --features ros --lib --test ros_bridge --test ros_nav2_msgs"
  cargo_stage ros-test "$LOGS/test-ros-test.log" cargo test --release --features ros --no-fail-fast --lib --test ros_bridge --test ros_nav2_msgs || true
fi

# ---------------------------------------------------------------------------------------------
say "e2e: pytest test/e2e in a private network namespace"
E2E_TESTS="$(find test/e2e -type f \( -name 'test_*.py' -o -name '*_test.py' \) 2>/dev/null | wc -l)"
if [ "$ROS_BUILD_OK" != 1 ]; then
  echo "--- e2e not run: the ROS build failed"
  FAILED+=(e2e)
else
  NETNS=(unshare --net)
  [ "$(id -u)" = 0 ] || NETNS=(unshare --net --map-root-user)
  rc=0
  rm -f "$LOGS/test-e2e.xml"
  "${NETNS[@]}" bash -c '
      set -e
      ip link set lo up
      ip link set lo multicast on
      export ROQSIM_E2E_NETNS=1
      exec "$@"' _ \
    "$ROQSIM_VENV/bin/python" -m pytest test/e2e -q -rfE -p no:cacheprovider \
      --junitxml="$LOGS/test-e2e.xml" ${PYTEST_ARGS[@]+"${PYTEST_ARGS[@]}"} \
    2>&1 | tee "$LOGS/test-e2e.log" || rc=$?
  if [ "$rc" = 5 ] && [ "$E2E_TESTS" = 0 ]; then
    echo "--- no e2e tests exist yet (pytest exit 5 accepted)"
  elif [ "$rc" != 0 ]; then
    FAILED+=(e2e)
  fi
  if [ -f "$LOGS/test-e2e.xml" ]; then
    p=0 f=0 s=0
    read -r p f s < <("$ROQSIM_VENV/bin/python" - "$LOGS/test-e2e.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
r = ET.parse(sys.argv[1]).getroot()
suites = [r] if r.tag == "testsuite" else list(r)
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
k = sum(int(s.get("skipped", 0)) for s in suites)
print(t - f - k, f, k)
EOF
    )
    PASSED_N=$((PASSED_N + p)); FAILED_N=$((FAILED_N + f)); SKIPPED_N=$((SKIPPED_N + s))
  fi
fi

# ---------------------------------------------------------------------------------------------
say "summary"
if [ "${#FAILED[@]}" -gt 0 ]; then
  echo "FAILED stages: ${FAILED[*]} (logs in .deps/logs/test-*.log)"
else
  echo "all stages passed"
fi
echo "tests: $PASSED_N passed, $FAILED_N failed, $SKIPPED_N skipped"
[ "${#FAILED[@]}" = 0 ]
