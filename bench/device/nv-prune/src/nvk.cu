// Kernels for the NVIDIA prune fixtures (scripts/make-nv-prune-fixtures.sh): each computes something a host
// program prints and compares, so a pruned copy that loads the wrong (or no) code shows.
#include <cstdio>
#include <cuda_runtime.h>
extern "C" __global__ void nvk_poly(const int *in, long long *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { long long v = in[i]; out[i] = v * v * 7 + v * 3 - 11; }
}
extern "C" __global__ void nvk_sum(const long long *in, unsigned long long *sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(sum, (unsigned long long)in[i]);
}
/** Runs both kernels over n values; prints the checksum; returns 0, or the CUDA error (printed by name). */
extern "C" int nvk_run(const char *who, int n) {
  int *din = nullptr; long long *dout = nullptr; unsigned long long *dsum = nullptr;
  cudaError_t e = cudaMalloc(&din, n * sizeof(int));
  if (e != cudaSuccess) { printf("%s: cudaMalloc: %s (%s)\n", who, cudaGetErrorName(e), cudaGetErrorString(e)); return (int)e; }
  cudaMalloc(&dout, n * sizeof(long long));
  cudaMalloc(&dsum, sizeof(unsigned long long));
  int *hin = new int[n];
  for (int i = 0; i < n; i++) hin[i] = (i * 2654435761u) % 100003 - 50000;
  cudaMemcpy(din, hin, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(dsum, 0, sizeof(unsigned long long));
  nvk_poly<<<(n + 255) / 256, 256>>>(din, dout, n);
  e = cudaGetLastError();
  if (e == cudaSuccess) { nvk_sum<<<(n + 255) / 256, 256>>>(dout, dsum, n); e = cudaGetLastError(); }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("%s: launch: %s (%s)\n", who, cudaGetErrorName(e), cudaGetErrorString(e)); return (int)e; }
  unsigned long long sum = 0; long long last = 0;
  cudaMemcpy(&sum, dsum, sizeof sum, cudaMemcpyDeviceToHost);
  cudaMemcpy(&last, dout + n - 1, sizeof last, cudaMemcpyDeviceToHost);
  printf("%s: n=%d sum=%llu last=%lld\n", who, n, sum, last);
  delete[] hin;
  return 0;
}
