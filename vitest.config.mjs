import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/reference/**/*.test.mjs', 'tests/js/**/*.test.mjs', 'tests/browser/**/*.test.mjs'],
    // node-llama-cpp is a native addon: run test files in child processes.
    pool: 'forks',
    fileParallelism: false,
    setupFiles: ['tests/setup/download-cache.mjs'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
  },
});
