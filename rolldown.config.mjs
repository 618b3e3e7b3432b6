// Bundles the compiled CLI (dist/cli/main.js, from tsc) into dist/bin/: a few files instead of
// the several hundred modules of kysely, fastify and the TON libraries, which Node 20's ES module
// loader otherwise resolves and reads one by one on every start. `starport account list` starts in
// about half the time. Each command's heavy parts (the service, the PostgreSQL driver) stay
// separate chunks, loaded only by the commands that use them.
import fs from 'node:fs';

// Chunk names carry content hashes: clear the folder so that old builds' chunks do not pile up.
fs.rmSync('dist/bin', { recursive: true, force: true });

export default {
  input: 'dist/cli/main.js',
  platform: 'node',
  // Native addons and their optional peers load from node_modules as they are.
  external: [/^node:/, 'better-sqlite3', 'better-sqlite3-napi', 'pg-native', '@node-rs/argon2'],
  output: { dir: 'dist/bin', format: 'esm' },
  logLevel: 'warn',
  // `npm install` builds: a warning there (e.g. INEFFECTIVE_DYNAMIC_IMPORT, a dynamic import of a
  // module that is in the main chunk anyway) fails the build instead of scrolling past.
  onLog(level, log, handler) {
    handler(level === 'warn' ? 'error' : level, log);
  },
};
