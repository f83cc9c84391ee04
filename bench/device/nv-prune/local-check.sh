#!/bin/bash
# What can be checked without a GPU: every program starts, and each pruned copy reports exactly what its
# unpruned original reports (no CUDA device / insufficient driver) with the same exit status; with
# cuobjdump (offload-kit's scripts/fetch-cuobjdump.sh puts one in ~/.cache/offload-kit/cuobjdump/) each
# copy lists exactly the entries it should; with offload-kit's CLI (KIT=.../dist/bin/offload-kit.js)
# every copy passes `offload-kit verify`. Exits 0 only when all hold.
set -u
cd "$(dirname "$0")"
CUOBJDUMP=${CUOBJDUMP:-$HOME/.cache/offload-kit/cuobjdump/cuobjdump}
KIT=${KIT:-}
FAILS=0
check() { if eval "$2"; then printf 'PASS  %s\n' "$1"; else printf 'FAIL  %s\n' "$1"; FAILS=$((FAILS + 1)); fi; }
runp() { ( cd "$1" && timeout 60 "./$2" 2>&1; echo "rc=$?" ); }
for v in orig-z sm90 ptx90 sm80 z-sm90 lz4 dz; do
  check "app/$v starts and reports as app/orig does" '[ "$(runp app $v)" = "$(runp app orig)" ]'
  check "lib/$v/host starts and reports as lib/orig/host does" '[ "$(runp lib/$v host)" = "$(runp lib/orig host)" ]'
done
# Entries each copy must hold (cuobjdump -lelf -lptx, archs in order; x = a kernel-less device-link cubin counts too).
expect() { # file, expected "sm_90 sm_90 ptx:sm_90" list
  local got
  got=$("$CUOBJDUMP" -lelf -lptx "$1" 2>/dev/null | sed -n 's/^ELF file .*\.\(sm_[0-9a-z]*\)\.cubin$/\1/p; s/^PTX file .*\.\(sm_[0-9a-z]*\)\.ptx$/ptx:\1/p' | tr '\n' ' ')
  [ "$got" = "$2 " ] || { echo "    $1: cuobjdump lists '$got', expected '$2 '"; return 1; }
}
if [ -x "$CUOBJDUMP" ]; then
  for f in app/sm90 app/z-sm90; do check "$f holds sm_90 SASS only" "expect $f 'sm_90 sm_90 sm_90'"; done
  check "app/ptx90 holds compute_90 PTX only" "expect app/ptx90 'ptx:sm_90 ptx:sm_90'"
  check "app/sm80 holds sm_80 SASS only" "expect app/sm80 'sm_80 sm_80 sm_80'"
  for d in sm90 z-sm90; do check "lib/$d holds sm_90 SASS only" "expect lib/$d/libnvk.so 'sm_90 sm_90'"; done
  check "lib/ptx90 holds compute_90 PTX only" "expect lib/ptx90/libnvk.so 'ptx:sm_90'"
  check "lib/sm80 holds sm_80 SASS only" "expect lib/sm80/libnvk.so 'sm_80 sm_80'"
  # (e), (f): every entry kept; cuobjdump extracts the same cubins and PTX, byte for byte, as from the input.
  extracted() { # file: the md5 of each file cuobjdump -xelf all -xptx all writes, named without the file's stem
    local d; d=$(mktemp -d); ( cd "$d" && "$CUOBJDUMP" -xelf all -xptx all "$OLDPWD/$1" > /dev/null 2>&1; for f in *; do echo "${f#*.} $(md5sum < "$f")"; done ); rm -rf "$d"
  }
  same_code() { [ "$(extracted "$1")" = "$(extracted "$2")" ] && [ -n "$(extracted "$1")" ]; }
  check "app/lz4 holds the cubins and PTX of app/orig" "same_code app/lz4 app/orig"
  check "app/dz holds the cubins and PTX of app/orig-z" "same_code app/dz app/orig-z"
  check "lib/lz4 holds the cubins and PTX of lib/orig" "same_code lib/lz4/libnvk.so lib/orig/libnvk.so"
  check "lib/dz holds the cubins and PTX of lib/orig-z" "same_code lib/dz/libnvk.so lib/orig-z/libnvk.so"
else
  echo "SKIP  cuobjdump listings (no cuobjdump at $CUOBJDUMP)"
fi
if [ -n "$KIT" ]; then
  # How (e) and (f) store their entries: in (e) every plain entry became LZ4 (nvcc's zstd PTX stays zstd), none compressed in (f).
  stored() { node "$KIT" ls --json "$1" | grep -o '"compression": "[a-z0-9]*"' | sort | uniq -c | awk '{print $3}' | tr -d '"' | tr '\n' ' '; }
  for f in app/lz4 lib/lz4/libnvk.so; do check "$f stores no entry plain, cubins as LZ4" '[ "$(stored '"$f"')" = "lz4 zstd " ]'; done
  for f in app/dz lib/dz/libnvk.so; do check "$f stores every entry plain" '[ "$(stored '"$f"')" = "none " ]'; done
  for f in app/* lib/*/libnvk.so; do
    case $f in *.txt) continue;; esac
    check "offload-kit verify $f" "node '$KIT' verify '$f' > /dev/null"
  done
else
  echo "SKIP  offload-kit verify (set KIT=/path/to/dist/bin/offload-kit.js)"
fi
[ $FAILS = 0 ] && { echo "ALL PASS"; exit 0; }
echo "FAILED: $FAILS"; exit 1
