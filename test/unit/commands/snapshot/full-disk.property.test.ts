// A full disk during `crm snapshot` (issue 28), injected: the N-th write of a file (a page of the partial file,
// a cursor state, the manifest) writes part of its bytes and fails with ENOSPC. The run stops with a DiskError
// (exit 8) naming that file, its folder's free space and the command that resumes, never "a bug in crm"; the
// same command, once there is room, gives a complete folder holding each record once, exactly as listed — on a
// collection that shifts while it is read, so records come twice across the stop too.
import { open } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runSnapshot } from '../../../../src/commands/snapshot/run.js';
import { DiskError } from '../../../../src/http/errors.js';
import type { HttpClient, Page } from '../../../../src/http/types.js';
import { fakeCtx } from '../../../helpers/fake-ctx.js';
import { runs } from '../../../helpers/property.js';
import { tempDir } from '../../../helpers/temp.js';

const BASE_URL = 'http://crm.test/api/v2';
type Rec = { id: string; n: number };

/** A list by position: after each page a record is put first, so the next page starts with one already served. */
function shiftingClient(total: number): { client: HttpClient; served: Set<string> } {
  const records: Rec[] = Array.from({ length: total }, (_, n) => ({ id: `con_${n}`, n }));
  const served = new Set<string>();
  let fresh = total;
  const pages = async function* (_path: string, o: { cursor?: string; limit?: number } = {}) {
    let at = Number(o.cursor ?? 0);
    for (;;) {
      const data = records.slice(at, at + (o.limit ?? 100));
      data.forEach((r) => served.add(r.id));
      at += data.length;
      const more = at < records.length;
      records.unshift({ id: `con_${fresh}`, n: fresh++ });
      yield { data, endCursor: String(at), hasNextPage: more } as unknown as Page;
      if (!more) return;
    }
  };
  const client = { baseUrl: BASE_URL, stats: { requests: 0, retries: 0 }, pages } as unknown as HttpClient;
  return { client, served };
}

const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

type Write = (this: unknown, data: unknown, ...rest: unknown[]) => Promise<unknown>;

/** The FileHandle class's methods that write, spied on: `wrap(method, real)` is what they do instead. */
async function spyWrites(methods: Array<'appendFile' | 'write'>, wrap: (real: Write) => Write): Promise<void> {
  const probe = await open(join(tempDir('crm-probe-'), 'x'), 'w');
  const proto = Object.getPrototypeOf(probe) as { appendFile: Write; write: Write };
  await probe.close();
  for (const method of methods) {
    const real = proto[method];
    vi.spyOn(proto, method).mockImplementation(wrap(real));
  }
}

/** The N-th write (appendFile or write) of any file fails with ENOSPC after writing part of its bytes. */
async function failNthWrite(n: number, part: number): Promise<void> {
  let count = 0;
  await spyWrites(
    ['appendFile', 'write'],
    (real) =>
      async function (this: unknown, data: unknown, ...rest: unknown[]) {
        if (++count !== n) return real.call(this, data, ...rest);
        const buf = Buffer.from(data as string);
        await real.call(this, buf.subarray(0, Math.floor(buf.length * part)));
        throw enospc();
      },
  );
}
afterEach(() => vi.restoreAllMocks());

/**
 * A disk filling up mid-page: the N-th write of bytes writes part of them and says so (a short write, no error),
 * the writes after it fail with ENOSPC (the text files crm writes whole are left alone).
 */
async function shortWriteAt(n: number, part: number): Promise<void> {
  let count = 0;
  await spyWrites(
    ['write'],
    (real) =>
      async function (this: unknown, data: unknown, ...rest: unknown[]) {
        if (!Buffer.isBuffer(data) || ++count < n) return real.call(this, data, ...rest);
        if (count > n) throw enospc();
        return real.call(this, data.subarray(0, Math.floor(data.length * part)));
      },
  );
}

const snapshot = (dir: string, client: HttpClient) => {
  const ctx = fakeCtx({ client: async () => client, globals: { output: 'json' } });
  const argv = ['snapshot', dir, '--resources', 'contacts'];
  return runSnapshot({ dir, resources: 'contacts', argv }, ctx);
};

describe('crm snapshot on a full disk', () => {
  it('any write failing: exit 8 naming the file and the command that resumes; then the same command completes, each record once', async () => {
    let stopped = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 12 }), fc.double({ min: 0, max: 1, noNaN: true }), async (n, part) => {
        const dir = join(tempDir('crm-full-'), 'snap');
        const { client, served } = shiftingClient(450);
        await failNthWrite(n, part);
        const err = await snapshot(dir, client).then(
          () => undefined,
          (e: unknown) => e,
        );
        vi.restoreAllMocks();
        if (err !== undefined) {
          stopped++;
          expect(err).toBeInstanceOf(DiskError);
          const e = err as DiskError;
          expect(e.exitCode).toBe(8);
          expect(e.code).toBe('DISK_FULL');
          expect(e.message).toMatch(
            new RegExp(`^cannot write the snapshot file ${dir}/\\S+: the disk is full; \\d+ KiB free in ${dir}; `),
          );
          expect(e.hint).toContain(`then run the same command to resume: crm snapshot ${dir} --resources contacts`);
          await snapshot(dir, client);
        }
        const lines = readFileSync(join(dir, 'contacts.ndjson'), 'utf8').split('\n').filter(Boolean);
        const records = lines.map((l) => JSON.parse(l) as Rec);
        expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
        expect(new Set(records.map((r) => r.id))).toEqual(served);
        for (const r of records) expect(r).toEqual({ id: r.id, n: Number(r.id.slice(4)) });
        const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Record<string, any>;
        expect(manifest).toMatchObject({ complete: true, collections: { contacts: { records: records.length } } });
      }),
      runs(30),
    );
    expect(stopped).toBeGreaterThan(15); // the writes do fail (a snapshot of 450 records makes about 13)
  }, 90_000);

  it('a short write (the disk filling mid-page) is never taken for the whole page: the rerun gives every record once, whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        async (n, part) => {
          const dir = join(tempDir('crm-full-'), 'snap');
          const { client, served } = shiftingClient(450);
          await shortWriteAt(n, part);
          await snapshot(dir, client).catch(() => undefined);
          vi.restoreAllMocks();
          await snapshot(dir, client);
          const text = readFileSync(join(dir, 'contacts.ndjson'), 'utf8');
          const records = text
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Rec);
          expect(new Set(records.map((r) => r.id))).toEqual(served);
          expect(records).toHaveLength(served.size);
        },
      ),
      runs(15),
    );
  }, 60_000);
});
