/**
 * docs/layout.md is the map of the code: every folder of src/, every feature
 * under src/features/ and every folder of test/ has its line there, and every
 * feature its table names is a folder. A new folder without its line, or a line
 * for a folder that went, fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { foldersUnder, read } from '../helpers/repository-text.js';

const LAYOUT = read('docs/layout.md');
/** The tree at the top of layout.md, inside its first code block. */
const TREE = LAYOUT.split('```')[1] ?? '';

/** The features named in the first column of the table of features: | `name` | ... */
function tableFeatures(text: string): string[] {
  return [...text.matchAll(/^\| `([\w-]+)` \|/gm)].map((match) => match[1]!).sort();
}

/** The folders under src/ the tree names, as `  name/` at the start of a line of it. */
function treeSourceFolders(tree: string): string[] {
  return [...tree.matchAll(/^ {2}([\w-]+)\//gm)].map((match) => match[1]!).sort();
}

/** The folders under test/ the tree names: `test/` and the name, or a name and `/` in the list of features. */
function treeTestFolders(tree: string): Set<string> {
  const testLines = tree.slice(tree.indexOf('test/<feature>/'), tree.indexOf('\nbench/'));
  return new Set([...testLines.matchAll(/(?:test\/)?([\w-]+)\//g)].map((match) => match[1]!));
}

describe('docs/layout.md', () => {
  it('names every folder of src/ in its tree, and only those', () => {
    const named = treeSourceFolders(TREE).filter((name) => name !== 'features');
    assert.deepEqual(
      named,
      foldersUnder('src').filter((name) => name !== 'features'),
    );
    assert.match(TREE, /^ {2}features\/<feature>\//m, 'the tree says what a feature folder holds');
  });

  it('has a row for every feature under src/features/, and a folder for every row', () => {
    assert.deepEqual(tableFeatures(LAYOUT), foldersUnder('src/features'));
  });

  it('names every folder of test/ in its tree', () => {
    const named = treeTestFolders(TREE);
    const missing = foldersUnder('test').filter((name) => !named.has(name));
    assert.deepEqual(missing, [], `folders of test/ that docs/layout.md does not name: ${missing.join(', ')}`);
  });

  it('tells a feature without its row, a row without its folder and a test folder without its line', () => {
    const table = '| `auth` | login |\n| `ghost` | gone |\n';
    assert.deepEqual(tableFeatures(table), ['auth', 'ghost']);
    assert.notDeepEqual(tableFeatures(table), foldersUnder('src/features'));
    assert.deepEqual(treeSourceFolders('  db/    x\n  lib/   y\n  app.ts z\n  schemas/common.ts\n'), [
      'db',
      'lib',
      'schemas',
    ]);
    const tests = treeTestFolders('test/<feature>/  tests: auth/, users/; test/helpers/ data\nbench/ x');
    assert.ok(tests.has('auth') && tests.has('helpers') && !tests.has('platform'));
  });
});
