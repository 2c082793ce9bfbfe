// ESLint flat config. typescript-eslint's type-aware recommended rules on the TypeScript program
// (tsconfig.json: src, test), the plain recommended rules on the .mjs scripts and bin/crm (outside
// the TypeScript program), and eslint-config-prettier last so that Prettier alone owns the layout.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'coverage/', 'completions/', 'test/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ['vitest.config.ts'] }, // vitest.config.ts is outside tsconfig's include
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_name` marks a parameter kept for its position and `{ drop, ...rest }` drops a field: both on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An async method that does not await implements a Promise-returning interface (stubs, fakes)
      // and turns a throw into a rejection, which is what its callers handle.
      '@typescript-eslint/require-await': 'off',
      // Matching control characters is this code's job: terminal sanitising, and tests of it.
      'no-control-regex': 'off',
      // Rethrowing what was caught, or an AbortSignal's reason, passes on a value that is `unknown`/`any`
      // by nature; a non-Error literal is still refused.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
    },
  },
  {
    // A function a reader can hold in their head, a file that is one concept or one stage of the batch engine
    // read in one place (docs/architecture.md, Habits): every line counts, comments and blank lines too, nested
    // functions inside their parent.
    files: ['src/**/*.ts'],
    rules: {
      // (80: a stage of the engine is one function, at a width of 120 characters)
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: false, skipComments: false, IIFEs: true }],
      'max-lines': ['error', { max: 450, skipBlankLines: false, skipComments: false }],
    },
  },
  {
    // Tests read JSON answers as `any` on purpose: the expect() that follows is the check, and typing
    // every body would add casts, not safety.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Plain JavaScript outside the TypeScript program: no type information, so no type-aware rules.
    files: ['**/*.mjs', '**/*.js', '**/*.cjs', 'bin/crm'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
);
