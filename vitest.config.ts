import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { HANG_MS } from "./test/limits.js";
import { testFiles, tierOf, type Tier } from "./test/tiers.js";

// One vitest project per tier (test/tiers.ts): `npm run test:quick` runs quick, `npm test` quick and standard,
// `npm run test:full` all three. Each project lists its files, found when the config loads, so a new test file
// lands in the tier its path gives (standard unless test/tiers.ts names it) and in no other.
const files = testFiles(fileURLToPath(new URL(".", import.meta.url)));
const project = (name: Tier) => ({
  extends: true as const,
  test: { name, include: files.filter((file) => tierOf(file) === name) },
});

export default defineConfig({
  test: {
    // A limit only catches hangs (test/limits.ts): differential tests spawn native tools, and CI shares two cores.
    testTimeout: HANG_MS,
    hookTimeout: HANG_MS,
    pool: "forks",
    projects: [project("quick"), project("standard"), project("slow")],
  },
});
