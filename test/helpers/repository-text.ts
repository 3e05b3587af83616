/**
 * The repository's prose as the docs tests read it: the Markdown documents, the
 * comments of the source files, and which files and folders exist.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** Generated or installed, never written by hand: not walked. */
const SKIPPED = new Set(['node_modules', '.git', 'dist', '.tmp', 'data']);

/** Every file of the repository, relative to its root, with `/` separators. */
export function repositoryFiles(): string[] {
  const files: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
      if (SKIPPED.has(entry.name)) continue;
      const child = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else files.push(child);
    }
  };
  walk('');
  return files.sort();
}

/** The folders directly under `relative`. */
export function foldersUnder(relative: string): string[] {
  return readdirSync(path.join(ROOT, relative), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
}

export const read = (relative: string): string => readFileSync(path.join(ROOT, relative), 'utf8');

/** The Markdown documents people read: the README and docs/. */
export function documents(files = repositoryFiles()): string[] {
  return files.filter((file) => file === 'README.md' || (file.startsWith('docs/') && file.endsWith('.md')));
}

const CODE = /\.(ts|tsx|mjs|js|cjs)$/;
const CODE_FOLDERS = ['src/', 'test/', 'scripts/', 'bench/', 'console/src/', 'bin/'];

/** The source files whose comments are checked. */
export function sourceFiles(files = repositoryFiles()): string[] {
  return files.filter((file) => CODE.test(file) && CODE_FOLDERS.some((folder) => file.startsWith(folder)));
}

/**
 * The comments of a source file, each with its first line number: block
 * comments and line comments (a `//` after a space or at a line's start, so
 * that a URL's `https://` is not one).
 */
export function comments(text: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  const lineOf = (index: number) => text.slice(0, index).split('\n').length;
  for (const match of text.matchAll(/\/\*[\s\S]*?\*\/|(?<=^|\s)\/\/.*$/gm)) {
    found.push({ line: lineOf(match.index), text: match[0] });
  }
  return found;
}
