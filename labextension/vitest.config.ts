import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // DOM tests opt in with `// @vitest-environment jsdom`; the rest run in node.
    environment: 'node',
    include: ['src/**/*.test.ts'],
    setupFiles: ['./vitest.setup.ts'],
    restoreMocks: true,
  },
});
