// Which requests go through which proxy (src/http/proxy-env.ts): curl's variables, our two rules
// (http and loopback never proxied, unless `<-loopback>` for https), and NO_PROXY's forms.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { notBypassed, proxyFor, routeFor, routeText } from '../../../src/http/proxy-env.js';
import { runs } from '../../helpers/property.js';

const P = 'http://proxy.corp:3128';
const via = (target: string, env: Record<string, string | undefined>) => proxyFor(new URL(target), env)?.variable;

describe('proxyFor', () => {
  it('uses https_proxy, else HTTPS_PROXY, for https targets; never HTTP_PROXY', () => {
    expect(via('https://api.example.com/', { HTTPS_PROXY: P })).toBe('HTTPS_PROXY');
    expect(via('https://api.example.com/', { https_proxy: P, HTTPS_PROXY: 'http://other:1' })).toBe('https_proxy');
    expect(via('https://api.example.com/', { HTTP_PROXY: P, http_proxy: P })).toBeUndefined();
  });

  it('never proxies http:// targets (only loopback may be http; the key would go in the clear)', () => {
    for (const env of [{ HTTP_PROXY: P, HTTPS_PROXY: P, NO_PROXY: '<-loopback>' }, { http_proxy: P }]) {
      expect(via('http://127.0.0.1:4010/api/v2', env)).toBeUndefined();
    }
  });

  it.each(['https://localhost:4010/', 'https://127.0.0.1/', 'https://127.9.8.7:1/', 'https://[::1]:443/'])(
    'does not proxy loopback %s, unless <-loopback>',
    (u) => {
      expect(via(u, { HTTPS_PROXY: P })).toBeUndefined();
      expect(via(u, { HTTPS_PROXY: P, NO_PROXY: 'corp.example,<-loopback>' })).toBe('HTTPS_PROXY');
    },
  );

  it.each([
    ['*', 'https://api.example.com/', true],
    ['example.com', 'https://example.com/', true],
    ['example.com', 'https://api.example.com/', true],
    ['.example.com', 'https://api.example.com/', true],
    ['*.example.com', 'https://api.example.com/', true],
    ['.example.com', 'https://example.com/', true],
    ['example.com', 'https://badexample.com/', false],
    ['EXAMPLE.com', 'https://api.Example.COM/', true],
    ['api.example.com:8443', 'https://api.example.com:8443/', true],
    ['api.example.com:8443', 'https://api.example.com/', false],
    ['api.example.com:443', 'https://api.example.com/', true],
    ['10.0.0.0/8', 'https://10.1.2.3/', true],
    ['10.0.0.0/8', 'https://11.1.2.3/', false],
    ['192.168.1.7', 'https://192.168.1.7:9000/', true],
    ['fd00::/8', 'https://[fd12::1]/', true],
    ['fd00::/8', 'https://[fe80::1]/', false],
    ['2001:db8::ffff:1.2.3.0/120', 'https://[2001:db8::ffff:102:304]/', true],
    ['2001:db8::ffff:1.2.3.0/120', 'https://[2001:db8::ffff:102:404]/', false],
    ['010.0.0.0/8', 'https://10.1.2.3/', true],
    ['10.0.0.0/8', 'https://[::ffff:10.1.2.3]/', false],
    ['10.0.0.0/33', 'https://10.1.2.3/', false],
    ['256.0.0.0/8', 'https://10.1.2.3/', false],
    ['example.com/8', 'https://10.1.2.3/', false],
    ['2001:db8::5', 'https://[2001:db8::5]/', true],
    ['[2001:db8::5]:8443', 'https://[2001:db8::5]:8443/', true],
    ['other.com, example.com', 'https://api.example.com/', true],
    ['other.com example.com', 'https://api.example.com/', true],
    ['', 'https://api.example.com/', false],
    ['.0.0.1', 'https://10.0.0.1/', false],
    ['0.0.1', 'https://10.0.0.1/', false],
    ['*.0.0.1', 'https://10.0.0.1/', false],
    ['.1', 'https://10.0.0.1/', false],
    ['10.0.0.1', 'https://10.0.0.1/', true],
    ['010.000.000.001', 'https://10.0.0.1/', true],
    ['::1:2', 'https://[2001:db8::1:2]/', false],
    ['2001:db8:0:0:0:0:1:2', 'https://[2001:db8::1:2]/', true],
    ['example.com', 'https://10.0.0.1/', false],
  ])('NO_PROXY=%s, target %s: bypassed %s', (noProxy, target, bypass) => {
    expect(via(target, { HTTPS_PROXY: P, NO_PROXY: noProxy }) === undefined).toBe(bypass);
    expect(via(target, { HTTPS_PROXY: P, no_proxy: noProxy }) === undefined).toBe(bypass);
  });

  it('a host listed in NO_PROXY is never proxied, whatever else the list holds (property)', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
    fc.assert(
      fc.property(
        fc.array(label, { minLength: 2, maxLength: 4 }),
        fc.array(fc.array(label, { minLength: 2, maxLength: 3 })),
        fc.nat(3),
        (host, others, at) => {
          const name = host.join('.');
          const entries = others.map((o) => o.join('.'));
          entries.splice(at % (entries.length + 1), 0, name);
          expect(via(`https://${name}/`, { HTTPS_PROXY: P, NO_PROXY: entries.join(',') })).toBeUndefined();
          expect(via(`https://sub.${name}/`, { HTTPS_PROXY: P, NO_PROXY: entries.join(',') })).toBeUndefined();
        },
      ),
      runs(),
    );
  });

  it('an IP target matches an entry only as the same address or inside its range, never by a suffix of its text (property)', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
    fc.assert(
      fc.property(ipv4, ipv4, fc.nat(16), fc.constantFrom('', '.', '*.'), (ip, other, cut, lead) => {
        const target = `https://${ip}/`;
        // a tail of its text (`.0.0.1`, `0.1`), with or without a leading dot: not the address
        const tail = ip.slice(Math.min(cut, ip.length - 1));
        const tailBypasses = tail === ip && lead === '';
        expect(via(target, { HTTPS_PROXY: P, NO_PROXY: `${lead}${tail}`, no_proxy: undefined }) === undefined).toBe(
          tailBypasses,
        );
        expect(via(target, { HTTPS_PROXY: P, NO_PROXY: other }) === undefined).toBe(other === ip);
        expect(via(target, { HTTPS_PROXY: P, NO_PROXY: `${other}, ${ip}` })).toBeUndefined();
        expect(
          via(target, { HTTPS_PROXY: P, NO_PROXY: `${ip.split('.').slice(0, 2).join('.')}.0.0/16` }),
        ).toBeUndefined();
      }),
      runs(),
    );
  });

  it('the proxy URL is refused (a UsageError naming the variable) exactly when its user name or password is not whole percent-encoding (property)', () => {
    const target = new URL('https://api.example.com/');
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (user, password) => {
        // any user name and password, percent-encoded, are taken and sent back exactly
        const p = proxyFor(target, {
          HTTPS_PROXY: `http://${encodeURIComponent(user)}:${encodeURIComponent(password)}@proxy.corp:3128`,
        })!;
        const url = new URL(p.url);
        expect([decodeURIComponent(url.username), decodeURIComponent(url.password)]).toEqual([user, password]);
        // a % not followed by two hex digits (`50%off`) is refused, never passed on
        const raw = `http://u:${encodeURIComponent(password)}%${'g'}@proxy.corp:3128`;
        expect(() => proxyFor(target, { HTTPS_PROXY: raw })).toThrow(
          /^HTTPS_PROXY holds a % in its user name or password/,
        );
      }),
      runs(),
    );
  });

  it.each([
    ['http://proxy:80%', /^HTTPS_PROXY is not a URL: a stray % in proxy:80% \(/],
    ['http://u:pw@proxy:80%', /^HTTPS_PROXY is not a URL: a stray % in proxy:80% \(/],
    ['http://proxy:8o', /^HTTPS_PROXY is not a URL: its port \(8o\) is not a number/],
    ['http://proxy.corp:3128/path', /^HTTPS_PROXY has a path \(\/path\)/],
    ['http://proxy.corp:3128/?a=1', /^HTTPS_PROXY has a query or fragment/],
    ['http://proxy.corp:3128#x', /^HTTPS_PROXY has a query or fragment/],
    ['http://u:100%@proxy.corp:3128', /^HTTPS_PROXY holds a % /],
  ])('refuses %s (exit 2 before anything is sent)', (value, message) => {
    expect(() => proxyFor(new URL('https://api.example.com/'), { HTTPS_PROXY: value })).toThrow(UsageError);
    expect(() => proxyFor(new URL('https://api.example.com/'), { HTTPS_PROXY: value })).toThrow(message);
  });

  it('takes a proxy without a scheme as http://, and keeps its credentials out of the display', () => {
    const p = proxyFor(new URL('https://api.example.com/'), { HTTPS_PROXY: 'u:p%40ss@proxy.corp:3128' })!;
    expect(p).toEqual({
      url: 'http://u:p%40ss@proxy.corp:3128/',
      variable: 'HTTPS_PROXY',
      display: 'http://proxy.corp:3128',
      shown: 'http://u:****@proxy.corp:3128',
      hasCredentials: true,
      user: 'u',
    });
  });

  it('routeText: what --verbose says of each route, the password masked; nothing without a proxy variable', () => {
    const text = (target: string, env: Record<string, string>) => routeText(routeFor(new URL(target), env));
    expect(text('https://api.example.com/', { HTTPS_PROXY: 'http://u:secret@proxy.corp:3128' })).toBe(
      ' via proxy http://u:****@proxy.corp:3128 (HTTPS_PROXY)',
    );
    expect(text('https://api.example.com/', { https_proxy: P })).toBe(
      ' via proxy http://proxy.corp:3128 (https_proxy)',
    );
    expect(text('https://api.example.com/', { HTTPS_PROXY: P, NO_PROXY: 'example.com' })).toBe(' direct (NO_PROXY)');
    expect(text('https://127.0.0.1:1/', { HTTPS_PROXY: P })).toBe(
      ' direct (loopback is not proxied without <-loopback> in NO_PROXY)',
    );
    expect(text('http://127.0.0.1:1/', { HTTPS_PROXY: P })).toBe(' direct (http:// is never proxied)');
    expect(text('https://api.example.com/', { HTTP_PROXY: P })).toBe('');
  });

  it.each(['socks5://proxy:1080', 'http://[broken'])('refuses %s with a UsageError naming the variable', (value) => {
    expect(() => proxyFor(new URL('https://api.example.com/'), { https_proxy: value })).toThrow(UsageError);
    expect(() => proxyFor(new URL('https://api.example.com/'), { https_proxy: value })).toThrow(/^https_proxy /);
  });
});

describe('notBypassed: why a proxied target was not sent direct, so that a hint suggests NO_PROXY only where it would help', () => {
  const targets = [
    'https://crm.example.test/',
    'https://crm.example.test:8443/',
    'https://127.0.0.1:8443/',
    'https://[::1]/',
  ];
  const entry = fc.constantFrom(
    '<-loopback>',
    'crm.example.test',
    '.example.test',
    'crm.example.test:8443',
    'crm.example.test:443',
    'other.example',
    '127.0.0.1',
    '127.0.0.1:1',
    '127.0.0.0/8',
    '[::1]:8443',
    '::1',
  );
  const list = fc.option(
    fc.array(entry, { maxLength: 4 }).map((e) => e.join(',')),
    { nil: undefined },
  );

  it('says "unlisted" exactly when adding the host to the variable crm reads would send it direct, and it is no loopback proxied on purpose (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(...targets), list, list, (t, upper, lower) => {
        const target = new URL(t);
        const env = { HTTPS_PROXY: P, NO_PROXY: upper, no_proxy: lower };
        if (!routeFor(target, env).proxy) return; // went direct: no hint about NO_PROXY
        const why = notBypassed(target, env);
        const read = lower !== undefined ? 'no_proxy' : 'NO_PROXY';
        expect(why.noProxyVariable).toBe(read);
        const entries = (env[read] ?? '').split(',');
        if (why.why === 'loopback') expect(entries).toContain('<-loopback>');
        if (why.why === 'port') {
          expect(entries).toContain(why.entry);
          expect(
            routeFor(target, { HTTPS_PROXY: P, NO_PROXY: `<-loopback>,${why.entry.replace(/:\d+$/, '')}` }).proxy,
          ).toBeUndefined();
        }
        if (why.why === 'unread') {
          expect(read).toBe('no_proxy');
          expect(routeFor(target, { HTTPS_PROXY: P, NO_PROXY: why.entry }).proxy).toBeUndefined();
        }
        if (why.why === 'unlisted') {
          const host = target.hostname.replace(/^\[|\]$/g, '');
          expect(routeFor(target, { ...env, [read]: `${env[read] ?? ''},${host}` }).proxy).toBeUndefined();
          expect(
            entries.some(
              (e) =>
                e !== '' &&
                routeFor(target, { HTTPS_PROXY: P, NO_PROXY: `<-loopback>,${e.replace(/:\d+$/, '')}` }).direct ===
                  'NO_PROXY',
            ),
          ).toBe(false);
          expect(entries.includes('<-loopback>') && ['127.0.0.1', '::1'].includes(host)).toBe(false);
        }
      }),
      runs(),
    );
  });

  // review of 3dc20bd: the 'port' answer checks the entry's host part alone (noProxyMatches('*', …)),
  // but routeFor reads `*` only as a whole entry: `*:8443` sends nothing direct on any port, and the
  // hint "NO_PROXY lists *:8443, for port 8443 only; this request is to port 443" says it would on 8443
  it('a "port" answer names an entry that does send the host direct on its own port (not *:8443)', () => {
    const t = new URL('https://crm.example.test/');
    const why = notBypassed(t, { HTTPS_PROXY: P, NO_PROXY: '*:8443' });
    if (why.why !== 'port') return;
    const onItsPort = new URL(`https://crm.example.test:${why.entry.replace(/^.*:/, '')}/`);
    expect(routeFor(onItsPort, { HTTPS_PROXY: P, NO_PROXY: why.entry }).proxy).toBeUndefined();
  });

  it('the four answers', () => {
    const t = new URL('https://crm.example.test/');
    expect(notBypassed(t, { HTTPS_PROXY: P })).toEqual({ why: 'unlisted', noProxyVariable: 'NO_PROXY' });
    expect(notBypassed(new URL('https://127.0.0.1:8443/'), { HTTPS_PROXY: P, no_proxy: '<-loopback>' })).toEqual({
      why: 'loopback',
      noProxyVariable: 'no_proxy',
    });
    expect(notBypassed(t, { HTTPS_PROXY: P, NO_PROXY: 'crm.example.test:8443' })).toEqual({
      why: 'port',
      noProxyVariable: 'NO_PROXY',
      entry: 'crm.example.test:8443',
    });
    expect(notBypassed(t, { HTTPS_PROXY: P, NO_PROXY: '.example.test', no_proxy: '' })).toEqual({
      why: 'unread',
      noProxyVariable: 'no_proxy',
      entry: '.example.test',
    });
  });
});
