// Startup guard: importing the config module (which resolveProfile lives in) must not pull conf or
// zod in statically; they load only when the store is opened (ARCHITECTURE "Startup is a feature").
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));
// Static `import … from 'x'` and `export … from 'x'`, not `import type` and not dynamic import().
const STATIC = /^(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm;

function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(STATIC)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  };
  visit(path.join(SRC, entry));
  return { files, packages };
}

describe('config startup cost', () => {
  it('src/config/index.ts statically imports neither conf nor zod nor undici', () => {
    const { packages } = staticGraph('config/index.ts');
    expect([...packages].filter((p) => /^(conf|zod|undici)(\/|$)/.test(p))).toEqual([]);
  });
  it('store.ts loads conf and the zod schema dynamically', () => {
    const store = fs.readFileSync(path.join(SRC, 'config/store.ts'), 'utf8');
    expect(store).toMatch(/import\('conf'\)/);
    expect(store).toMatch(/import\('\.\/schema\.js'\)/);
  });
});
