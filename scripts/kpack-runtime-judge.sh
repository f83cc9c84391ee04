#!/usr/bin/env bash
# Judges offload-kit's kpack writer with rocm-kpack's own C++ runtime (issue 25): builds rocm-kpack's runtime/
# (librocm_kpack.a, with its CMake) and our judge (scripts/kpack-runtime-judge/judge.cpp, which only uses the
# runtime's public API), splits the fixtures' hosts and Debian's librocrand with `offload-kit kpack` (plain and
# zstd-per-kernel), and asks the runtime to load every code object, by archive key and through each host's
# `.rocm_kpack_ref` marker as CLR does, comparing each with `offload-kit extract`'s bytes. As a control, the same
# on the trees rocm-kpack's own split made (test/fixtures/kpack) and on its runtime test archives.
#
#   scripts/kpack-runtime-judge.sh ROCM_KPACK_CHECKOUT [BUILD_DIR]
#
# ROCM_KPACK_CHECKOUT holds CMakeLists.txt and runtime/, or is a bare clone (its HEAD is unpacked into BUILD_DIR/src).
# Needs cmake, ninja (or make), g++, libzstd-dev and libmsgpack-cxx-dev (Debian 12's 4.1.3 names its CMake
# package msgpackc-cxx and zstd's target zstd::libzstd_shared; small config shims in BUILD_DIR bridge the names
# rocm-kpack asks for, nothing in its sources is changed). Run `npm run build` first. Prints the judge's lines and
# leaves the judge at BUILD_DIR/judge (set OFFLOAD_KIT_KPACK_JUDGE to it to run test/kpack/runtime-judge.test.ts).
# Exit status 0 only when every request passed.
set -euo pipefail

src=${1:?usage: kpack-runtime-judge.sh ROCM_KPACK_CHECKOUT [BUILD_DIR]}
build=${2:-/tmp/kpack-build}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build"
build=$(cd "$build" && pwd)
if [ -f "$src/HEAD" ] && [ -d "$src/objects" ]; then
  # A bare repository (a mirror): its HEAD's runtime/ and CMakeLists.txt, unpacked outside our tree.
  commit=$(git --git-dir="$src" rev-parse HEAD)
  rm -rf "$build/src" && mkdir -p "$build/src"
  git --git-dir="$src" archive HEAD runtime CMakeLists.txt | tar -x -C "$build/src"
  src="$build/src"
else
  src=$(cd "$src" && pwd)
  commit=${ROCM_KPACK_COMMIT:-$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "unknown (not a git checkout; set ROCM_KPACK_COMMIT)")}
fi
cli="$repo/dist/bin/offload-kit.js"
[ -f "$cli" ] || { echo "build offload-kit first (npm run build)" >&2; exit 2; }

# Debian's msgpack-cxx 4.x and zstd 1.5.4 spell their CMake packages/targets differently from what rocm-kpack asks.
mkdir -p "$build/shim/msgpack" "$build/shim/zstd"
cat > "$build/shim/msgpack/msgpack-cxx-config.cmake" <<'EOF'
find_package(msgpackc-cxx CONFIG REQUIRED NAMES msgpack-cxx msgpack msgpackc-cxx)
if(NOT TARGET msgpack-cxx)
  add_library(msgpack-cxx INTERFACE IMPORTED)
  target_link_libraries(msgpack-cxx INTERFACE msgpackc-cxx)
endif()
set(msgpack-cxx_FOUND TRUE)
EOF
cat > "$build/shim/zstd/zstd-config.cmake" <<'EOF'
find_file(_real_zstd_config zstdConfig.cmake PATHS /usr/lib/x86_64-linux-gnu/cmake/zstd /usr/lib/cmake/zstd NO_DEFAULT_PATH)
include(${_real_zstd_config})
if(NOT TARGET zstd::libzstd)
  add_library(zstd::libzstd INTERFACE IMPORTED)
  if(TARGET zstd::libzstd_shared)
    target_link_libraries(zstd::libzstd INTERFACE zstd::libzstd_shared)
  else()
    target_link_libraries(zstd::libzstd INTERFACE zstd)
  endif()
endif()
set(zstd_FOUND TRUE)
EOF
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src" -B "$build/runtime-build" "${generator[@]}" -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release \
  -Dmsgpack-cxx_DIR="$build/shim/msgpack" -Dzstd_DIR="$build/shim/zstd" >"$build/cmake.log" 2>&1 \
  || { tail -40 "$build/cmake.log" >&2; exit 2; }
cmake --build "$build/runtime-build" >"$build/build.log" 2>&1 || { tail -40 "$build/build.log" >&2; exit 2; }
g++ -std=c++17 -O1 -Wall -I"$src/runtime/include" -DROCM_KPACK_STATIC "$repo/scripts/kpack-runtime-judge/judge.cpp" \
  "$build/runtime-build/runtime/librocm_kpack.a" -lzstd -o "$build/judge"
echo "rocm-kpack runtime: $src (commit $commit), judge: $build/judge"

work=$(mktemp -d "${TMPDIR:-/tmp}/kpack-judge.XXXXXX")
trap 'rm -rf "$work"' EXIT
fx="$repo/test/fixtures"
kit() { node "$cli" "$@"; }
status=0
judge() { # NAME EXPECTED_FAILURE_REGEX FILE...: one manifest, one judge run; failures matching the regex (a
  # known rocm-kpack defect in the control) are listed as expected, any other fails the run.
  local name=$1 allowed=$2; shift 2
  node "$repo/scripts/kpack-runtime-judge/manifest.mjs" "$work/out/$name" "$@" >"$work/$name.tsv"
  echo "== $name: $(grep -vc '^#' "$work/$name.tsv") request(s)"
  grep '^#' "$work/$name.tsv" || true
  "$build/judge" <"$work/$name.tsv" >"$work/$name.log" || true
  tail -1 "$work/$name.log"
  grep -E '^ok (archive|wrappers)' "$work/$name.log" | sed "s|$work/||" || true
  local failures
  failures=$(grep '^FAIL' "$work/$name.log" | sed "s|$work/||" || true)
  if [ -n "$failures" ]; then
    if [ -n "$allowed" ]; then
      grep -E "$allowed" <<<"$failures" | sed 's/^FAIL/expected FAIL/' || true
      grep -vE "$allowed" <<<"$failures" && status=1
    else
      echo "$failures"
      status=1
    fi
  fi
  grep -q ' passed, ' "$work/$name.log" || status=1
}
split_tree() { # DIR GROUP PREFIX COMPRESSION
  kit kpack "$1" --group="$2" ${3:+--prefix=$3} --compression="$4" >/dev/null
}
hosts_and_archives() { find "$1" -type f ! -name '*.kpack' -exec grep -lq HIPK {} \; -print | sort; find "$1" -type f -name '*.kpack' | sort; }

# offload-kit kpack's output: the fixture app, the stand-in libraries (plain, CCOB, -fgpu-rdc) and PIE, librocrand.
for compression in none zstd-per-kernel; do
  mkdir -p "$work/app-$compression/stage/bin"
  cp "$fx/hosts/app" "$work/app-$compression/stage/bin/app"
  split_tree "$work/app-$compression/stage" test_lib stage "$compression"
  mapfile -t files < <(hosts_and_archives "$work/app-$compression/stage")
  judge "offload-kit-app-$compression" "" "${files[@]}"
  cp -r "$fx/kpack/standin/orig" "$work/standin-$compression"
  split_tree "$work/standin-$compression" standin stage "$compression"
  mapfile -t files < <(hosts_and_archives "$work/standin-$compression")
  judge "offload-kit-standin-$compression" "" "${files[@]}"
  rocrand=/usr/lib/x86_64-linux-gnu/librocrand.so.1.1
  if [ -f "$rocrand" ]; then
    mkdir -p "$work/rocrand-$compression/lib"
    cp "$rocrand" "$work/rocrand-$compression/lib/"
    split_tree "$work/rocrand-$compression" rocrand "" "$compression"
    mapfile -t files < <(hosts_and_archives "$work/rocrand-$compression")
    judge "offload-kit-librocrand-$compression" "" "${files[@]}"
  fi
done

# CLR passes the agent's full ISA (rocminfo's name, e.g. gfx90a:sramecc+:xnack-), not the archive's: the runtime
# must reach the xnack- archives of librocrand through its @GFXARCH@ expansion of the feature-flag subsets.
awk -F'\t' -v OFS='\t' '$1 == "host" && $4 ~ /^gfx90[68a]:xnack-$/ { sub(/:xnack-$/, ":sramecc+:xnack-", $4); print }' \
  "$work/offload-kit-librocrand-none.tsv" >"$work/agent-isa.tsv"
echo "== offload-kit-librocrand-none as CLR asks, by the agent's full ISA: $(wc -l <"$work/agent-isa.tsv") request(s)"
if "$build/judge" <"$work/agent-isa.tsv" >"$work/agent-isa.log" && [ -s "$work/agent-isa.tsv" ]; then
  sed "s|$work/||" "$work/agent-isa.log"
else
  status=1
  cat "$work/agent-isa.log"
fi

# offload-kit prune's archives: rocm-kpack's two-architecture test archives with one GPU dropped (plain, zstd),
# and the plain stand-in tree pruned in place to gfx90a (the gfx906 and gfx1100 archives removed whole, the hosts
# untouched): what is left loads; for a dropped GPU the runtime finds no archive (ARCHIVE_NOT_FOUND/ARCH_NOT_FOUND).
mkdir -p "$work/pruned"
kit prune --drop=gfx906 "$fx/kpack/runtime/test_noop.kpack" -o "$work/pruned/test_noop.kpack" >/dev/null
kit prune --drop=gfx1101 "$fx/kpack/runtime/test_zstd.kpack" -o "$work/pruned/test_zstd.kpack" >/dev/null
judge offload-kit-pruned-archives "" "$work/pruned/test_noop.kpack" "$work/pruned/test_zstd.kpack"
cp -r "$work/standin-none" "$work/standin-pruned"
kit prune --keep=gfx90a "$work/standin-pruned" --in-place >/dev/null
[ ! -e "$work/standin-pruned/.kpack/standin_gfx906.kpack" ] || { echo "prune left standin_gfx906.kpack"; status=1; }
mapfile -t files < <(hosts_and_archives "$work/standin-pruned")
judge offload-kit-standin-pruned-to-gfx90a "" "${files[@]}"
# The zstd-per-kernel stand-in tree pruned the same way (its archives seen through the codecs).
cp -r "$work/standin-zstd-per-kernel" "$work/standin-zstd-pruned"
kit prune --keep=gfx90a "$work/standin-zstd-pruned" --in-place >/dev/null
[ ! -e "$work/standin-zstd-pruned/.kpack/standin_gfx906.kpack" ] || { echo "prune left the zstd tree's standin_gfx906.kpack"; status=1; }
mapfile -t files < <(hosts_and_archives "$work/standin-zstd-pruned")
judge offload-kit-standin-zstd-pruned-to-gfx90a "" "${files[@]}"
for f in "${files[@]}"; do
  case $f in *.kpack) ;; *) printf 'wrappers\t%s\tgfx906\n' "$f" ;; esac
done >"$work/dropped.tsv"
echo "== offload-kit-standin-pruned-to-gfx90a asked for gfx906 (every host expected to fail):"
"$build/judge" <"$work/dropped.tsv" | sed "s|$work/||" >"$work/dropped.log" || true
cat "$work/dropped.log"
[ "$(grep -cE '^FAIL .*kpack_load_code_object: (ARCHIVE_NOT_FOUND|ARCH_NOT_FOUND)$' "$work/dropped.log")" = "$(wc -l <"$work/dropped.tsv")" ] || status=1

# Control: what rocm-kpack's own split wrote (test/fixtures/make-kpack-*.sh), and its runtime test archives.
cp -r "$fx/kpack/tree/stage" "$work/rk-tree"
cp -r "$fx/kpack/zstd/stage" "$work/rk-zstd"
cp -r "$fx/kpack/standin/split" "$work/rk-standin"
# rocm-kpack's -fgpu-rdc split files librdc.so's shared fat binary once (#0): the runtime, asked for wrapper 1 as
# CLR asks, must refuse it (KERNEL_NOT_FOUND), and find it in what offload-kit kpack wrote (above).
rdc='^FAIL wrappers\s+rk-standin/lib/librdc.so\s+gfx[0-9a-z]+: co_index 1: kpack_load_code_object: KERNEL_NOT_FOUND$'
for t in rk-tree rk-zstd rk-standin; do
  mapfile -t files < <(hosts_and_archives "$work/$t")
  judge "rocm-kpack-${t#rk-}" "$([ "$t" = rk-standin ] && echo "$rdc")" "${files[@]}"
done
[ "$(grep -c 'librdc.so.*co_index 1: kpack_load_code_object: KERNEL_NOT_FOUND' "$work/rocm-kpack-standin.log")" = 3 ] || status=1
judge rocm-kpack-runtime-test-archives "" "$fx/kpack/runtime/test_noop.kpack" "$fx/kpack/runtime/test_zstd.kpack"

echo "== offload-kit's -fgpu-rdc split, wrapper 1:"
grep -h "librdc.so co_index 1" "$work"/offload-kit-standin-*.log | sed "s|$work/||"

[ "$status" = 0 ] && echo "every request as expected" || echo "SOME REQUESTS FAILED"
exit "$status"
