// The certificates of `crm sandbox --tls`, checked by Node's own X.509 parser and TLS stack: the CA
// signs the server certificate, its names are the loopback ones, and a client trusting the CA
// connects while one that does not is refused.
import { X509Certificate } from 'node:crypto';
import { createServer, request } from 'node:https';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { makeSandboxTls } from '../../../src/sandbox/tls-cert.js';

const tls = makeSandboxTls(['localhost', '127.0.0.1', '::1'], new Date('2026-01-02T03:04:05Z'));

it('makes a CA and a server certificate it signs, for the loopback names, valid 30 days', () => {
  const ca = new X509Certificate(tls.caPem);
  const cert = new X509Certificate(tls.certPem);
  expect(ca.ca).toBe(true);
  expect(cert.ca).toBe(false);
  expect(cert.checkIssued(ca)).toBe(true);
  expect(cert.verify(ca.publicKey)).toBe(true);
  expect(ca.verify(ca.publicKey)).toBe(true);
  expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
  expect(new Date(cert.validFrom).toISOString()).toBe('2026-01-02T02:04:05.000Z');
  expect(new Date(cert.validTo).toISOString()).toBe('2026-02-01T03:04:05.000Z');
  expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // Node's keyUsage is the extended key usage: serverAuth
});

function get(host: string, port: number, ca?: string): Promise<string> {
  return new Promise((resolve) => {
    request({ host, port, ca, path: '/', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    })
      .on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`))
      .end();
  });
}

it('serves TLS that verifies with the CA and only with it', async () => {
  const fresh = makeSandboxTls(['localhost', '127.0.0.1', '::1']);
  const server = createServer({ key: fresh.keyPem, cert: fresh.certPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  try {
    expect(await get('127.0.0.1', port, fresh.caPem)).toBe('ok');
    expect(await get('localhost', port, fresh.caPem)).toBe('ok');
    expect(await get('127.0.0.1', port)).toBe('error UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(await get('127.0.0.1', port, tls.caPem)).toMatch(/^error /); // another start's CA
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
