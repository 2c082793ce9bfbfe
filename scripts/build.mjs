// Bundles src/cli/main.ts into dist/ with esbuild. Code splitting keeps each command's heavy
// dependencies (undici, zod, conf, ora, the sandbox) in chunks loaded only when that command runs,
// so `crm contacts --help` loads commander alone; bin/crm answers `crm --version` from package.json
// without loading even that, and `crm --help` from dist/cli/root-help.json without building the
// command tree. Measure with `npm run bench:startup` after changing anything here.
//
// The bundle holds every library crm runs, so the published package has no runtime dependencies:
// libraries go in devDependencies, and dist/THIRD_PARTY_LICENSES.txt carries the licence of each
// package the bundle contains (from esbuild's metafile). `--release` (npm's prepack, so every
// tarball) builds without source maps; local builds keep them for `node --enable-source-maps`.
// prepack rather than prepare: prepare would also build on every `npm ci` in the repository (where
// `npm test` builds anyway, and `npm ci --omit=dev` would fail without esbuild); its one gain,
// installing from a git URL, is not an install we offer: the tarball is (README, Installing).
import { build } from 'esbuild';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { thirdPartyLicenses } from './licenses.mjs';

const release = process.argv.includes('--release');

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

/**
 * Replaces a module of a dependency with a few lines of our own. Only for code that crm provably
 * never runs but that would otherwise load (and be compiled) on every request command. Each
 * replacement must find its module: when a dependency's update moves or renames it, the build
 * fails (below) instead of silently shipping the module again, so the trick is re-measured or dropped.
 */
const replacementHits = new Map();
function replaceModule(name, { importer, request, contents }) {
  replacementHits.set(name, 0);
  return {
    name,
    setup(b) {
      b.onResolve({ filter: request }, (args) => {
        if (!importer.test(args.importer.split(path.sep).join('/'))) return undefined;
        replacementHits.set(name, replacementHits.get(name) + 1);
        return { path: name, namespace: 'crm-replaced', pluginData: args.resolveDir };
      });
      b.onLoad({ filter: /.*/, namespace: 'crm-replaced' }, (args) =>
        args.path === name ? { contents, resolveDir: args.pluginData, loader: 'js' } : undefined,
      );
    },
  };
}

const plugins = [
  // undici's HTTP/2 client is used only when a Pool is made with `allowH2` (src/http/transport.ts
  // never sets it). Loading it loads node:http2, node:tls and node:crypto: ~10 ms on every request.
  replaceModule('undici-without-h2', {
    importer: /\/node_modules\/undici\/lib\/dispatcher\/client\.js$/,
    request: /^\.\/client-h2\.js$/,
    contents: "module.exports = function connectH2 () { throw new Error('crm is built without HTTP/2 (allowH2)') }",
  }),
  // zod's error messages in other languages (z.locales.*): crm only ever uses English, which zod
  // sets itself; the forty others would be compiled on every request command (~350 kB).
  replaceModule('zod-english-only', {
    importer: /\/node_modules\/zod\/v4\/(core|classic|mini)\/[^/]+\.js$/,
    request: /^\.\.\/locales\/index\.js$/,
    contents: "export { default as en } from '../locales/en.js';",
  }),
  // commander loads child_process (and with it net, dgram, …) at start only for executable
  // subcommands, which crm has none of; this loads it when first used instead.
  replaceModule('commander-lazy-child-process', {
    importer: /\/node_modules\/commander\/lib\/command\.js$/,
    request: /^node:child_process$/,
    contents:
      "let cp; module.exports = new Proxy({}, { get: (_, name) => (cp ??= require('node:child_process'))[name] });",
  }),
  // `crm --help` (src/cli/root-help.ts) needs commander's Help class alone: not commander's index,
  // which loads every other part of commander (~9 ms). commander's exports map hides lib/help.js
  // from an import, so the replacement names the file.
  replaceModule('commander-help-only', {
    importer: /\/src\/cli\/root-help\.ts$/,
    request: /^@commander-js\/extra-typings$/,
    contents: `export { Help } from ${JSON.stringify(fileURLToPath(new URL('../node_modules/commander/lib/help.js', import.meta.url)))};`,
  }),
];

const REQUIRE_BANNER =
  "import { createRequire as __crmCreateRequire } from 'node:module'; const require = __crmCreateRequire(import.meta.url);";

const outdir = 'dist';
rmSync(new URL(`../${outdir}`, import.meta.url), { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: { 'cli/main': 'src/cli/main.ts', 'cli/root-help': 'src/cli/root-help.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.18',
  sourcemap: !release,
  // The bundled packages' licences ship whole in THIRD_PARTY_LICENSES.txt (below), not as comments.
  legalComments: 'none',
  metafile: true,
  chunkNames: 'chunks/[name]-[hash]',
  define: { __CRM_VERSION__: JSON.stringify(pkg.version) },
  plugins,
  // CommonJS dependencies (cli-table3) call require(); give the ESM bundle a real one (dropped
  // below from the chunks that never call it).
  banner: { js: REQUIRE_BANNER },
  logLevel: 'warning',
});
const missed = [...replacementHits].filter(([, hits]) => hits === 0).map(([name]) => name);
if (missed.length > 0) {
  console.error(
    `build: ${missed.join(', ')} found nothing to replace: a dependency changed under it (scripts/build.mjs)`,
  );
  process.exit(1);
}
// Most chunks never name `require` (esbuild's CommonJS wrappers get it from the one chunk that
// defines __require): each such chunk's banner only imported node:module and made a require, about
// 0.1 ms a chunk, some thirty on every request command. The line stays, empty, so source maps hold.
for (const file of Object.keys(metafile.outputs).filter((f) => f.endsWith('.js'))) {
  const text = readFileSync(file, 'utf8');
  const rest = text.slice(REQUIRE_BANNER.length);
  if (text.startsWith(REQUIRE_BANNER) && !/\brequire\b/.test(rest)) writeFileSync(file, rest);
}
// What bin/crm prints for `crm --help` without building the command tree (src/cli/root-help.ts):
// the template for any width, and the text at commander's default width (not a terminal, or 80
// columns), which then needs no module at all.
const { rootHelpTemplate } = await import(new URL(`../${outdir}/cli/main.js`, import.meta.url).href);
const { renderHelp } = await import(new URL(`../${outdir}/cli/root-help.js`, import.meta.url).href);
const template = rootHelpTemplate();
const rootHelp = { template, at80: renderHelp(template, undefined) };
writeFileSync(new URL(`../${outdir}/cli/root-help.json`, import.meta.url), JSON.stringify(rootHelp));
writeFileSync(
  new URL(`../${outdir}/THIRD_PARTY_LICENSES.txt`, import.meta.url),
  thirdPartyLicenses(Object.keys(metafile.inputs)),
);
