// What a failed TLS handshake means (network-error.ts's wording of the TLS codes): an untrusted CA and
// what is wrong with NODE_EXTRA_CA_CERTS when it is set, a wrong name, an expired certificate.
import { readFileSync, statSync } from 'node:fs';
import { fsReason } from '../util/fs-error.js';

/** TLS codes that mean "this certificate is not signed by a CA Node trusts". */
export const UNTRUSTED =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_UNTRUSTED|UNABLE_TO_GET_CRL)$/;

/** A TLS failure: an untrusted CA (NODE_EXTRA_CA_CERTS), a wrong name, an expired certificate. */
export function describeTls(
  code: string,
  raw: string,
  via: string,
  host: string,
  extraCa: string | undefined,
  /** the host came in an API answer (a link), not from the base URL */
  link?: boolean,
): { message: string; hint?: string } {
  const untrusted = UNTRUSTED.test(code);
  const what = untrusted
    ? "the server's certificate is not signed by a CA this machine trusts"
    : code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? `the server's certificate is not for ${host}`
      : code === 'CERT_HAS_EXPIRED'
        ? "the server's certificate has expired"
        : 'the secure connection failed';
  return {
    message: `TLS: ${what} (${raw})${via}`,
    hint: untrusted
      ? extraCa
        ? `NODE_EXTRA_CA_CERTS names ${extraCa}, ${extraCaProblem(extraCa)}: point it at the CA certificate of the proxy that inspects TLS or of the private CA (a PEM file)`
        : 'a company proxy that inspects TLS, or a private CA, signs with its own CA: point NODE_EXTRA_CA_CERTS at that CA certificate (a PEM file) and run crm again'
      : `check ${link ? `that ${host}, where the API's links point, is the host meant` : 'the base URL'}; behind a TLS-inspecting proxy, NODE_EXTRA_CA_CERTS names its CA certificate (a PEM file)`,
  };
}

/** Why the certificates of NODE_EXTRA_CA_CERTS (read by Node at start, a warning at most) did not help. */
function extraCaProblem(path: string): string {
  let text: string;
  try {
    if (statSync(path).isDirectory()) return 'which cannot be read (a folder, not a file)';
    text = readFileSync(path, 'latin1');
  } catch (err) {
    return `which cannot be read (${fsReason(err)})`;
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    return 'which holds no PEM certificate (-----BEGIN CERTIFICATE-----)';
  return "but no certificate in it signed this server's";
}
