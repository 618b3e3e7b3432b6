import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

/**
 * The repository stands alone: every relative link in README.md, CONTRIBUTING.md, docs/ and the
 * packages' READMEs points at a file of the repository and, when it names a section, at a
 * heading that exists (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens,
 * "-1" for a repeat).
 */
const root = path.resolve(import.meta.dirname, '../..');
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  'packages/sdk/README.md',
  'packages/python/README.md',
  ...fs.readdirSync(path.join(root, 'docs')).flatMap((name) => (name.endsWith('.md') ? [`docs/${name}`] : [])),
];

function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const repeats = new Map<string, number>();
  // Headings outside fenced code blocks only.
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  for (const match of prose.matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = slug(match[1] ?? '');
    const seen = repeats.get(base);
    repeats.set(base, (seen ?? -1) + 1);
    anchors.add(seen === undefined ? base : `${base}-${seen + 1}`);
  }
  return anchors;
}

function relativeLinks(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? '').filter((link) => !/^[a-z]+:/i.test(link));
}

describe('links between the documents', () => {
  test.each(documents)('%s: every relative link and section anchor resolves', (document) => {
    const text = fs.readFileSync(path.join(root, document), 'utf8');
    const broken: string[] = [];
    for (const link of relativeLinks(text)) {
      const [file = '', anchor] = link.split('#');
      const target = file === '' ? document : path.normalize(path.join(path.dirname(document), decodeURI(file)));
      const absolute = path.join(root, target);
      if (!fs.existsSync(absolute)) {
        broken.push(`${link} (no file ${target})`);
      } else if (anchor && target.endsWith('.md') && !anchorsOf(fs.readFileSync(absolute, 'utf8')).has(anchor)) {
        broken.push(`${link} (no heading for #${anchor} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('the anchors follow GitHub: a repeated heading gets "-1"', () => {
    expect([...anchorsOf('# Start-up and shutdown\n## `GET /quote`, again\n### Tests\n### Tests\n')]).toEqual(['start-up-and-shutdown', 'get-quote-again', 'tests', 'tests-1']);
  });
});
