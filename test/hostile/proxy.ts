// A small forward proxy for tests, as a company's would be: it opens CONNECT tunnels (piping the
// two sockets, so it sees only the target and encrypted bytes) and records what it sees: every
// CONNECT target with its headers, every byte the client sent into a tunnel, and every plain HTTP
// request (absolute-form, `GET http://host/path`), which it answers 502 without forwarding.
// It can ask for a user name and password (407, or 401 as tinyproxy answers a wrong one), refuse every tunnel with a status, or misbehave:
// close the connection on CONNECT, never answer it, or answer it with bytes that are not HTTP. It can
// be restarted as a proxy killed and started again (`restart`): connections reset, then refused for a while.
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/** no proxy variable from the machine running the tests */
export const NO_PROXY_VARS = {
  HTTPS_PROXY: undefined,
  https_proxy: undefined,
  HTTP_PROXY: undefined,
  http_proxy: undefined,
  NO_PROXY: undefined,
  no_proxy: undefined,
};

export interface ProxySeen {
  /** `host:port` of each CONNECT, in order */
  connects: Array<{ target: string; headers: IncomingMessage['headers'] }>;
  /** each plain-HTTP request (a request the proxy would forward in the clear) */
  plain: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }>;
  /** what clients sent into the tunnels, all of it (TLS: encrypted) */
  tunnelled: Buffer[];
}

export interface TestProxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  seen: ProxySeen;
  close(): Promise<void>;
  /** as a proxy killed and started again: every connection reset, new ones refused for `downMs`, then the same port again */
  restart(downMs: number): Promise<void>;
}

export interface ProxyOptions {
  /**
   * require `Proxy-Authorization: Basic base64(user:password)`: the status when it is missing
   * (`missing`, default 407) and when it is wrong (`wrong`, default 407; tinyproxy answers 401)
   */
  auth?: { user: string; password: string; missing?: number; wrong?: number };
  /** answer every CONNECT with this status instead of opening the tunnel */
  refuseWith?: number;
  /** with refuseWith: open the first this many tunnels, refuse the later ones */
  refuseAfter?: number;
  /** with refuseWith: refuse only tunnels to this `host:port` (a port policy) */
  refuseOnly?: string;
  /** misbehave on every CONNECT: close the connection, never answer, or answer garbage (not HTTP) */
  misbehave?: 'drop' | 'silent' | 'garbage';
}

export async function startProxy(opts: ProxyOptions = {}): Promise<TestProxy> {
  const seen: ProxySeen = { connects: [], plain: [], tunnelled: [] };
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    seen.plain.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    res.writeHead(502, { 'content-type': 'text/plain' }).end('this test proxy forwards nothing in the clear');
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = req.url ?? '';
    seen.connects.push({ target, headers: req.headers });
    const expected = opts.auth && `Basic ${Buffer.from(`${opts.auth.user}:${opts.auth.password}`).toString('base64')}`;
    if (expected && req.headers['proxy-authorization'] !== expected) {
      const status = (req.headers['proxy-authorization'] ? opts.auth!.wrong : opts.auth!.missing) ?? 407;
      client.end(
        `HTTP/1.1 ${status} Authentication\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n`,
      );
      return;
    }
    if (opts.misbehave === 'drop') {
      client.destroy();
      return;
    }
    if (opts.misbehave === 'silent') return; // the socket stays open, unanswered, until the client goes
    if (opts.misbehave === 'garbage') {
      client.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
      return;
    }
    if (
      opts.refuseWith &&
      seen.connects.length > (opts.refuseAfter ?? 0) &&
      (opts.refuseOnly === undefined || opts.refuseOnly === target)
    ) {
      client.end(`HTTP/1.1 ${opts.refuseWith} Refused\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(target);
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(Number(m[2]), m[1]!.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) {
        seen.tunnelled.push(head);
        upstream.write(head);
      }
      client.on('data', (d: Buffer) => seen.tunnelled.push(Buffer.from(d)));
      client.pipe(upstream);
      upstream.pipe(client);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
    async restart(downMs) {
      for (const s of sockets) s.resetAndDestroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
  };
}
