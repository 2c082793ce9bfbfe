// The least a `crm contacts get ID` could do with undici as its HTTP client (bench/startup.mjs bundles
// this with esbuild, as crm is bundled): the code cache on, undici's Pool and request from their own
// files as src/http/transport.ts takes them, one GET, the record printed as JSON. No CLI, no checks.
import module from 'node:module';

module.enableCompileCache?.(); // before undici is compiled, as bin/crm does
const [{ default: Pool }, { default: request }] = await Promise.all([
  import('undici/lib/dispatcher/pool.js'),
  import('undici/lib/api/api-request.js'),
]);
const url = new URL(`${process.env.CRM_BASE_URL}/contacts/${process.argv[2]}`);
const pool = new Pool(url.origin);
const res = await request.call(pool, {
  path: url.pathname,
  method: 'GET',
  headers: { 'x-service-api-key': process.env.CRM_API_KEY },
});
process.stdout.write(`${JSON.stringify(JSON.parse(await res.body.text()).data, null, 2)}\n`);
await pool.close();
