// `crm sandbox --tls`: a CA made at each start and the loopback names' certificate it signs (as a proxy
// presents them: NODE_EXTRA_CA_CERTS is tried as users do it). node:crypto makes no certificates, `openssl`
// is not everywhere and `selfsigned` brings @peculiar/x509 and pkijs: the few X.509 structures are DER here.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

/** A fresh CA and a server certificate (with its PKCS#8 key) for `names` (host names or IP literals), valid 30 days; all PEM. */
export function makeSandboxTls(names: string[], now = new Date()): { caPem: string; certPem: string; keyPem: string } {
  const ca = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const leaf = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const caName = name(`crm sandbox CA ${now.toISOString().slice(0, 19)}Z`);
  const caKeyId = keyId(ca.publicKey);
  // from an hour back (clocks differ a little) for 30 days
  const validity = seq(
    time(new Date(now.getTime() - 60 * 60 * 1000)),
    time(new Date(now.getTime() + 30 * 24 * 60 * 60 * 1000)),
  );
  const algorithm = seq(oid(OID.ecdsaWithSha256));
  /** A certificate the CA signs (RFC 5280, version 3). */
  const certificate = (subject: Buffer, publicKey: KeyObject, extensions: Buffer[]): string => {
    const serial = randomBytes(16);
    serial[0] = (serial[0]! & 0x3f) | 0x40; // positive and minimal (no leading zero), at most 20 octets
    const tbs = seq(
      tlv(0xa0, tlv(0x02, Buffer.from([2]))), // version 3
      tlv(0x02, serial),
      algorithm,
      caName,
      validity,
      subject,
      spki(publicKey),
      tlv(0xa3, seq(...extensions)),
    );
    const base64 = seq(tbs, algorithm, bitString(sign('sha256', tbs, ca.privateKey), 0)).toString('base64');
    return `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`; // PEM
  };
  const sans = names.map((n) => (isIP(n) ? tlv(0x87, ipBytes(n)) : tlv(0x82, Buffer.from(n, 'ascii'))));
  return {
    caPem: certificate(caName, ca.publicKey, [
      extension(OID.basicConstraints, true, seq(bool(true))),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x06]), 1)), // keyCertSign, cRLSign
      extension(OID.subjectKeyIdentifier, false, octets(caKeyId)),
    ]),
    certPem: certificate(name(names[0] ?? 'localhost'), leaf.publicKey, [
      extension(OID.basicConstraints, true, seq()),
      extension(OID.keyUsage, true, bitString(Buffer.from([0x80]), 7)), // digitalSignature
      extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
      extension(OID.subjectAltName, false, seq(...sans)),
      extension(OID.subjectKeyIdentifier, false, octets(keyId(leaf.publicKey))),
      extension(OID.authorityKeyIdentifier, false, seq(tlv(0x80, caKeyId))),
    ]),
    keyPem: leaf.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  };
}

const OID = {
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
};

// --- DER (X.690), only what the certificates above use ---

function tlv(tag: number, content: Buffer): Buffer {
  const bytes: number[] = []; // the length's big-endian bytes
  for (let v = content.length; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  const length = content.length < 0x80 ? [content.length] : [0x80 | bytes.length, ...bytes];
  return Buffer.concat([Buffer.from([tag, ...length]), content]);
}

const seq = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const octets = (b: Buffer) => tlv(0x04, b);
const bool = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const bitString = (b: Buffer, unusedBits: number) => tlv(0x03, Buffer.concat([Buffer.from([unusedBits]), b]));

function oid(text: string): Buffer {
  const arcs = text.split('.').map(Number);
  const out: number[] = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const base128: number[] = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) base128.unshift((v & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime (RFC 5280: dates before 2050), YYMMDDHHMMSSZ. */
function time(d: Date): Buffer {
  return tlv(0x17, Buffer.from(`${d.toISOString().replace(/[-:T]/g, '').slice(2, 14)}Z`, 'ascii')); // 2026-11-22T15:05:07.000Z → 261122150507Z
}

function name(commonName: string): Buffer {
  return seq(tlv(0x31, seq(oid(OID.commonName), tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

const spki = (publicKey: KeyObject) => publicKey.export({ type: 'spki', format: 'der' });
const keyId = (publicKey: KeyObject) => createHash('sha1').update(spki(publicKey)).digest();

/** The sandbox listens on loopback only: an IPv4 127.x.x.x or ::1. */
function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  if (ip === '::1') return Buffer.from([...Array<number>(15).fill(0), 1]);
  throw new Error(`not a loopback address: ${ip}`);
}
