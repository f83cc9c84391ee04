#!/bin/bash
# The GPU proof for offload-kit's NVIDIA prune, compress and decompress: runs the unpruned and edited CUDA programs on this machine's
# GPU (sm_90: H100/H200; needs the NVIDIA driver, no CUDA toolkit) and compares every output with the
# unpruned one. Prints a PASS/FAIL table; exits 0 only when every expectation holds. About 10-30 s.
#   ./run.sh            (from anywhere; results also go to ${OUT:-/tmp}/nv-device-results/)
set -u
cd "$(dirname "$0")"
RESULTS=${OUT:-/tmp}/nv-device-results
mkdir -p "$RESULTS"
export CUDA_CACHE_DISABLE=1   # the driver must JIT the PTX-only copies now, not take a cached cubin
FAILS=0
ROWS=()
row() { ROWS+=("$(printf '%-4s  %-34s  %s' "$1" "$2" "$3")"); [ "$1" = PASS ] || FAILS=$((FAILS + 1)); }

# run NAME DIR PROGRAM [ENV...]: output in $RESULTS/NAME.out, exit status in $RESULTS/NAME.rc
run() {
  local name=$1 dir=$2 prog=$3; shift 3
  ( cd "$dir" && env "$@" timeout 60 "./$prog" ) > "$RESULTS/$name.out" 2>&1
  echo $? > "$RESULTS/$name.rc"
}
rc() { cat "$RESULTS/$1.rc"; }

echo "== GPU"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1 | tee "$RESULTS/gpu.txt" || true

for kind in app lib; do
  dir() { if [ $kind = app ]; then echo app; else echo "lib/$1"; fi; }
  for v in orig orig-z sm90 ptx90 sm80 z-sm90 lz4 dz; do
    run "$kind-$v" "$(dir $v)" "$(if [ $kind = app ]; then echo $v; else echo host; fi)"
  done
  for v in orig sm90 ptx90 z-sm90 lz4 dz; do
    run "$kind-$v-eager" "$(dir $v)" "$(if [ $kind = app ]; then echo $v; else echo host; fi)" CUDA_MODULE_LOADING=EAGER
  done

  # The baseline must have run on an sm_90 and computed its results.
  base="$RESULTS/$kind-orig.out"
  if [ "$(rc $kind-orig)" = 0 ] && grep -q "n=1048576 sum=" "$base" && { [ $kind = lib ] || grep -q "^device: sm_90$" "$base"; }; then
    row PASS "$kind unpruned (baseline)" "$(grep -m1 'sum=' "$base")"
  else
    row FAIL "$kind unpruned (baseline)" "rc $(rc $kind-orig): $(head -c 200 "$base" | tr '\n' ' ')"
    grep -q InsufficientDriver "$base" && echo "note: cudaErrorInsufficientDriver: these programs use CUDA 13's runtime, which needs an NVIDIA driver of the r580 series or newer"
  fi
  same() { # name, what
    if [ "$(rc $kind-$1)" = 0 ] && cmp -s "$base" "$RESULTS/$kind-$1.out"; then row PASS "$kind $2" "output identical to unpruned"
    else row FAIL "$kind $2" "rc $(rc $kind-$1): $(diff "$base" "$RESULTS/$kind-$1.out" | head -c 300 | tr '\n' ' ')"; fi
  }
  same orig-z "-compress-all build (unpruned)"
  same sm90 "(a) keep=sm_90, SASS only"
  same ptx90 "(b) PTX only: driver JITs compute_90"
  same z-sm90 "(d) -compress-all, keep=sm_90"
  same orig-eager "unpruned, CUDA_MODULE_LOADING=EAGER"
  same sm90-eager "(a) with EAGER module loading"
  same ptx90-eager "(b) with EAGER module loading"
  same z-sm90-eager "(d) with EAGER module loading"
  same lz4 "(e) offload-kit compress (LZ4)"
  same dz "(f) offload-kit decompress of (d)'s input"
  same lz4-eager "(e) with EAGER module loading"
  same dz-eager "(f) with EAGER module loading"
  # (c) the negative control must fail to launch, and say why.
  out="$RESULTS/$kind-sm80.out"
  if [ "$(rc $kind-sm80)" != 0 ] && grep -q "cudaErrorNoKernelImageForDevice" "$out" && ! grep -q "sum=" "$out"; then
    row PASS "$kind (c) keep=sm_80 --drop-ptx fails" "$(grep -m1 NoKernelImage "$out" | head -c 120)"
  else
    row FAIL "$kind (c) keep=sm_80 --drop-ptx fails" "rc $(rc $kind-sm80): $(head -c 200 "$out" | tr '\n' ' ')"
  fi
done

echo
echo "== results (outputs in $RESULTS)"
printf '%s\n' "${ROWS[@]}" | tee "$RESULTS/table.txt"
echo
if [ $FAILS = 0 ]; then echo "ALL PASS (${#ROWS[@]} checks)"; exit 0; fi
echo "FAILED: $FAILS of ${#ROWS[@]} checks"; exit 1
