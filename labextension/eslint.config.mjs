// ESLint 9 flat config: typescript-eslint's recommended rules for src/ and the root .ts configs,
// plain JS rules for the build scripts and webpack.config.js. Formatting is prettier's job
// (`npm run lint` runs `prettier --check` too).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeGlobals = {
  console: 'readonly',
  process: 'readonly',
  URL: 'readonly',
};

export default tseslint.config(
  { ignores: ['lib/**', 'node_modules/**', '../placeviz/**'] },
  js.configs.recommended,
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-non-null-assertion': 'off',
      eqeqeq: ['error', 'smart'],
      'no-restricted-properties': [
        'error',
        {
          property: 'innerHTML',
          message: 'Document text is set with textContent (docs/inspector.md).',
        },
        {
          property: 'outerHTML',
          message: 'Document text is set with textContent (docs/inspector.md).',
        },
        {
          property: 'insertAdjacentHTML',
          message: 'Document text is set with textContent (docs/inspector.md).',
        },
      ],
    },
  },
  {
    files: ['scripts/**/*.mjs', '*.mjs'],
    languageOptions: { globals: nodeGlobals, sourceType: 'module' },
  },
  {
    files: ['*.js'],
    languageOptions: {
      globals: { ...nodeGlobals, module: 'writable', require: 'readonly' },
      sourceType: 'commonjs',
    },
  },
  {
    files: ['*.ts'],
    extends: [tseslint.configs.recommended],
  },
);
