// Boundary rules for src/, checked by `npm run lint:deps` (part of `npm test`). Each rule names the layer it
// protects; docs/architecture.md draws the same layers. Type-only imports count too (tsPreCompilationDeps), except
// where a rule is about what is loaded at run time.

const CLIENT_SIDE = '^src/(client|verify|lock|dispatch|guard|audit|host|mirror)/';
const SERVER_SIDE = '^src/(store|registry|runtime|http|server|keys|oidc)/';
const IO_MODULES =
  '^(node:)?(fs|fs/promises|net|http|https|http2|child_process|worker_threads|dgram|cluster|tls)$|^(node_modules/)?(better-sqlite3|drizzle-orm|drizzle-kit|hono|@hono/|@modelcontextprotocol/|@electric-sql/pglite)|^(node_modules/)?pg(/|$)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules form no import cycle (a cycle means two modules own one contract).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'client-side-stays-client-side',
      severity: 'error',
      comment:
        'What hosts and auditors run never reaches server code: no store, registry, runtime, http, server or key files.',
      from: { path: CLIENT_SIDE },
      to: { path: SERVER_SIDE },
    },
    {
      name: 'pure-layers-do-no-io',
      severity: 'error',
      comment:
        'core, pipeline, log, attest, protocol and dispatch are pure: no files, sockets, threads, database or server.',
      from: { path: '^src/(core|pipeline|log|attest|protocol|dispatch)/' },
      to: { dependencyTypes: ['core', 'npm'], path: IO_MODULES },
    },
    {
      name: 'core-imports-nothing-above',
      severity: 'error',
      comment: 'core is the bottom layer: it imports only core.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'pure-layers-import-only-pure-layers',
      severity: 'error',
      comment: 'pipeline, log and attest build on core and on each other only.',
      from: { path: '^src/(pipeline|log|attest)/' },
      to: { path: '^src/', pathNot: '^src/(core|pipeline|log|attest)/' },
    },
    {
      name: 'protocol-imports-nothing-above',
      severity: 'error',
      comment: 'protocol (routes, refs, wire shapes) is shared by http and client: it imports only the pure layers.',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/(core|pipeline|log|attest|protocol)/' },
    },
    {
      name: 'oidc-is-pure-but-for-its-fetch',
      severity: 'error',
      comment:
        'Trusted publishing (src/oidc) builds on the pure layers only and does no I/O of its own: the registry hands it a fetch.',
      from: { path: '^src/oidc/' },
      to: {
        path: ['^src/(?!(core|pipeline|attest|protocol|oidc)/)', IO_MODULES],
      },
    },
    {
      name: 'store-imports-nothing-above',
      severity: 'error',
      comment: 'The store knows SQL, not the registry, HTTP or threads.',
      from: { path: '^src/store/' },
      to: { path: '^src/(registry|runtime|http|server|cli|client|verify|lock|dispatch|guard|audit|host)/' },
    },
    {
      name: 'only-sqlite-speaks-sql',
      severity: 'error',
      comment:
        'Only the stores (src/store/sqlite, src/store/postgres) import the database drivers and drizzle (benches and tests may too).',
      from: { path: '^src/', pathNot: '^src/store/(sqlite|postgres)/' },
      // Resolved npm paths start with node_modules/.
      to: { path: '^(node_modules/)?(better-sqlite3|drizzle-orm|drizzle-kit|pg|pg-[a-z-]+|@electric-sql/pglite)(/|$)' },
    },
    {
      name: 'registry-is-use-cases',
      severity: 'error',
      comment: 'The registry sees ports (store, pipeline runner, committer), not SQLite, threads, HTTP or the server.',
      from: { path: '^src/registry/' },
      to: { path: '^src/(store/sqlite|runtime|http|server|cli|client|verify|guard|audit|host)/' },
    },
    {
      name: 'only-http-speaks-http',
      severity: 'error',
      comment: 'Only src/http (the API) and src/web (the pages it mounts) import hono.',
      from: { path: '^src/', pathNot: '^src/(http|web)/' },
      to: { path: '^(node_modules/)?(hono|@hono/)' },
    },
    {
      name: 'http-does-not-import-the-pages',
      comment:
        'The web pages use src/http (its context and problem table); the composition root mounts them (issue 24 §6).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/web/' },
    },
    {
      name: 'web-pages-use-the-registry',
      severity: 'error',
      comment: 'The pages reach the registry only through its use cases (src/registry), never the store.',
      from: { path: '^src/web/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'cli-never-opens-a-store',
      severity: 'error',
      comment:
        'The CLI parses argv and prints: it reaches the registry through src/server, never the store or its threads.',
      from: { path: '^src/cli/' },
      to: { path: '^src/(store|runtime|http|registry|keys)/' },
    },
    {
      name: 'telemetry-is-a-leaf',
      severity: 'error',
      comment:
        'src/telemetry (metrics, traces, audit log) is wired in by registry, server, http and guard: it imports only the pure layers core, log and pipeline.',
      from: { path: '^src/telemetry/' },
      to: { path: '^src/', pathNot: '^src/(core|log|pipeline|telemetry)/' },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'only-the-cli-loads-the-build',
      severity: 'error',
      comment:
        'src/build reads vendor files and URLs (json-schema-ref-parser): only the CLI imports it, never the pipeline, the registry side or the host side.',
      from: { path: '^src/', pathNot: '^src/(cli|build)/' },
      to: { path: '^src/build/' },
    },
    {
      name: 'build-stays-vendor-side',
      severity: 'error',
      comment:
        'The build runs on the vendor machine before anything is signed: no store, registry, runtime, http, server or keys.',
      from: { path: '^src/build/' },
      to: { path: '^src/(store|registry|runtime|http|server|keys|cli)/' },
    },
    {
      name: 'only-the-build-uses-ref-parser',
      severity: 'error',
      comment:
        'json-schema-ref-parser reads files and fetches URLs by default: only src/build, which configures it, may import it.',
      from: { path: '^src/', pathNot: '^src/build/' },
      to: { path: '(^|/)@apidevtools/json-schema-ref-parser(/|$)' },
    },
    {
      name: 'host-facade-loads-no-server-or-sdk',
      severity: 'error',
      comment: 'Importing toolseal/host loads no SQLite, Hono, child_process or MCP SDK at run time.',
      from: { path: '^src/host/index\\.ts$' },
      to: {
        reachable: true,
        path: '^(node_modules/)?(better-sqlite3|drizzle-orm|hono|@hono/|@modelcontextprotocol/)|^(node:)?child_process$',
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    moduleSystems: ['es6'],
  },
};
