/**
 * Which feature folders import which: the arrows between folders of
 * src/features/, read from the import specifiers of their files (static,
 * type-only and dynamic alike), and the cycles they form.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './repository-text.js';

export type Arrows = Map<string, Set<string>>;

const FEATURES = path.join(ROOT, 'src/features');

/** `from '../b/x.js'` or `import('../b/x.js')` in a file of a feature: an arrow to b. */
const SIBLING_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*)['"]\.\.\/([\w-]+)\//g;

/** Every relative import specifier: static, type-only, re-exports and dynamic imports alike. */
const ANY_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/** Any import of a module under src/features/ in a file below `root`/`dir`, as `file -> specifier` (db/ and lib/ know no feature). */
export function featureImportsUnder(dir: string, root = ROOT): string[] {
  const found: string[] = [];
  for (const file of filesUnder(path.join(root, dir))) {
    for (const match of readFileSync(file, 'utf8').matchAll(ANY_IMPORT)) {
      const target = path.resolve(path.dirname(file), match[1]!);
      if (target.startsWith(path.join(root, 'src/features') + path.sep))
        found.push(`${path.relative(root, file)} -> ${match[1]}`);
    }
  }
  return found.sort();
}

/** Feature → the other features its files import, sorted. */
export function featureArrows(): Arrows {
  const arrows: Arrows = new Map();
  for (const feature of readdirSync(FEATURES).sort()) {
    const targets = new Set<string>();
    for (const file of filesUnder(path.join(FEATURES, feature))) {
      for (const match of readFileSync(file, 'utf8').matchAll(SIBLING_IMPORT)) {
        if (match[1] !== feature) targets.add(match[1]!);
      }
    }
    arrows.set(feature, new Set([...targets].sort()));
  }
  return arrows;
}

/** The groups of features that reach each other (Tarjan's strongly connected components of more than one). */
export function cycles(arrows: Arrows): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of arrows.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of arrows.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The arrows as `a -> b, c` lines, one per feature that imports another. */
export function arrowLines(arrows: Arrows): string[] {
  return [...arrows]
    .filter(([, targets]) => targets.size > 0)
    .map(([feature, targets]) => `${feature} -> ${[...targets].join(', ')}`)
    .sort();
}
