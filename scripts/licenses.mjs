// The licence notices of the packages inside the bundle. MIT, ISC, BSD and Apache licences ask
// that their text travel with every copy, and the bundle copies these packages' code into dist/.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// The innermost node_modules/<name> or node_modules/@scope/<name> of an input path.
const PACKAGE_DIR = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//;
const LICENCE_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i;

/** The text of dist/THIRD_PARTY_LICENSES.txt for the bundle whose esbuild input paths are given. */
export function thirdPartyLicenses(inputs) {
  const dirs = new Set(inputs.map((input) => PACKAGE_DIR.exec(input.split(path.sep).join('/'))?.[1]).filter(Boolean));
  const entries = new Map();
  for (const dir of dirs) {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const files = readdirSync(dir)
      .filter((f) => LICENCE_FILE.test(f))
      .sort();
    // A notice we cannot ship is a build error, not a silent gap in the tarball.
    if (files.length === 0) throw new Error(`${dir}: no licence file to ship with the bundle`);
    const texts = files.map((f) => readFileSync(path.join(dir, f), 'utf8').trim());
    entries.set(`${pkg.name}@${pkg.version}`, `${pkg.name} ${pkg.version} (${pkg.license})\n\n${texts.join('\n\n')}`);
  }
  const names = [...entries.keys()].sort();
  const rule = '-'.repeat(78);
  return [
    'crm bundles the following packages into dist/. Their licences follow.',
    '',
    ...names.map((n) => `  ${n}`),
    '',
    ...names.flatMap((n) => [rule, entries.get(n), '']),
  ].join('\n');
}
