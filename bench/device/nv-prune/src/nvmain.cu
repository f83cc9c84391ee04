// The executable of the NVIDIA prune fixtures: one kernel of its own, then nvk.cu's (linked in, or from libnvk.so).
#include <cstdio>
#include <cuda_runtime.h>
extern "C" int nvk_run(const char *who, int n);
extern "C" __global__ void main_square(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * x[i] + i;
}
int main() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) { printf("no CUDA device: %s\n", cudaGetErrorName(e)); return 3; }
  cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
  printf("device: sm_%d%d\n", p.major, p.minor);
  const int n = 4096;
  int h[n]; for (int i = 0; i < n; i++) h[i] = i - 2000;
  int *d = nullptr; cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  main_square<<<n / 256, 256>>>(d, n);
  e = cudaGetLastError();  // a launch error (no kernel image) is reported here, not by the synchronize
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) { printf("main: launch: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e)); return 2; }
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  long long s = 0; for (int i = 0; i < n; i++) s += h[i];
  printf("main: sum=%lld\n", s);
  return nvk_run("nvk", 1 << 20) == 0 ? 0 : 2;
}
