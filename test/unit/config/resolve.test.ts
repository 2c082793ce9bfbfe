import { describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../../src/http/errors.js';
import { resolveProfile } from '../../../src/config/resolve.js';
import type { ConfigData, ConfigStore } from '../../../src/config/store.js';
import type { ProfileFlags, ResolvedProfile } from '../../../src/config/types.js';

const K_DEV = 'service_live_dev_key_0123456789';
const K_PROD = 'service_live_prod_key_0123456789';
const K_ENV = 'service_live_env_key_0123456789';
const V1_DEV = 'service_pk_dev_0123456789ab';
const V1_ENV = 'service_pk_env_0123456789ab';

const DATA: ConfigData = {
  profiles: {
    dev: { base_url: 'http://127.0.0.1:4010/api/v2', api_key: K_DEV, v1_api_key: V1_DEV, auth_header: 'x-api-key' },
    prod: {
      base_url: 'https://crm.example.com/api/v2',
      v1_base_url: 'https://legacy.example.com/api/v1',
      api_key: K_PROD,
      auth_header: 'bearer',
    },
  },
  default_profile: 'dev',
};

/** An in-memory ConfigStore over a copy of `data`. */
function memoryStore(data: ConfigData = DATA): ConfigStore {
  const d: ConfigData = structuredClone(data);
  return {
    path: '/fake/config.json',
    dir: '/fake',
    profileNames: () => Object.keys(d.profiles).sort(),
    getProfile: (n) => (Object.hasOwn(d.profiles, n) ? { ...d.profiles[n]! } : undefined),
    defaultProfile: () => d.default_profile,
    setProfile: (n, p) => void (d.profiles[n] = p),
    removeProfile: (n) => delete d.profiles[n],
    setDefault: (n) => void (d.default_profile = n),
  };
}

const load = (data?: ConfigData) => vi.fn(async () => memoryStore(data));

type Case = [
  name: string,
  flags: ProfileFlags,
  env: Record<string, string>,
  expected: Partial<ResolvedProfile> & { name?: string },
];

const cases: Case[] = [
  [
    'default profile when nothing is given',
    {},
    {},
    {
      name: 'dev',
      baseUrl: 'http://127.0.0.1:4010/api/v2',
      v1BaseUrl: 'http://127.0.0.1:4010/api/v1',
      apiKey: K_DEV,
      v1ApiKey: V1_DEV,
      authHeader: 'x-api-key',
    },
  ],
  [
    '--profile chooses a profile',
    { profile: 'prod' },
    {},
    {
      name: 'prod',
      baseUrl: 'https://crm.example.com/api/v2',
      v1BaseUrl: 'https://legacy.example.com/api/v1',
      apiKey: K_PROD,
      authHeader: 'bearer',
    },
  ],
  [
    'CRM_PROFILE chooses a profile',
    {},
    { CRM_PROFILE: 'prod' },
    { name: 'prod', apiKey: K_PROD, authHeader: 'bearer' },
  ],
  ['--profile beats CRM_PROFILE', { profile: 'dev' }, { CRM_PROFILE: 'prod' }, { name: 'dev', apiKey: K_DEV }],
  [
    'chosen profile does not borrow from the default profile',
    { profile: 'prod' },
    {},
    { name: 'prod', v1ApiKey: undefined },
  ],
  [
    'CRM_API_KEY beats the profile key',
    {},
    { CRM_API_KEY: K_ENV },
    { name: 'dev', apiKey: K_ENV, baseUrl: 'http://127.0.0.1:4010/api/v2' },
  ],
  [
    'CRM_API_KEY beats the chosen profile key',
    { profile: 'prod' },
    { CRM_API_KEY: K_ENV },
    { name: 'prod', apiKey: K_ENV, baseUrl: 'https://crm.example.com/api/v2' },
  ],
  ['CRM_V1_API_KEY beats the profile v1 key', {}, { CRM_V1_API_KEY: V1_ENV }, { v1ApiKey: V1_ENV, apiKey: K_DEV }],
  [
    'CRM_BASE_URL beats the profile and derives v1',
    {},
    { CRM_BASE_URL: 'https://env.example.com/api/v2' },
    {
      name: 'dev',
      baseUrl: 'https://env.example.com/api/v2',
      v1BaseUrl: 'https://env.example.com/api/v1',
      apiKey: K_DEV,
    },
  ],
  [
    'CRM_BASE_URL beats a stored v1_base_url too (derived from the env root)',
    { profile: 'prod' },
    { CRM_BASE_URL: 'https://env.example.com/api/v2' },
    { v1BaseUrl: 'https://env.example.com/api/v1' },
  ],
  [
    'CRM_V1_BASE_URL beats the derived one',
    {},
    { CRM_BASE_URL: 'https://env.example.com/api/v2', CRM_V1_BASE_URL: 'https://v1.example.com/x/api/v1' },
    { baseUrl: 'https://env.example.com/api/v2', v1BaseUrl: 'https://v1.example.com/x/api/v1' },
  ],
  [
    'CRM_V1_BASE_URL alone keeps the profile base',
    {},
    { CRM_V1_BASE_URL: 'https://v1.example.com/api/v1' },
    { baseUrl: 'http://127.0.0.1:4010/api/v2', v1BaseUrl: 'https://v1.example.com/api/v1' },
  ],
  [
    '--base-url beats CRM_BASE_URL',
    { baseUrl: 'https://flag.example.com/api/v2' },
    { CRM_BASE_URL: 'https://env.example.com/api/v2' },
    { baseUrl: 'https://flag.example.com/api/v2', v1BaseUrl: 'https://flag.example.com/api/v1' },
  ],
  [
    '--base-url beats CRM_V1_BASE_URL for the v1 root (derived from the flag)',
    { baseUrl: 'https://flag.example.com/api/v2' },
    { CRM_V1_BASE_URL: 'https://v1.example.com/api/v1' },
    { v1BaseUrl: 'https://flag.example.com/api/v1' },
  ],
  [
    '--v1-base-url beats everything for v1',
    { v1BaseUrl: 'https://v1flag.example.com/api/v1' },
    { CRM_V1_BASE_URL: 'https://v1.example.com/api/v1', CRM_BASE_URL: 'https://env.example.com/api/v2' },
    { baseUrl: 'https://env.example.com/api/v2', v1BaseUrl: 'https://v1flag.example.com/api/v1' },
  ],
  [
    '--base-url with --profile: flag URL, profile key',
    { profile: 'prod', baseUrl: 'https://flag.example.com/api/v2' },
    {},
    {
      name: 'prod',
      baseUrl: 'https://flag.example.com/api/v2',
      v1BaseUrl: 'https://flag.example.com/api/v1',
      apiKey: K_PROD,
    },
  ],
  [
    'stored v1_base_url is used with the stored root',
    { profile: 'prod' },
    {},
    { v1BaseUrl: 'https://legacy.example.com/api/v1' },
  ],
  [
    'CRM_AUTH_HEADER beats the profile',
    { profile: 'prod' },
    { CRM_AUTH_HEADER: 'x-api-key' },
    { authHeader: 'x-api-key' },
  ],
  ['CRM_AUTH_HEADER is case-insensitive', {}, { CRM_AUTH_HEADER: 'Bearer' }, { authHeader: 'bearer' }],
  [
    'empty environment values are ignored',
    {},
    { CRM_API_KEY: '', CRM_PROFILE: '  ', CRM_BASE_URL: '' },
    { name: 'dev', apiKey: K_DEV, baseUrl: 'http://127.0.0.1:4010/api/v2' },
  ],
  ['environment values are trimmed', {}, { CRM_API_KEY: ` ${K_ENV}\n` }, { apiKey: K_ENV }],
  [
    'a trailing slash on a base URL is dropped',
    { baseUrl: 'https://flag.example.com/api/v2/' },
    {},
    { baseUrl: 'https://flag.example.com/api/v2', v1BaseUrl: 'https://flag.example.com/api/v1' },
  ],
  [
    'a root not ending in /api/v2 gives no v1 root',
    { baseUrl: 'https://flag.example.com/crm' },
    {},
    { baseUrl: 'https://flag.example.com/crm', v1BaseUrl: undefined },
  ],
];

describe('resolveProfile precedence', () => {
  it.each(cases)('%s', async (_name, flags, env, expected) => {
    const resolved = await resolveProfile(flags, env, load());
    for (const [k, v] of Object.entries(expected)) expect(resolved[k as keyof ResolvedProfile], k).toBe(v);
  });

  it('env-only: key and base URL from the environment, no profile named → the store is never loaded', async () => {
    const spy = load();
    const r = await resolveProfile(
      {},
      { CRM_API_KEY: K_ENV, CRM_BASE_URL: 'https://env.example.com/api/v2', CRM_V1_API_KEY: V1_ENV },
      spy,
    );
    expect(spy).not.toHaveBeenCalled();
    expect(r).toEqual({
      baseUrl: 'https://env.example.com/api/v2',
      v1BaseUrl: 'https://env.example.com/api/v1',
      apiKey: K_ENV,
      v1ApiKey: V1_ENV,
      authHeader: 'x-api-key',
    });
  });

  it('env key + --base-url flag → the store is never loaded', async () => {
    const spy = vi.fn(async (): Promise<ConfigStore> => {
      throw new Error('must not load');
    });
    const r = await resolveProfile(
      { baseUrl: 'http://localhost:4010/api/v2' },
      { CRM_API_KEY: K_ENV, CRM_AUTH_HEADER: 'bearer' },
      spy,
    );
    expect(spy).not.toHaveBeenCalled();
    expect(r).toMatchObject({ baseUrl: 'http://localhost:4010/api/v2', apiKey: K_ENV, authHeader: 'bearer' });
  });

  it.each([
    ['only a key', { CRM_API_KEY: K_ENV }, {}],
    ['only a base URL', { CRM_BASE_URL: 'https://env.example.com/api/v2' }, {}],
    [
      'key and base URL but a profile named in the environment',
      { CRM_API_KEY: K_ENV, CRM_BASE_URL: 'https://e.example/api/v2', CRM_PROFILE: 'dev' },
      {},
    ],
    [
      'key and base URL but --profile',
      { CRM_API_KEY: K_ENV, CRM_BASE_URL: 'https://e.example/api/v2' },
      { profile: 'dev' },
    ],
  ])('loads the store when the environment is not enough: %s', async (_n, env, flags) => {
    const spy = load();
    await resolveProfile(flags, env, spy);
    expect(spy).toHaveBeenCalledTimes(1);
  });

  it('no profiles and no environment: an empty profile with the default auth header', async () => {
    const r = await resolveProfile({}, {}, load({ profiles: {} }));
    expect(r).toEqual({ authHeader: 'x-api-key' });
  });

  it('profiles but no default: nothing chosen', async () => {
    const r = await resolveProfile({}, {}, load({ profiles: DATA.profiles }));
    expect(r.name).toBeUndefined();
    expect(r.apiKey).toBeUndefined();
  });

  it('an unknown --profile is a UsageError naming the profiles', async () => {
    const err = await resolveProfile({ profile: 'staging' }, {}, load()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe('Unknown profile "staging". Profiles: dev, prod.');
  });

  it('an unknown CRM_PROFILE is a UsageError too', async () => {
    await expect(resolveProfile({}, { CRM_PROFILE: 'x' }, load())).rejects.toThrow(
      /Unknown profile "x"\. Profiles: dev, prod/,
    );
  });

  it('an unknown profile with no profiles at all says how to add one', async () => {
    await expect(resolveProfile({ profile: 'x' }, {}, load({ profiles: {} }))).rejects.toThrow(/crm keys add/);
  });

  it('a default profile that does not exist is a UsageError naming the file', async () => {
    await expect(resolveProfile({}, {}, load({ profiles: DATA.profiles, default_profile: 'gone' }))).rejects.toThrow(
      /default profile "gone".*\/fake\/config\.json.*dev, prod/,
    );
  });

  it.each([
    [{ baseUrl: 'http://example.com/api/v2' }, {}, /--base-url.*https/],
    [{}, { CRM_BASE_URL: 'http://crm.example.com/api/v2' }, /CRM_BASE_URL/],
    [{}, { CRM_V1_BASE_URL: 'ftp://127.0.0.1/api/v1' }, /CRM_V1_BASE_URL/],
    [{ v1BaseUrl: 'not a url' }, {}, /--v1-base-url.*not a valid URL/],
  ])('an unusable URL is a UsageError naming where it came from (%o %o)', async (flags, env, msg) => {
    await expect(resolveProfile(flags, env, load())).rejects.toThrow(msg);
    await expect(resolveProfile(flags, env, load())).rejects.toBeInstanceOf(UsageError);
  });

  it('an unusable stored URL names the profile', async () => {
    const data: ConfigData = {
      profiles: { bad: { base_url: 'http://crm.example.com/api/v2', auth_header: 'x-api-key' } },
      default_profile: 'bad',
    };
    await expect(resolveProfile({}, {}, load(data))).rejects.toThrow(/base_url of profile "bad"/);
  });

  it('an overridden broken URL does not matter', async () => {
    const data: ConfigData = {
      profiles: { bad: { base_url: 'http://crm.example.com/api/v2', api_key: K_DEV, auth_header: 'x-api-key' } },
      default_profile: 'bad',
    };
    const r = await resolveProfile({ baseUrl: 'https://ok.example.com/api/v2' }, {}, load(data));
    expect(r.baseUrl).toBe('https://ok.example.com/api/v2');
  });

  it('a bad CRM_AUTH_HEADER is a UsageError', async () => {
    await expect(resolveProfile({}, { CRM_AUTH_HEADER: 'basic' }, load())).rejects.toThrow(
      /CRM_AUTH_HEADER must be "x-api-key".*"bearer"/,
    );
  });
});
