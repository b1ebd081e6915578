// vitest configuration: every test under test/, generous timeouts for the end-to-end and crash tests.

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
