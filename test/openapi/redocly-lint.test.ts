import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * The served OpenAPI document lints clean with Redocly's recommended rules, the linter many
 * clients' tooling runs (what `npx @redocly/cli lint` reports): every example judged valid as
 * ajv judges it, no unused component, a licence, and so on. Offline: Redocly's lint engine,
 * not its CLI, on the document as served.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

test("Redocly's recommended rules find no problem in the served document", async () => {
  const response = await fetch(`${h.url}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  const source = await response.text();
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source, absoluteRef: `${h.url}/api/v1/openapi.json`, config });
  const described = problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
  expect(described).toEqual([]);
});
