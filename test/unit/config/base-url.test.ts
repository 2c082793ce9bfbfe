import { describe, expect, it } from 'vitest';
import { deriveV1BaseUrl, isLoopbackHost, validateBaseUrl } from '../../../src/config/base-url.js';
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
    ['http://api.localhost:4010/api/v2', 'http://api.localhost:4010/api/v2'],
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
    expect(() => validateBaseUrl('http://example.com/api/v2', 'CRM_BASE_URL')).toThrow(/^The CRM_BASE_URL "http:\/\/example\.com"/);
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['localhost', true],
    ['localhost.', true],
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
