import { describe, expect, it } from 'vitest';
import { deriveV1BaseUrl, validateBaseUrl } from '../../../src/config/base-url.js';
import { isLoopbackHost } from '../../../src/http/url.js';
import { UsageError } from '../../../src/http/errors.js';

describe('validateBaseUrl', () => {
  it.each([
    ['https://crm.example.com/api/v2', 'https://crm.example.com/api/v2'],
    ['https://crm.example.com/api/v2/', 'https://crm.example.com/api/v2'],
    ['https://crm.example.com:8443/api/v2', 'https://crm.example.com:8443/api/v2'],
    ['HTTPS://CRM.Example.COM/api/v2', 'https://crm.example.com/api/v2'],
    ['  https://crm.example.com/api/v2  ', 'https://crm.example.com/api/v2'],
    ['http://localhost:4010/api/v2', 'http://localhost:4010/api/v2'],
    ['http://LOCALHOST/api/v2', 'http://localhost/api/v2'],
    ['http://127.0.0.1:4010/api/v2', 'http://127.0.0.1:4010/api/v2'],
    ['http://127.5.6.7/api/v2', 'http://127.5.6.7/api/v2'],
    ['http://127.255.255.255/api/v2', 'http://127.255.255.255/api/v2'],
    ['http://127.1/api/v2', 'http://127.0.0.1/api/v2'],
    ['http://[::1]:4010/api/v2', 'http://[::1]:4010/api/v2'],
    ['http://[0:0:0:0:0:0:0:1]/api/v2', 'http://[::1]/api/v2'],
    ['https://127.0.0.1/api/v2', 'https://127.0.0.1/api/v2'],
  ])('accepts %s', (url, normalized) => {
    expect(validateBaseUrl(url)).toBe(normalized);
  });

  it.each([
    ['http://example.com/api/v2', /http:.*unencrypted.*loopback/],
    ['http://crm.example.com:4010/api/v2', /http:/],
    ['http://128.0.0.1/api/v2', /http:/],
    ['http://10.0.0.1/api/v2', /http:/],
    ['http://[::2]/api/v2', /http:/],
    ['http://localhost.evil.com/api/v2', /http:/],
    ['http://127.0.0.1.nip.io/api/v2', /http:/],
    // the system resolver may send these to DNS: not loopback for an unencrypted key (one rule with src/http/url.ts)
    ['http://api.localhost:4010/api/v2', /http:/],
    ['http://localhost.:4010/api/v2', /http:/],
    ['ftp://127.0.0.1/api/v2', /must use https/],
    ['file:///etc/passwd', /must use https/],
    ['crm.example.com/api/v2', /not a valid URL/],
    ['', /not a valid URL/],
    ['https://user:pw@crm.example.com/api/v2', /user name or password/],
    ['https://crm.example.com/api/v2?x=1', /query string/],
    ['https://crm.example.com/api/v2#x', /fragment/],
  ])('refuses %s', (url, message) => {
    expect(() => validateBaseUrl(url)).toThrow(UsageError);
    expect(() => validateBaseUrl(url)).toThrow(message);
  });

  it('names what it checked', () => {
    expect(() => validateBaseUrl('http://example.com/api/v2', 'CRM_BASE_URL')).toThrow(
      /^The CRM_BASE_URL "http:\/\/example\.com"/,
    );
  });
});

describe('validateBaseUrl: the API root', () => {
  it.each([
    ['http://127.0.0.1:4010', 'http://127.0.0.1:4010/api/v2'],
    ['http://127.0.0.1:4010/', 'http://127.0.0.1:4010/api/v2'],
    ['http://127.0.0.1:4010///', 'http://127.0.0.1:4010/api/v2'],
    ['https://crm.example.com/api', 'https://crm.example.com/api/v2'],
    ['https://crm.example.com/api/', 'https://crm.example.com/api/v2'],
  ])('completes a server address %s to %s, with a notice', (url, completed) => {
    const notices: string[] = [];
    expect(validateBaseUrl(url, '--base-url', { notice: (m) => notices.push(m) })).toBe(completed);
    expect(notices).toEqual([expect.stringContaining(`using ${completed} (the version 2 root)`)]);
    expect(notices[0]).toContain('--base-url');
  });

  it('completes a version 1 root with /api/v1', () => {
    expect(validateBaseUrl('http://127.0.0.1:4010', '--v1-base-url', { version: 'v1' })).toBe(
      'http://127.0.0.1:4010/api/v1',
    );
  });

  it.each(['https://crm.example.com/api/v2', 'https://gw.example.com/crm/api/v2', 'https://crm.example.com/custom'])(
    'takes %s as it is, silently',
    (url) => {
      const notices: string[] = [];
      expect(validateBaseUrl(url, '--base-url', { notice: (m) => notices.push(m) })).toBe(url);
      expect(notices).toEqual([]);
    },
  );

  it('refuses a version 1 root as the version 2 root, with the fix in the hint', () => {
    const err = (() => {
      try {
        validateBaseUrl('http://127.0.0.1:4010/api/v1/', 'CRM_BASE_URL');
      } catch (e) {
        return e as UsageError;
      }
      throw new Error('accepted');
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toMatch(/CRM_BASE_URL "http:\/\/127\.0\.0\.1:4010\/api\/v1" is a version 1 root/);
    expect(err.hint).toContain('Use http://127.0.0.1:4010/api/v2');
  });

  it('refuses a version 2 root as the version 1 root', () => {
    expect(() => validateBaseUrl('https://h/api/v2', '--v1-base-url', { version: 'v1' })).toThrow(
      /is a version 2 root/,
    );
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['localhost', true],
    ['localhost.', false],
    ['app.localhost', false],
    ['127.0.0.1', true],
    ['127.5.6.7', true],
    ['[::1]', true],
    ['::1', false], // URL keeps the brackets; a bare ::1 is not a URL hostname
    ['128.0.0.1', false],
    ['example.com', false],
    ['127.0.0.1.example.com', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('deriveV1BaseUrl', () => {
  it.each([
    ['https://crm.example.com/api/v2', 'https://crm.example.com/api/v1'],
    ['https://crm.example.com/api/v2/', 'https://crm.example.com/api/v1'],
    ['http://127.0.0.1:4010/api/v2', 'http://127.0.0.1:4010/api/v1'],
    ['https://gw.example.com/crm/api/v2', 'https://gw.example.com/crm/api/v1'],
    ['https://api.v2.example.com/api/v2', 'https://api.v2.example.com/api/v1'],
    ['https://example.com/api/v2/api/v2', 'https://example.com/api/v2/api/v1'],
    ['https://crm.example.com/api/v3', undefined],
    ['https://crm.example.com/api/v2x', undefined],
    ['https://crm.example.com/', undefined],
  ])('%s → %s', (v2, v1) => {
    expect(deriveV1BaseUrl(v2)).toBe(v1);
  });
});
