// The floors of the house (README, "Layout"): imports go down only.
//   proto → common | cli-kit → server-kit | client → services → worker → supervisor → toxiproxy → bench → demo → conformance → chaos → cli
//   (testkit: test code only; interop: tests only; chaos/variants, the
//   deliberately broken services: imported by tests only)
// A floor may import any floor below it, never one above, and the two
// services never import each other. Test files and test doubles may use the
// testkit and anything a test needs; production code may not.
/** @type {import('dependency-cruiser').IConfiguration} */

const TEST = '(\\.test\\.ts$|/test/)';
const floors = [
  ['proto', '^proto/'],
  ['common', '^packages/common/'],
  ['cli-kit', '^packages/cli-kit/'],
  ['server-kit', '^packages/server-kit/'],
  ['client', '^packages/client/'],
  ['services', '^services/'],
  ['worker', '^packages/worker/'],
  ['supervisor', '^packages/supervisor/'],
  ['toxiproxy', '^chaos/toxiproxy/'],
  ['bench', '^packages/bench/'],
  ['demo', '^packages/demo/'],
  ['conformance', '^packages/conformance/'],
  ['chaos', '^chaos/(?!toxiproxy/)'],
  ['cli', '^cli/'],
];

/** For each floor: a rule forbidding production code there to import any floor above it. */
const downOnly = floors.slice(0, -1).map(([name, path], index) => ({
  name: `no-import-up-from-${name}`,
  comment: `${name} sits below ${floors
    .slice(index + 1)
    .map(([above]) => above)
    .join(', ')}: imports go down only`,
  severity: 'error',
  from: { path, pathNot: TEST },
  to: {
    path: floors
      .slice(index + 1)
      .map(([, above]) => above)
      .join('|'),
  },
}));

module.exports = {
  forbidden: [
    ...downOnly,
    {
      name: 'workers-without-server-kit',
      comment:
        'the worker library and `fencer worker` share no code with the servers: a worker needs no LevelDB, server logging or metrics; its command line comes from cli-kit',
      severity: 'error',
      from: { path: '^packages/(client|worker)/', pathNot: TEST },
      to: { path: '^packages/server-kit/' },
    },
    {
      name: 'services-apart',
      comment:
        "the sink and the coordinator talk only over gRPC; a contract test may hold one service's test double to the other's real policy",
      severity: 'error',
      from: { path: '^services/([^/]+)/', pathNot: '-contract\\.test\\.ts$' },
      to: { path: '^services/([^/]+)/', pathNot: '^services/$1/' },
    },
    {
      name: 'core-is-pure',
      comment: 'a service core/ holds protocol logic only: no gRPC, LevelDB, timers, processes or I/O (STYLE.md)',
      severity: 'error',
      from: { path: '^services/[^/]+/src/core/', pathNot: TEST },
      to: {
        path: '(^|/)node_modules/(@grpc/|level/|classic-level/|abstract-level/|pino/|prom-client/|commander/)|^packages/(server-kit|cli-kit)/|^services/[^/]+/src/(adapters|grpc)/',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'core-no-node-io',
      comment: 'core/ reaches time, processes and I/O only through ports (L1: the injected Clock)',
      severity: 'error',
      from: { path: '^(services/[^/]+/src/core|packages/common)/', pathNot: TEST },
      to: {
        dependencyTypes: ['core'],
        path: '^(node:)?(timers|timers/promises|process|child_process|fs|fs/promises|net|http|http2|dgram|worker_threads|cluster)$',
      },
    },
    {
      name: 'variants-for-tests-only',
      comment:
        'the deliberately broken services (@fencer/variants) are negative controls: only tests and the package itself may import them, so no production path can start one',
      severity: 'error',
      from: { pathNot: `${TEST}|^chaos/variants/` },
      to: { path: '^chaos/variants/' },
    },
    {
      name: 'testkit-for-tests-only',
      comment: 'the testkit (and vitest) is for tests; no production module imports it',
      severity: 'error',
      from: { pathNot: `${TEST}|^packages/testkit/` },
      to: { path: '^packages/testkit/|node_modules/(vitest|@vitest)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { pathNot: TEST },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)dist/|^proto/src/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.tests.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // Workspace packages resolve to their TypeScript sources, as in tests.
      conditionNames: ['fencer-source', 'import', 'types', 'default'],
      extensions: ['.ts', '.js', '.json'],
    },
    // Workspace symlinks resolve to their real folders, so paths name floors.
    preserveSymlinks: false,
  },
};
