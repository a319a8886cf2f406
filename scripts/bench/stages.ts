/**
 * The stages of a request the CPU profile is cut into (`npm run bench:profile`), and which code
 * belongs to which: a package's files by the package, the service's own by their folder.
 */

/** The stages, in the order of a request. */
export const STAGES = [
  'HTTP (node:http, sockets, streams)',
  'Koa, middleware and the route row',
  'body reading and validation',
  'key cache, authorization and rate-limit lease',
  'GraphQL execution (graphql-js, TypeGraphQL, resolvers)',
  'services (domain rules)',
  'ORM context (MikroORM)',
  'statements and the driver (store, pg)',
  'logging',
  'metrics',
  'answer serialization (JSON)',
  'garbage collection',
  'system calls (the kernel)',
  'V8 and native (unattributed)',
  'other',
] as const;

export type Stage = (typeof STAGES)[number];

/** The stage whose CPU the profile cannot tell (see BUILTINS): /proc's system time stands for it. */
export const KERNEL: Stage = 'system calls (the kernel)';

/** [script URL pattern, stage], first match wins. */
/** Packages by stage (their files under node_modules). */
const PACKAGES: [string[], Stage][] = [
  [['pino', 'pino-std-serializers', 'sonic-boom', 'fast-redact', 'thread-stream'], 'logging'],
  [['prom-client'], 'metrics'],
  [['ajv', 'zod', 'raw-body', 'co-body', 'iconv-lite'], 'body reading and validation'],
  [
    ['graphql', 'type-graphql', '@graphql-tools', 'graphql-scalars', '@escape.tech'],
    'GraphQL execution (graphql-js, TypeGraphQL, resolvers)',
  ],
  [['@mikro-orm', 'knex'], 'ORM context (MikroORM)'],
  [
    [
      'pg',
      'pg-protocol',
      'pg-types',
      'pg-pool',
      'postgres-array',
      'postgres-date',
      'postgres-interval',
      'postgres-bytea',
      'pg-connection-string',
    ],
    'statements and the driver (store, pg)',
  ],
  [
    ['koa', 'koa-compose', '@koa', 'delegates', 'statuses', 'http-errors', 'on-finished', 'accepts', 'type-is', 'content-type', 'vary'],
    'Koa, middleware and the route row',
  ],
  [
    ['negotiator', 'mime-types', 'cache-content-type', 'fresh', 'encodeurl', 'escape-html', 'cookies', 'keygrip', 'depd', 'destroy'],
    'Koa, middleware and the route row',
  ],
  [['content-disposition', 'http-assert', 'only', 'path-to-regexp'], 'Koa, middleware and the route row'],
];

/** The service's own files by stage (paths from the repository's root), checked before the packages' folders. */
const OWN: [RegExp, Stage][] = [
  [/\/src\/app\/logger\.ts/, 'logging'],
  [/\/src\/app\/metrics\.ts/, 'metrics'],
  [/\/src\/http\/body\.ts|\/rest\/validate\.ts|\/rest\/jsonSchema\.ts/, 'body reading and validation'],
  [/\/src\/auth\/|\/src\/rateLimit\.ts|\/src\/app\/authenticate\.ts|\/src\/identity\//, 'key cache, authorization and rate-limit lease'],
  [/\/src\/resolvers\/|\/src\/schema\.ts|\/src\/app\/graphql|\/src\/contract\//, 'GraphQL execution (graphql-js, TypeGraphQL, resolvers)'],
  [/\/src\/services\/|\/src\/context\.ts|\/src\/app\/context\.ts|\/src\/search\//, 'services (domain rules)'],
  [/\/src\/store\/|\/src\/db\//, 'statements and the driver (store, pg)'],
  [/\/rest\/|\/src\/app\/|\/src\/http\//, 'Koa, middleware and the route row'],
];

const PACKAGE_STAGE = new Map(PACKAGES.flatMap(([names, stage]) => names.map((name) => [name, stage] as const)));
/** The package a script belongs to: `…/node_modules/@scope/name/…` or `…/node_modules/name/…` (the innermost). */
const PACKAGE = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*\/node_modules\/)/;

function stageOfUrl(url: string): Stage {
  const pkg = PACKAGE.exec(url)?.[1];
  if (pkg) return PACKAGE_STAGE.get(pkg) ?? PACKAGE_STAGE.get(pkg.split('/')[0]) ?? 'other';
  for (const [pattern, stage] of OWN) if (pattern.test(url)) return stage;
  if (url.startsWith('node:') || url.startsWith('internal/')) return 'HTTP (node:http, sockets, streams)';
  return 'other';
}

/** Built-in functions that are a stage of their own wherever they are called from. */
const BUILTINS: Record<string, Stage | null> = {
  '(garbage collector)': 'garbage collection',
  '(idle)': null,
  '(program)': 'V8 and native (unattributed)',
  '(root)': 'V8 and native (unattributed)',
  stringify: 'answer serialization (JSON)',
  // Sockets' system calls: their samples are mostly the thread waiting for a core after waking the
  // receiver (the loopback hands it the bytes at once); the kernel's real CPU is read from /proc instead.
  writev: 'system calls (the kernel)',
  writeBuffer: 'system calls (the kernel)',
  writeUtf8String: 'system calls (the kernel)',
  writeLatin1String: 'system calls (the kernel)',
};

/**
 * The stage of one profile frame: a stage, null for time not spent (idle), or undefined when
 * the frame has no script of its own (a V8 built-in: it counts for its caller's stage).
 */
export function stageOf(url: string, functionName: string): Stage | null | undefined {
  if (functionName in BUILTINS) return BUILTINS[functionName];
  if (!url) return undefined;
  return stageOfUrl(url);
}
