/* The host program of the shared-library case: plain C (no device code of its own), linked against
 * libnvk.so found through its rpath ($ORIGIN), so every kernel it runs comes from the library. */
#include <stdio.h>
int nvk_run(const char *who, int n);
int main(void) {
  int rc = nvk_run("lib", 1 << 20);
  printf("lib: rc=%d\n", rc);
  return rc == 0 ? 0 : 2;
}
