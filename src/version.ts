/** The package version (test/packaging.test.ts checks it against package.json). */
export const PACKAGE_VERSION = "0.1.0";
/** The LLVM release whose tool behaviour the drop-in CLIs reproduce. */
export const LLVM_COMPAT_VERSION = "19.1.7";
