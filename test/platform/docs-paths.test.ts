/**
 * Every file or folder the docs, the README and the code's comments name exists,
 * and every Markdown link to a document lands on a file and on a heading of it:
 * a file moved or renamed breaks this test instead of sending the next reader to
 * nothing.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { comments, documents, read, repositoryFiles, sourceFiles } from '../helpers/repository-text.js';

const FILES = repositoryFiles();
const EXISTING = new Set(FILES);
const FOLDERS = new Set(
  FILES.flatMap((file) =>
    file
      .split('/')
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  ),
);

/** The repository's top-level folders: a path starting with one is named from the root. */
const ROOTED = /(?<![\w@./:-])((?:src|test|docs|migrations|scripts|bench|console|bin|clients|assets|\.ci)\/[\w./-]*)/g;
/** A file named by its name or a tail of its path (`users-dal.ts`, `auth/login-throttle.ts`). */
const NAMED = /(?<![\w@./:-])((?:[\w-]+\/)*\w[\w.-]*\.(?:ts|tsx|mjs|cjs|md|sql|css))(?![\w/-])/g;

/** Named on purpose although not in the repository: generated, git-ignored, or outside it. */
const NOT_OURS = [
  /^bench\/results\/./, // the bench's output, git-ignored
  /^dist\/|^feegate\.mjs$/, // the bundle npm start builds
  /-$/, // a prefix of names made with a version (assets/pglite-initdb-<version>)
  /\.d\.ts$/,
  /^node_modules\//,
];

function exists(name: string): boolean {
  const trimmed = name.replace(/[.]+$/, '').replace(/\/$/, '');
  if (EXISTING.has(trimmed) || FOLDERS.has(trimmed)) return true;
  // An import specifier names the compiled file of a TypeScript source.
  return trimmed.endsWith('.js') && EXISTING.has(trimmed.replace(/\.js$/, '.ts'));
}

/** The paths `text` names that exist nowhere, each told as `where: name`. */
function missingPaths(text: string, where: string, from: string): string[] {
  const missing: string[] = [];
  for (const [, name] of text.matchAll(ROOTED)) {
    if (!name || NOT_OURS.some((re) => re.test(name))) continue;
    if (!exists(name) && !exists(path.posix.join(from, name))) missing.push(`${where}: ${name}`);
  }
  for (const [, name] of text.matchAll(NAMED)) {
    if (!name || NOT_OURS.some((re) => re.test(name)) || ROOTED.test(name)) continue;
    ROOTED.lastIndex = 0;
    const relative = path.posix.normalize(path.posix.join(from, name));
    const found = exists(relative) || FILES.some((file) => file === name || file.endsWith(`/${name}`));
    if (!found) missing.push(`${where}: ${name}`);
  }
  return missing;
}

/** GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(document: string): Set<string> {
  const headings = read(document)
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => anchorOf(line.replace(/^#+ /, '')));
  return new Set(headings);
}

/** The links of `document` (its text `text`) to a file or heading of the repository that is not there. */
function brokenLinks(text: string, document: string): string[] {
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (!target || /^[a-z]+:/i.test(target)) continue;
    const [file = '', anchor] = target.split('#');
    const resolved = file ? path.posix.normalize(path.posix.join(path.posix.dirname(document), file)) : document;
    if (!exists(resolved)) broken.push(`${document}: ${target} (no ${resolved})`);
    else if (anchor && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      broken.push(`${document}: ${target} (no heading #${anchor} in ${resolved})`);
    }
  }
  return broken;
}

describe('paths named in prose', () => {
  it('every path the README and docs/ name exists', () => {
    const missing = documents(FILES).flatMap((document) =>
      missingPaths(read(document), document, path.posix.dirname(document)),
    );
    assert.deepEqual(missing, [], `named but missing:\n${missing.join('\n')}`);
  });

  it("every path the code's comments name exists (src/, test/, scripts/, bench/, bin/, console/src/)", () => {
    const missing = sourceFiles(FILES).flatMap((file) =>
      comments(read(file)).flatMap((comment) =>
        missingPaths(comment.text, `${file}:${comment.line}`, path.posix.dirname(file)),
      ),
    );
    assert.deepEqual(missing, [], `named but missing:\n${missing.join('\n')}`);
  });

  it('every Markdown link to a repository file lands on it, and on a heading of the document it names', () => {
    const broken = documents(FILES).flatMap((document) => brokenLinks(read(document), document));
    assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
  });

  it('tells a missing path, a missing file name and a link to a missing heading', () => {
    assert.deepEqual(missingPaths('see src/db/driver.ts and src/db/schema.ts', 'x', 'src/db'), ['x: src/db/driver.ts']);
    assert.deepEqual(missingPaths('see driver.ts, users/mail-outbox.ts and mail/mail-dal.ts', 'x', 'src'), [
      'x: driver.ts',
      'x: users/mail-outbox.ts',
    ]);
    assert.deepEqual(
      brokenLinks(
        '[a](performance.md#budgets) [b](performance.md#budget) [c](gone.md) [d](https://example.com/x.md)',
        'docs/x.md',
      ),
      [
        'docs/x.md: performance.md#budget (no heading #budget in docs/performance.md)',
        'docs/x.md: gone.md (no docs/gone.md)',
      ],
    );
    assert.equal(anchorOf('The measurements behind the defaults'), 'the-measurements-behind-the-defaults');
    assert.equal(anchorOf('Fee rules at an instant (3b), `/all`'), 'fee-rules-at-an-instant-3b-all');
  });
});
