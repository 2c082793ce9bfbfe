import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { isLoopbackHost, parseBaseUrl, resolveUrl } from '../../../src/http/url.js';

describe('parseBaseUrl', () => {
  it.each([
    'https://crm.example.com/api/v2',
    'http://127.0.0.1:4010/api/v2',
    'http://localhost:1/api/v2',
    'http://[::1]:8080/api/v1',
  ])('accepts %s', (u) => {
    expect(parseBaseUrl(u).href).toBe(u);
  });
  it.each([
    'http://crm.example.com/api/v2',
    'ftp://127.0.0.1/',
    'not a url',
    'https://user:pw@crm.example.com/api/v2',
    'http://127.0.0.1.evil.com/api/v2',
  ])('refuses %s', (u) => {
    expect(() => parseBaseUrl(u)).toThrow(UsageError);
  });
  it('drops trailing slashes', () => {
    expect(parseBaseUrl('https://h/api/v2//').href).toBe('https://h/api/v2');
  });
  it.each(['https://h/api/v2?x=1', 'https://h/api/v2#f'])('refuses a query or fragment: %s', (u) => {
    expect(() => parseBaseUrl(u)).toThrow(/query string or fragment/);
  });
  it('is the same rule as the config: *.localhost and localhost. are not loopback', () => {
    expect(() => parseBaseUrl('http://app.localhost:4010/api/v2')).toThrow(UsageError);
    expect(isLoopbackHost('localhost.')).toBe(false);
  });
  it('knows loopback hosts', () => {
    expect(isLoopbackHost('127.8.9.10')).toBe(true);
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('example.com')).toBe(false);
  });
});

describe('resolveUrl', () => {
  const base = parseBaseUrl('https://crm.example.com/api/v2');
  it('appends a relative path to the base path', () => {
    expect(resolveUrl(base, '/contacts/con_1').href).toBe('https://crm.example.com/api/v2/contacts/con_1');
    expect(resolveUrl(base, 'contacts').href).toBe('https://crm.example.com/api/v2/contacts');
  });
  it('keeps a query in the path and adds the query object, skipping undefined', () => {
    expect(resolveUrl(base, '/contacts?a=1', { limit: 10, cursor: undefined, x: false }).href).toBe(
      'https://crm.example.com/api/v2/contacts?a=1&limit=10&x=false',
    );
  });
  it('keeps a protocol-relative path on the base origin', () => {
    expect(resolveUrl(base, '//evil.com/x').origin).toBe('https://crm.example.com');
  });
  it.each(['/../../x', '/contacts/../../v1/people', '/%2e%2e/%2e%2e/admin', '../secret'])(
    'a relative path may not leave the API root: %s',
    (p) => {
      expect(() => resolveUrl(base, p)).toThrow(/leaves the API root/);
    },
  );
  it('a relative path with .. that stays under the root is fine', () => {
    expect(resolveUrl(base, '/contacts/../deals').pathname).toBe('/api/v2/deals');
  });
  it('a base without a path gives /contacts, not //contacts', () => {
    const bare = parseBaseUrl('http://127.0.0.1:4010/');
    expect(resolveUrl(bare, '/contacts', { limit: 1 }).href).toBe('http://127.0.0.1:4010/contacts?limit=1');
    expect(resolveUrl(bare, 'contacts').pathname).toBe('/contacts');
  });
  it('accepts an absolute URL on the same origin', () => {
    expect(resolveUrl(base, 'https://crm.example.com/api/v1/people/query').pathname).toBe('/api/v1/people/query');
  });
  it.each([
    'https://evil.com/api/v2/contacts',
    'http://crm.example.com/api/v2/contacts',
    'https://crm.example.com:8443/x',
  ])('refuses another origin: %s', (u) => {
    expect(() => resolveUrl(base, u)).toThrow(UsageError);
  });
});
