#!/bin/bash
# Builds everything in this folder (needs nvcc 13 and offload-kit's CLI; runs on the build machine, not the GPU one).
#   ./make.sh   (KIT= another offload-kit.js; NVCC= another nvcc 13)
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-/usr/local/cuda-13.0/bin/nvcc}
# The library's kernels are the prune fixtures' own (test/fixtures/nv-prune/nvk.cu); src/nvmain.cu differs from the
# fixture's in asking cudaGetLastError after its launch, so the negative control fails as it must.
NVK=../../../test/fixtures/nv-prune/nvk.cu
KIT=${KIT:-$PWD/../../../dist/bin/offload-kit.js}
CUOBJDUMP=${CUOBJDUMP:-$HOME/.cache/offload-kit/cuobjdump/cuobjdump}
kit() { node "$KIT" "$@"; }
ARCHS="-gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]"
rm -rf app lib && mkdir -p app lib/orig lib/orig-z
# The executable, static cudart: entries stored plain (PTX compressed, nvcc 13's default), and all compressed.
"$NVCC" $ARCHS --cudart=static -o app/orig src/nvmain.cu "$NVK"
"$NVCC" $ARCHS --cudart=static -Xfatbin -compress-all -o app/orig-z src/nvmain.cu "$NVK"
# The library, static cudart inside it, and a plain C host found through rpath $ORIGIN.
"$NVCC" -shared -Xcompiler -fPIC $ARCHS --cudart=static -o lib/orig/libnvk.so "$NVK"
"$NVCC" -shared -Xcompiler -fPIC $ARCHS --cudart=static -Xfatbin -compress-all -o lib/orig-z/libnvk.so "$NVK"
gcc -O1 -o lib/orig/host src/host.c -Llib/orig -lnvk -Wl,-rpath,'$ORIGIN'
cp lib/orig/host lib/orig-z/host
# The pruned copies, by offload-kit's CLI (each output checked by src/verify before it is written).
prune() { # name, input-app, input-lib-dir, options...
  local name=$1 app=$2 libdir=$3; shift 3
  kit prune "$@" "app/$app" -o "app/$name" > "app/$name.prune.txt"
  mkdir -p "lib/$name" && cp lib/orig/host "lib/$name/host"
  kit prune "$@" "lib/$libdir/libnvk.so" -o "lib/$name/libnvk.so" > "lib/$name/prune.txt"
}
prune sm90 orig orig --keep=sm_90 --drop-ptx                # (a) SASS for sm_90 only
prune ptx90 orig orig --drop=sm_75,sm_80,sm_90             # (b) no SASS: the driver JITs compute_90 PTX
prune sm80 orig orig --keep=sm_80 --drop-ptx                # (c) negative control: no code an sm_90 can run
prune z-sm90 orig-z orig-z --keep=sm_90 --drop-ptx          # (d) -compress-all build, SASS for sm_90 only
# Every entry re-stored by offload-kit, nothing dropped (each output checked by src/verify too).
transform() { # name, operation, input-app, input-lib-dir
  local name=$1 operation=$2 app=$3 libdir=$4
  kit "$operation" "app/$app" -o "app/$name" > "app/$name.$operation.txt"
  mkdir -p "lib/$name" && cp lib/orig/host "lib/$name/host"
  kit "$operation" "lib/$libdir/libnvk.so" -o "lib/$name/libnvk.so" > "lib/$name/$operation.txt"
}
transform lz4 compress orig orig                             # (e) the plain build's entries LZ4-compressed by offload-kit
transform dz decompress orig-z orig-z                        # (f) the -compress-all (zstd) build's entries stored plain
{
  echo "# made by make.sh on $(date -u +%FT%TZ) with $("$NVCC" --version | tail -1)"
  for f in app/* lib/*/libnvk.so; do
    case $f in *.txt) continue;; esac
    echo "## $f  $(stat -c %s "$f") bytes  sha256 $(sha256sum "$f" | cut -c1-16)"
    if [ -x "$CUOBJDUMP" ]; then "$CUOBJDUMP" -lelf -lptx "$f" 2>&1 | sed 's/^/    /'; fi
    kit verify "$f" | sed 's/^/    /'
  done
} > manifest.txt
du -sh .
