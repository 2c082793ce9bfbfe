// `crm --help` alone is printed by bin/crm from a template made at build time (src/cli/root-help.ts):
// at every width it must be what commander prints when the whole program runs.
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { renderHelp } from '../../../src/cli/root-help.js';
import { rootHelpTemplate } from '../../../src/cli/root-help-template.js';
import { fakeIO } from '../../helpers/fake-io.js';

// commander reads the width from process.stdout itself (isTTY, columns), not from the io it writes to
const stdout = process.stdout as { isTTY?: boolean; columns?: number };
const saved = { isTTY: stdout.isTTY, columns: stdout.columns };
afterEach(() => Object.assign(stdout, saved));

async function commanderHelp(width: number | undefined): Promise<string> {
  Object.assign(stdout, { isTTY: width !== undefined, columns: width });
  const f = fakeIO();
  const code = await main(['--help'], { io: f.io, env: { CRM_PROFILE: 'work', NO_COLOR: '1' }, handleSignals: false });
  expect(code).toBe(0);
  return f.out();
}

describe('the root help bin/crm prints without the command tree', () => {
  const template = rootHelpTemplate();

  it.each([undefined, 8, 20, 40, 52, 60, 79, 80, 81, 100, 132, 250])(
    'is commander’s own at width %s',
    async (width) => {
      const expected = await commanderHelp(width);
      expect(renderHelp(JSON.parse(JSON.stringify(template)), width)).toBe(expected);
    },
  );

  it('follows the terminal’s width, as commander does', async () => {
    expect(await commanderHelp(52)).not.toBe(await commanderHelp(undefined));
    expect(renderHelp(template, 52)).not.toBe(renderHelp(template, undefined));
  });

  it('leaves only the width-dependent parts to fill in', () => {
    expect(template.text).toMatch(/^Usage: crm \[options\] \[command\]\n/);
    expect(template.text).toContain('Exit codes:');
    expect(template.parts.length).toBeGreaterThan(20);
  });
});
