// Import rules for src/ (`npm run lint` runs `depcruise src`): no circle, not even of types, and
// every import points down the layers below, lowest first (docs/architecture.md, "The shape").
// The sandbox stands beside the CLI: it may use only the layers under the HTTP client.
const LAYERS = [
  ['json', 'util', 'version.ts'],
  ['api'],
  ['http'],
  ['config'],
  ['output'],
  ['import'],
  ['commands'],
  ['cli'],
];
const SANDBOX_MAY_USE = ['json', 'util', 'version.ts', 'api'];

// Inside the batch engine (src/import), the stages stand in the order the engine calls them, on the shared types
// and the plan every stage takes a slice of (src/import/README.md): a stage never imports a later one.
const ENGINE = [
  ['shapes.ts'],
  ['types.ts'],
  ['input'],
  ['operation.ts'],
  ['files'],
  ['plan.ts'],
  ['check'],
  ['match'],
  ['journal'],
  ['send'],
  ['finish.ts'],
  ['engine.ts'],
  ['index.ts'],
];
const inEngine = (names) => `^src/import/(${names.map((n) => n.replace('.', '\\.')).join('|')})($|/)`;

const dir = (names) => `^src/(${names.map((n) => n.replace('.', '\\.')).join('|')})($|/)`;
// commands (`crm sandbox`) and cli may start the sandbox; nothing lower may
const COMMANDS = LAYERS.findIndex((l) => l.includes('commands'));
const above = (i) => [...LAYERS.slice(i + 1).flat(), ...(i < COMMANDS ? ['sandbox'] : [])];

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import circle (types count: they tie the modules together for a reader just the same).',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...LAYERS.slice(0, -1).map((layer, i) => ({
      name: `layer-${layer[0]}`,
      comment: `${layer.join(', ')} may import only from the layers below it`,
      severity: 'error',
      from: { path: dir(layer) },
      to: { path: dir(above(i)) },
    })),
    ...ENGINE.slice(0, -1).map((stage, i) => ({
      name: `engine-${stage[0]}`,
      comment: `in src/import, ${stage.join(', ')} may import only what stands before it in the engine's order`,
      severity: 'error',
      from: { path: inEngine(stage) },
      to: { path: inEngine(ENGINE.slice(i + 1).flat()) },
    })),
    {
      name: 'layer-sandbox',
      comment: `the sandbox may use only ${SANDBOX_MAY_USE.join(', ')}`,
      severity: 'error',
      from: { path: '^src/sandbox/' },
      to: { path: '^src/', pathNot: [dir(SANDBOX_MAY_USE), '^src/sandbox/'] },
    },
    {
      name: 'only-http-knows-undici',
      comment: 'one request path: undici is known to src/http alone',
      severity: 'error',
      from: { pathNot: '^src/http/' },
      to: { path: 'node_modules/undici/' },
    },
    {
      name: 'only-config-knows-conf',
      severity: 'error',
      from: { pathNot: '^src/config/' },
      to: { path: 'node_modules/conf/' },
    },
    {
      name: 'only-declarations-know-commander',
      comment:
        'commander is known to src/cli and to the option declarations beside each run function (command.ts); run functions get typed options',
      severity: 'error',
      from: {
        pathNot: ['^src/cli/', '^src/commands/[^/]+/command\\.ts$', '^src/commands/shared/(define|numeric)\\.ts$'],
      },
      to: { path: 'node_modules/(commander|@commander-js)/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
