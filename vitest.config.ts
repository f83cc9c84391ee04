import { defineConfig } from "vitest/config";
import { HANG_MS } from "./test/limits.js";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A limit only catches hangs (test/limits.ts): differential tests spawn native tools, and CI shares two cores.
    testTimeout: HANG_MS,
    hookTimeout: HANG_MS,
    pool: "forks",
  },
});
