// `npm run demo`: starts the sandbox with sample data, saves its key in a throw-away profile, and
// runs the jobs crm is for, printing each command before it runs. Nothing leaves this machine.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { CRM, startSandboxChild } from '../bench/sandbox-child.mjs';

const work = mkdtempSync(join(tmpdir(), 'crm-demo-'));
// `crm` on PATH: each command runs as the shell line printed, so what is shown is what works when pasted
const bin = join(work, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'crm'), `#!/bin/sh\nexec '${process.execPath}' '${CRM}' "$@"\n`);
chmodSync(join(bin, 'crm'), 0o755);
const env = { ...process.env, CRM_CONFIG_DIR: join(work, 'config'), PATH: `${bin}${delimiter}${process.env.PATH}` };
const bold = (s) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[22m` : s);
/** one word as a POSIX shell reads it back */
const quote = (word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);

function crm(args, { input, quiet = false } = {}) {
  const line = `crm ${args.map(quote).join(' ')}`;
  console.log(`\n${bold(`$ ${line}`)}`);
  const r = spawnSync('/bin/sh', ['-c', line], {
    env,
    cwd: work,
    input,
    stdio: [input === undefined ? 'ignore' : 'pipe', quiet ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  });
  if (r.status !== 0 && r.status !== 9) throw new Error(`${line} exited ${r.status}`);
  return r;
}

console.log('Starting the sandbox (a local emulator of the whole API) with sample data…');
const sb = await startSandboxChild(['--seed', '42'], { banner: true });
try {
  crm(['keys', 'add', 'demo', '--base-url', sb.base_url, '--default'], { input: sb.keys.admin });
  crm(['keys', 'add', 'demo', '--v1'], { input: sb.keys.v1 });
  crm(['keys-check']);

  // A CSV like the ones admins import: 2,000 people, three of them broken.
  const rows = ['First Name,Last Name,Email,Tags:list,Score:number'];
  for (let i = 1; i <= 2000; i++) rows.push(`Person,No${i},person${i}@example.com,demo;import,${i % 100}`);
  rows.push(
    'Broken,Row,,demo,1',
    'Bad,Score,bad.score@example.com,demo,lots',
    'Too,Many,cols@example.com,demo,3,extra',
  );
  const csv = join(work, 'people.csv');
  writeFileSync(csv, `${rows.join('\n')}\n`);
  crm(['batch', 'contacts', csv, '--results', join(work, 'created.csv')]);
  console.log(`\nRejected rows, ready to fix and re-import:\n${readFileSync(`${csv}.rejects.csv`, 'utf8')}`);
  crm(['batch', 'contacts', csv]); // the rerun sends nothing: every chunk is in the journal

  // The admin's real job: make the CRM agree with a list. A trade show's 1,000 visitors: 600 are the
  // people just imported (emails typed in capitals; 60 with a new title), 400 are new.
  const show = ['email,first_name,last_name,title'];
  for (let i = 1; i <= 600; i++) show.push(`PERSON${i}@EXAMPLE.COM,Person,No${i},${i % 10 === 0 ? 'Buyer' : ''}`);
  for (let i = 1; i <= 400; i++) show.push(`visitor${i}@example.com,Visitor,No${i},Engineer`);
  const trade = join(work, 'trade-show.csv');
  writeFileSync(trade, `${show.join('\n')}\n`);
  crm(['batch', 'contacts', trade, '--match', 'email', '--dry-run', '-o', 'table']);
  crm(['batch', 'contacts', trade, '--match', 'email']);
  crm(['batch', 'contacts', trade, '--match', 'email']); // again: the CRM agrees, nothing is sent

  crm(['contacts', 'list', '--limit', '5', '-o', 'table', '--fields', 'id,email,first_name,last_name']);
  // its JSON is read here for the id, and shown as it came
  const created = crm(['deals', 'create', '--set', 'name=Demo renewal', '--set', 'amount:=48000', '-o', 'json'], {
    quiet: true,
  }).stdout;
  process.stdout.write(created);
  const deal = JSON.parse(created);
  const contact = readFileSync(join(work, 'created.csv'), 'utf8').split('\n')[1].split(',')[1];
  crm(['links', 'add', 'deals', deal.id, 'contacts', contact, '--type', 'DECISION_MAKER', '-o', 'table']);
  crm(['links', 'list', 'deals', deal.id, 'contacts', '-o', 'table', '--fields', 'id,email,link.type']);

  crm(['recordings', 'list', '--has-transcript', '-o', 'table', '--limit', '5']);
  crm(['recordings', 'download', '--dir', join(work, 'transcripts')]);
  crm(['v1', 'people', 'query', '--limit', '3', '-o', 'table']);
  console.log(`\nDone. Files are in ${work}; the sandbox is stopped.\nTry it yourself: npm run sandbox`);
} finally {
  await sb.stop();
  if (process.env.CRM_DEMO_KEEP !== '1') rmSync(join(work, 'config'), { recursive: true, force: true });
}
