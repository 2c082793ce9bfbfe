// A front before a test sandbox that holds answers until the test releases them (issue 32): a test
// that must act while a request is in flight waits until one is held, not for a time that a loaded
// machine can spend elsewhere. Each request is passed on to the sandbox at once (its write happens
// there); the answer of a request that `holds` picks waits in the front until release().
import type { ServerResponse } from 'node:http';
import { startHostile, type HostileRequest } from '../hostile/server.js';
import type { TestSandbox } from './sandbox.js';

export interface HeldAnswers {
  /** env for `crm` with the sandbox's key, pointed at the front */
  env: Record<string, string | undefined>;
  /** resolves when the first answer is held */
  firstHeld: Promise<void>;
  /** passes every held answer on (to a client that may be gone), and holds no more */
  release(): void;
  /** releases, closes the front and waits for every request it took to be answered by the sandbox */
  close(): Promise<void>;
}

/** headers that belong to one connection, not to the request or answer passed on */
const HOP = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding']);
const passed = (headers: Iterable<[string, string | string[] | undefined]>): Record<string, string> =>
  Object.fromEntries(
    [...headers].flatMap(([name, v]) =>
      v === undefined || HOP.has(name.toLowerCase()) ? [] : [[name, Array.isArray(v) ? v.join(', ') : v]],
    ),
  );

/** An answer of the sandbox to a request passed on, read whole. */
export interface PassedAnswer {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

/** Passes a request the front took on to `target` (the sandbox's origin), and reads its answer. */
export async function passOn(target: string, req: HostileRequest): Promise<PassedAnswer> {
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : req.body;
  const answer = await fetch(`${target}${req.url}`, {
    method: req.method,
    headers: passed(Object.entries(req.headers)),
    body,
  });
  return { status: answer.status, headers: answer.headers, bytes: Buffer.from(await answer.arrayBuffer()) };
}

/** Hands an answer passed on back to the client (none when it is gone: crm was killed). */
export function answerBack(res: ServerResponse, a: PassedAnswer): void {
  if (res.destroyed) return;
  res.writeHead(a.status, { ...passed(a.headers), 'content-length': String(a.bytes.length) });
  res.end(a.bytes);
}

/** `holds(req)`: whether to hold the answer to this request (asked once per request, in arrival order). */
export async function holdAnswers(t: TestSandbox, holds: (req: HostileRequest) => boolean): Promise<HeldAnswers> {
  const target = new URL(t.sb.baseUrl).origin;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let onHeld!: () => void;
  const firstHeld = new Promise<void>((r) => (onHeld = r));
  const taken = new Set<Promise<void>>();
  const h = await startHostile();
  const pass = async (req: HostileRequest, res: ServerResponse): Promise<void> => {
    const hold = holds(req);
    const answer = await passOn(target, req);
    if (hold) {
      onHeld();
      await released;
    }
    answerBack(res, answer);
  };
  h.route(undefined, /^\//, (req, res) => {
    const p = pass(req, res);
    taken.add(p);
    return p.finally(() => taken.delete(p));
  });
  return {
    env: t.env('admin', { CRM_BASE_URL: h.baseUrl, CRM_V1_BASE_URL: h.v1BaseUrl }),
    firstHeld,
    release,
    async close() {
      release();
      await h.close();
      await Promise.allSettled([...taken]);
    },
  };
}
