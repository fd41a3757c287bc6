// Lint rules that catch what the compiler does not: promises nobody awaits
// (a lost error, or a write acknowledged before it is durable), switches
// over outcomes that miss a case, and time or processes reached from a
// pure core instead of through its ports (PROTOCOL.md L1).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'proto/src/generated/**',
      '**/*.js',
      '**/*.cjs',
      '**/*.mjs',
      'vitest.config.ts',
      'vitest.measure.config.ts',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        // Package tsconfigs cover src/, tsconfig.tests.json every test.
        project: [
          './tsconfig.tests.json',
          './*/tsconfig.json',
          './*/*/tsconfig.json',
          './packages/client/examples/tsconfig.json',
        ],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Ports and fakes implement async interfaces without awaiting anything.
      '@typescript-eslint/require-await': 'off',
      // unaryCall takes a generated client's method and calls it on its client.
      '@typescript-eslint/unbound-method': 'off',
      // Rethrowing what a callee rejected with keeps its cause intact.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { varsIgnorePattern: '^_', argsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests poke at untyped reflection and health messages on purpose.
    files: ['**/*.test.ts', '**/test/**/*.ts', 'packages/testkit/src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
  {
    files: ['services/*/src/core/**/*.ts', 'packages/common/src/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...[
          'process',
          'setTimeout',
          'setInterval',
          'setImmediate',
          'clearTimeout',
          'clearInterval',
          'Date',
          'performance',
        ].map((name) => ({
          name,
          message: 'core/ reaches time and the process only through ports (the injected Clock, L1)',
        })),
      ],
      'no-restricted-imports': [
        'error',
        ...['node:perf_hooks', 'perf_hooks', 'node:timers', 'node:timers/promises', 'timers', 'timers/promises'].map(
          (name) => ({ name, message: 'core/ reaches time only through the injected Clock (L1)' }),
        ),
      ],
    },
  },
);
