#!/usr/bin/env node
/**
 * Dependency hygiene: `npm audit --omit=dev --json`, failing (exit 1) on any high or critical
 * advisory against a production dependency that is not listed in scripts/audit-exceptions.json
 * (each exception documented there and in docs/security.md).
 *
 * If the advisory service cannot be reached (no network, a registry mirror without the audit
 * endpoint), it says so in a banner and exits 0: an unreachable service must not fail a build,
 * but nobody should mistake that for a clean audit.
 *
 *   node scripts/audit.mjs                 run the audit
 *   node scripts/audit.mjs --report FILE   evaluate a saved `npm audit --json` report instead
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FAILING = new Set(['high', 'critical']);

/** The advisory ids (GHSA-… from the URL, else the npm source number) a vulnerability entry cites. */
function advisoriesOf(vulnerability) {
  return (vulnerability.via ?? [])
    .filter((via) => typeof via === 'object' && via !== null)
    .map((via) => ({
      id: /GHSA-[\w-]+/.exec(via.url ?? '')?.[0] ?? String(via.source ?? via.title ?? 'unknown'),
      severity: via.severity,
      title: via.title ?? '',
      url: via.url ?? '',
    }));
}

/**
 * Pure evaluation of an `npm audit --json` report: { status: 'unreachable' | 'clean' | 'failed', lines }.
 * Exported for the reliability suite's tests.
 */
export function evaluate(report, exceptions) {
  if (!report || typeof report !== 'object' || !report.metadata?.vulnerabilities || typeof report.vulnerabilities !== 'object') {
    const reason = report?.message ?? report?.error?.summary ?? 'no audit report in the answer';
    return { status: 'unreachable', lines: [`the npm advisory service could not be reached: ${String(reason).split('\n')[0]}`] };
  }
  const excepted = new Map((exceptions ?? []).map((e) => [String(e.id), e]));
  const failing = [];
  const accepted = [];
  for (const [name, vulnerability] of Object.entries(report.vulnerabilities)) {
    for (const advisory of advisoriesOf(vulnerability)) {
      if (!FAILING.has(advisory.severity ?? vulnerability.severity)) continue;
      const line = `${advisory.severity ?? vulnerability.severity} ${advisory.id} in ${name}: ${advisory.title} ${advisory.url}`.trim();
      (excepted.has(advisory.id) ? accepted : failing).push(line);
    }
  }
  const counts = report.metadata.vulnerabilities;
  const lines = [`production dependencies: ${['critical', 'high', 'moderate', 'low', 'info'].map((s) => `${counts[s] ?? 0} ${s}`).join(', ')}`];
  for (const line of accepted) lines.push(`  accepted (scripts/audit-exceptions.json): ${line}`);
  for (const line of failing) lines.push(`  NOT ACCEPTED: ${line}`);
  return { status: failing.length > 0 ? 'failed' : 'clean', lines };
}

function runAudit() {
  const result = spawnSync('npm', ['audit', '--omit=dev', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) return { message: result.error.message };
  try {
    return JSON.parse(result.stdout);
  } catch {
    return { message: (result.stderr || result.stdout || 'npm audit printed nothing').trim().split('\n').pop() };
  }
}

function main() {
  const reportFlag = process.argv.indexOf('--report');
  const report = reportFlag > 0 ? JSON.parse(fs.readFileSync(process.argv[reportFlag + 1], 'utf8')) : runAudit();
  const exceptions = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts', 'audit-exceptions.json'), 'utf8')).exceptions;
  const { status, lines } = evaluate(report, exceptions);
  if (status === 'unreachable') {
    const bar = '!'.repeat(78);
    console.log(`${bar}\n!! DEPENDENCY AUDIT NOT DONE: ${lines[0]}\n!! Dependencies were NOT checked for advisories. This does not fail the build.\n${bar}`);
    return 0;
  }
  console.log(`dependency audit ${status === 'clean' ? 'passed' : 'FAILED'}: ${lines.join('\n')}`);
  if (status === 'failed') console.log('Upgrade the package, or document an exception in scripts/audit-exceptions.json and docs/security.md.');
  return status === 'failed' ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exit(main());
