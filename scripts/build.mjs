// Bundles src/cli/main.ts into dist/ with esbuild. Code splitting keeps each command's heavy
// dependencies (undici, zod, conf, ora, the sandbox) in chunks loaded only when that command runs,
// so `crm --version` and `crm --help` load commander alone.
import { build } from 'esbuild';
import { readFileSync, rmSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { 'cli/main': 'src/cli/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: true,
  legalComments: 'none',
  chunkNames: 'chunks/[name]-[hash]',
  define: { __CRM_VERSION__: JSON.stringify(pkg.version) },
  // CommonJS dependencies (cli-table3) call require(); give the ESM bundle a real one.
  banner: {
    js: "import { createRequire as __crmCreateRequire } from 'node:module'; const require = __crmCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
