import { defineConfig } from 'vitest/config';

// Two projects so scripts/test.sh can report Node and browser results as separate steps:
//   vitest run --project node      tests/**/*.test.ts except tests/browser/ (the built package in Node)
//   vitest run --project browser   tests/browser/**/*.test.ts (drives Debian chromium, firefox-esr and WebKitGTK from Node)
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'node',
          include: ['tests/**/*.test.ts'],
          exclude: ['tests/browser/**', '**/node_modules/**'],
          environment: 'node',
          // The 64 MiB test and the native oracle runs take seconds on a 2-core machine.
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['tests/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
