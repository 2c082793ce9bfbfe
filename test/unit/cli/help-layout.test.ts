// Group help at 80 columns (issue 17): the commands come before the global options (gh lists
// inherited flags last), and the descriptions get the width: `crm links --help` left them 25
// columns, the command column being as wide as the longest argument list.
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { buildProgram, globalOptionsLast } from '../../../src/cli/program.js';
import { fakeIO } from '../../helpers/fake-io.js';

async function help(words: string[]): Promise<string> {
  const f = fakeIO();
  expect(await main([...words, '--help'], { io: f.io, env: {}, handleSignals: false })).toBe(0);
  return f.out();
}

const groups = buildProgram({
  io: fakeIO().io,
  env: {},
  signal: new AbortController().signal,
  jsonErrors: false,
  verbose: false,
})
  .commands.filter((c) => c.commands.length > 0)
  .map((c) => c.name());

describe('group help at 80 columns', () => {
  it.each(groups)(
    'crm %s --help: commands, then global options; no line over 80; descriptions from column ≤ 30',
    async (group) => {
      const text = await help([group]);
      const commands = text.indexOf('\nCommands:\n');
      const globals = text.indexOf('\nGlobal Options:\n');
      expect(commands, text).toBeGreaterThan(0);
      expect(globals, text).toBeGreaterThan(commands);
      for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
      const item = text.split('\n').find((l) => /^ {2}\S.* {2,}\S/.test(l))!;
      expect(item.length - item.replace(/^ {2}\S+(?: \S+)* +/, '').length, item).toBeLessThanOrEqual(30);
    },
  );

  it('globalOptionsLast moves only that section, keeping the others in order', () => {
    const text = 'Usage: x\n\nOptions:\n  -h\n\nGlobal Options:\n  --a  a\n  --b  b\n\nCommands:\n  c  c\n';
    expect(globalOptionsLast(text)).toBe(
      'Usage: x\n\nOptions:\n  -h\n\nCommands:\n  c  c\n\nGlobal Options:\n  --a  a\n  --b  b\n',
    );
    expect(globalOptionsLast('Usage: x\n')).toBe('Usage: x\n');
  });
});
