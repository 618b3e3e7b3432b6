import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '@starport/sdk';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * The SDK's types cannot drift from the API. They are aliases of packages/sdk/src/generated/openapi.ts,
 * which `npm run sdk:types` (scripts/sdk-types.mjs) generates from the OpenAPI document the
 * built service serves: the committed file must equal a fresh generation (it is stale after any
 * change to a schema until regenerated). Then, from the document this source serves, the
 * TypeScript compiler checks that each public SDK type is *identical* to its generated
 * counterpart (same fields, same optionality, same literal unions, recursively).
 */

const SDK_SOURCE = fileURLToPath(new URL('../../packages/sdk/src/index.ts', import.meta.url));

/** SDK type ← document schema (success bodies lose their `ok`, which the SDK strips). */
const PAIRS: [sdk: string, generated: string][] = [
  ['sdk.Amount', "S['Amount']"],
  ['sdk.Order', "Body<S['Order']>"],
  ['sdk.OrderWithEvents', "Body<S['OrderWithEvents']>"],
  ['sdk.OrderEvent', "S['OrderEvent']"],
  ['sdk.OrderCreatedEvent', "S['OrderEventCreated']"],
  ['sdk.OrderProcessingEvent', "S['OrderEventProcessing']"],
  ['sdk.OrderAttemptFailedEvent', "S['OrderEventAttemptFailed']"],
  ['sdk.OrderPaymentSentEvent', "S['OrderEventPaymentSent']"],
  ['sdk.OrderDeliveredEvent', "S['OrderEventDelivered']"],
  ['sdk.OrderFailedEvent', "S['OrderEventFailed']"],
  ['sdk.Quote', "Body<S['Quote']>"],
  ['sdk.Prices', "Body<S['Prices']>"],
  ['sdk.PriceLine', "S['PriceLine']"],
  ['sdk.RecipientValidation', "Body<S['RecipientValidation']>"],
  ['sdk.Balance', "Body<S['Balance']>"],
  ['sdk.Deposit', "S['Deposit']"],
  ['sdk.DepositList', "Body<S['DepositList']>"],
  ['sdk.DepositAddress', "Body<S['DepositAddress']>"],
  ['sdk.OrderList', "Body<S['OrderList']>"],
  ['sdk.BalanceEntry', "S['BalanceEntry']"],
  ['sdk.BalanceHistory', "Body<S['BalanceHistory']>"],
  ['sdk.TestFunding', "Body<S['TestFunding']>"],
  ['sdk.FundTestBalanceParams', "S['FundTestBalanceRequest']"],
  ['sdk.ListOrdersParams["status"]', "NonNullable<operations['listOrders']['parameters']['query']>['status']"],
  ['sdk.ErrorBody', "S['Error']"],
  ['sdk.ErrorCode', "S['ErrorCode']"],
  ['sdk.CreateOrderParams', "S['CreateOrderRequest']"],
  ['sdk.ValidateRecipientParams', "S['ValidateRecipientRequest']"],
  ['sdk.WebhookEndpoint', "S['WebhookEndpoint']"],
  ['sdk.BalanceLowEvent', "S['BalanceLowEvent']"],
  ['sdk.WebhookEndpointWithSecret', "Body<S['WebhookEndpointWithSecret']>"],
  ['sdk.WebhookEndpointList', "Body<S['WebhookEndpointList']>"],
  ['sdk.WebhookEndpointDeleted', "Body<S['WebhookEndpointDeleted']>"],
  ['sdk.CreateWebhookEndpointParams', "S['CreateWebhookEndpointRequest']"],
  ['sdk.QuoteParams["product"]', "NonNullable<operations['getQuote']['parameters']['query']>['product']"],
  ['keyof sdk.QuoteParams', "keyof NonNullable<operations['getQuote']['parameters']['query']>"],
];

let h: Harness;
let document: Record<string, any>;
let dir: string;

beforeAll(async () => {
  h = await startHarness();
  document = (await h.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-sdk-types-'));
});
afterAll(async () => {
  await h.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Compiles the checks; returns the compiler's complaints. */
function compile(pairs: [string, string][]): string[] {
  const check = [
    `import type { components, operations } from './openapi.ts';`,
    `import type * as sdk from ${JSON.stringify(SDK_SOURCE)};`,
    'type S = components["schemas"];',
    'type Body<T> = Omit<T, "ok">;',
    'type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;',
    ...pairs.map(([sdk, generated], index) => `export const check${index}: Equals<${sdk}, ${generated}> = true; // ${sdk}`),
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'check.ts'), check);
  const program = ts.createProgram([path.join(dir, 'check.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true,
  });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return text;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${path.basename(diagnostic.file.fileName)}:${line + 1}: ${text}\n  ${diagnostic.file.text.split('\n')[line]}`;
  });
}

test('the committed generated types equal a fresh generation from the served document', async () => {
  const script = fileURLToPath(new URL('../../scripts/sdk-types.mjs', import.meta.url));
  const outcome = await new Promise<{ code: number; output: string }>((resolve) => {
    execFile(process.execPath, [script, '--check'], (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }));
  });
  expect(outcome, outcome.output).toEqual({ code: 0, output: expect.stringContaining('is up to date') });
}, 120_000);

test('the SDK types are identical to the types generated from the served OpenAPI document', async () => {
  fs.writeFileSync(path.join(dir, 'openapi.ts'), astToString(await openapiTS(document as never)));
  // Wrong pairings go along, to show the comparison has teeth: each must be reported.
  const wrong: [string, string][] = [
    ['sdk.Order', "Body<S['OrderWithEvents']>"],
    ['sdk.ErrorBody', "Omit<S['Error'], 'request_id'>"],
    ['sdk.CreateOrderParams', "Required<S['CreateOrderRequest']>"],
  ];
  const complaints = compile([...PAIRS, ...wrong]);
  const aboutWrong = complaints.filter((complaint) => wrong.some((_, i) => complaint.includes(`check${PAIRS.length + i}:`)));
  expect(complaints.filter((complaint) => !aboutWrong.includes(complaint))).toEqual([]);
  expect(aboutWrong).toHaveLength(wrong.length);
}, 120_000);

test('the SDK knows exactly the error codes the document lists', () => {
  expect([...ERROR_CODES].sort()).toEqual([...document.components.schemas.ErrorCode.enum].sort());
});

test('the SDK has a method for every operation', async () => {
  const { Starport } = await import('@starport/sdk');
  const operationIds = Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((methods) =>
    Object.values(methods).map((operation) => operation.operationId),
  );
  for (const id of operationIds) expect(typeof (Starport.prototype as unknown as Record<string, unknown>)[id], id).toBe('function');
});
