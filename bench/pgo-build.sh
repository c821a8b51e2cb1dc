#!/bin/sh
# pgo-build.sh [DIR]: a profile-guided easypp-sim for long sweeps ('make
# sim-pgo'; default DIR build-pgo). Run from the top build directory.
#
# GCC's profile-guided optimization in two builds of the same sources in
# one side build (tests/side-build.sh, no plugin): first with
# -fprofile-generate, whose easypp-sim replays a training set and writes
# what its branches and calls did into DIR/profile; then with
# -fprofile-use, which lays out and inlines the code by those counts
# (-fprofile-partial-training: code the training did not run is optimized
# as usual, not as cold). The sources are the same, so the replays are:
# the schedules and figures match the plain build's ('make check-pgo'
# checks it, tests/identical-output.sh); only the speed differs, in long
# batches (docs/harness-benchmark.md). GCC only (the profile flags are
# GCC's): the side build is configured with CC=gcc CXX=g++.
#
# The training set is the built-in synthetic workload only (no log is
# needed; the archive's logs are what the speed is measured on), written
# out as an SWF file and read back, plain and gzip, so that the reader is
# trained too (untrained, it came out slower than the plain build's: a
# profile-guided build must not buy its replays' speed with its parse):
# every preset once, and each of the thesis grid's 288 predictor settings
# once, at a window that cycles through 1..30.
#
# Environment: MAKE (the make to use), PGO_JOBS (training workload's jobs,
# default 20000). Prints the absolute path of the easypp-sim built, last.
# The binary finds easypp-report (for --report) beside itself, as the
# plain build's does.
set -eu
dir=${1:-build-pgo}
top=$(pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
case $dir in /*) ;; *) dir=$top/$dir ;; esac
[ -f "$top/Makefile" ] && [ -f "$src/tests/side-build.sh" ] || {
  echo "pgo-build: run from the top build directory, after configure (no Makefile in $top)" >&2
  exit 2
}
for t in gcc g++ gzip python3; do
  command -v "$t" >/dev/null 2>&1 || { echo "pgo-build: $t not found (apt-get install build-essential gzip python3)" >&2; exit 2; }
done
jobs=${PGO_JOBS:-20000}
case $jobs in '' | *[!0-9]*) echo "pgo-build: PGO_JOBS=$jobs is not a number" >&2; exit 2 ;; esac
make=${MAKE:-make}
par=$(nproc 2>/dev/null || echo 2)
profile=$dir/profile
base="-g -O2"

# build PHASE-FLAGS...: configure DIR for one phase and build easypp-sim
# from clean (make does not see flags change: objects of the other phase
# would stay).
build() {
  MAKE=$make sh "$src/tests/side-build.sh" "$dir" --disable-plugin CC=gcc CXX=g++ \
    CXXFLAGS="$base $1" LDFLAGS="$2" >/dev/null
  $make -s -C "$dir/build" clean >/dev/null
  for d in libpredict libsim; do $make -s -j"$par" -C "$dir/build/$d" >/dev/null; done
  $make -s -j"$par" -C "$dir/build/tools" easypp-sim >/dev/null
}

t0=$(date +%s)
echo "pgo-build: 1/3 instrumented build in $dir"
build "-fprofile-generate=$profile" "-fprofile-generate=$profile"
# Only the training's profiles (configure's test programs ran with the
# same flags, and their profiles would not match the next configure's).
rm -rf "$profile"

echo "pgo-build: 2/3 training on the synthetic workload ($jobs jobs), at $(($(date +%s) - t0)) s"
sim=$dir/build/tools/easypp-sim
swf=$dir/train.swf
"$sim" -w "synthetic:seed=1,jobs=$jobs" -q -s easy --output-swf "$swf" >/dev/null
gzip -c "$swf" >"$swf.gz"
# The presets as easypp-sim lists them (floor_bench.py's presets_of) and
# the thesis grid's knobs (easypp-sweep's THESIS_GRID) but its window,
# which cycles: each setting once.
specs=$dir/train-specs.txt
presets=$(python3 - "$src" "$sim" "$specs" <<'EOF'
import importlib.machinery, importlib.util, itertools, sys
src, sim, out = sys.argv[1:]
def load(name, path):
    loader = importlib.machinery.SourceFileLoader(name, path)
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(mod)
    return mod
grid = dict(load("easypp_sweep", src + "/contrib/easypp-sweep").THESIS_GRID)
windows = grid.pop("window")
with open(out, "w") as f:
    for i, combo in enumerate(itertools.product(*grid.values()), 1):
        knobs = ":".join("%s=%s" % kv for kv in zip(grid, combo))
        f.write("easy++:%s:window=%s\n" % (knobs, windows[i % len(windows)]))
print(",".join(load("floor_bench", src + "/bench/floor_bench.py").presets_of(sim)))
EOF
)
"$sim" -w "$swf.gz" -q --threads 1 -s "$presets" >/dev/null
"$sim" -w "$swf" -q --csv --threads 1 --scheduler-file "$specs" >/dev/null
n=$(find "$profile" -name '*.gcda' | wc -l)
[ "$n" -gt 0 ] || { echo "pgo-build: the training wrote no profile in $profile" >&2; exit 1; }

echo "pgo-build: 3/3 optimized build from $n profiles, at $(($(date +%s) - t0)) s"
build "-fprofile-use=$profile -fprofile-partial-training -Wno-missing-profile" ""
"$sim" --version >/dev/null
ln -sf "$src/tools/easypp-report" "$dir/build/tools/easypp-report"
echo "pgo-build: done in $(($(date +%s) - t0)) s"
echo "$sim"
