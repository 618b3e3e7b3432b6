/**
 * The layering rules CI enforces (`npm run lint`). docs/architecture.md "Layers" explains them.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle makes both modules one: neither can be understood, tested or moved alone.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'src/domain holds the rules and value types; it imports nothing else of the project.',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'db-only-domain',
      severity: 'error',
      comment: 'src/db is the storage engine; it knows the domain types and nothing above it.',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: ['^src/db/', '^src/domain/'] },
    },
    {
      name: 'http-is-the-edge',
      severity: 'error',
      comment: 'Only the HTTP layer (and the composition root that starts it) imports src/http.',
      from: { path: '^src/', pathNot: ['^src/http/', '^src/service\\.ts$'] },
      to: { path: '^src/http/' },
    },
    {
      name: 'api-and-dashboard-apart',
      severity: 'error',
      comment: "The API, the dashboard and the operator console are faces of the same features: what two of them need lives below src/http (the pages' shell in src/http/html).",
      from: { path: '^src/http/(api|web|console)/' },
      to: { path: '^src/http/(api|web|console)/', pathNot: '^src/http/$1/' },
    },
    {
      name: 'http-writes-no-sql',
      severity: 'error',
      comment: 'Queries live in the stores of the features that own the tables; the HTTP layer calls them (types are fine).',
      from: { path: '^src/http/' },
      to: { path: 'node_modules/kysely/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '\\.test\\.ts$' },
  },
};
