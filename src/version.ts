// The package version, inlined by the bundler (scripts/build.mjs); '0.0.0-dev' when run from source.
declare const __CRM_VERSION__: string | undefined;

export const VERSION: string = typeof __CRM_VERSION__ === 'string' ? __CRM_VERSION__ : '0.0.0-dev';
export const USER_AGENT = `crm-cli/${VERSION}`;
