// Records back in line order with bounded memory: sorted runs spilled beside the target past a limit, merged at the end.
import { createReadStream } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { removeOnExit, tempPathFor } from './atomic-file.js';

type Entry = [line: number, seq: number, text: string];

const before = (a: Entry, b: Entry): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

export class SortedLines {
  private mem: Entry[] = [];
  private bytes = 0;
  private seq = 0;
  private readonly runs: string[] = [];
  private readonly forget: Array<() => void> = [];
  private chain: Promise<void> = Promise.resolve();
  /** the first write error, boxed so that even a thrown `undefined` counts; thrown again as caught */
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly target: string,
    private readonly limitBytes = 8 * 1024 * 1024,
  ) {}

  add(line: number, text: string): void {
    this.mem.push([line, this.seq++, text]);
    this.bytes += text.length + 32;
    if (this.bytes >= this.limitBytes) this.spill();
  }

  private spill(): void {
    const entries = this.mem.sort((a, b) => (before(a, b) ? -1 : 1));
    this.mem = [];
    this.bytes = 0;
    const path = `${tempPathFor(this.target)}${this.runs.length.toString(16).padStart(4, '0')}`;
    this.runs.push(path);
    this.forget.push(removeOnExit(path));
    const body = entries.map((e) => JSON.stringify(e)).join('\n') + '\n';
    this.chain = this.chain.then(async () => {
      if (this.failure !== undefined) return;
      try {
        await writeFile(path, body, { mode: 0o600, flag: 'wx' });
      } catch (err) {
        this.failure = { error: err };
      }
    });
  }

  /** Every record in (line, arrival) order, to `write`; `pause` is awaited now and then. */
  async drainTo(write: (text: string) => void, pause: () => Promise<void>): Promise<void> {
    await this.chain;
    if (this.failure !== undefined) throw this.failure.error;
    this.mem.sort((a, b) => (before(a, b) ? -1 : 1));
    if (this.runs.length === 0) {
      for (const e of this.mem) write(e[2]);
      this.mem = [];
      return;
    }
    const sources: Array<{ next: () => Promise<Entry | undefined>; head?: Entry }> = this.runs.map((path) => {
      const it = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })[
        Symbol.asyncIterator
      ]();
      return {
        next: async () => {
          const r = await it.next();
          return r.done ? undefined : (JSON.parse(r.value) as Entry);
        },
      };
    });
    let i = 0;
    const mem = this.mem;
    sources.push({ next: async () => mem[i++] });
    for (const s of sources) s.head = await s.next();
    let n = 0;
    for (;;) {
      let best: (typeof sources)[number] | undefined;
      for (const s of sources) if (s.head && (!best || before(s.head, best.head!))) best = s;
      if (!best) break;
      write(best.head![2]);
      best.head = await best.next();
      if (++n % 1000 === 0) await pause();
    }
    this.mem = [];
  }

  async dispose(): Promise<void> {
    await this.chain;
    this.mem = [];
    for (const r of this.runs) await unlink(r).catch(() => undefined);
    for (const f of this.forget.splice(0)) f();
  }
}
