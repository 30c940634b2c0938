import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // one scratch directory for the run, for what many test files would each build alike (documented there)
    globalSetup: ['test/helpers/run-scratch.global.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Three workers on 2 cores: the tests wait on the processes they start (servers, the warden, npm) more than
    // they compute; measured on 8 files, 53 s against 66 s with two (each test ~35% slower, far from its timeout).
    maxWorkers: 3,
  },
});
