/**
 * `node --import tsx bench/top-frames.ts <file.cpuprofile> [count]`: the functions
 * with the most self time in a V8 CPU profile (from `npm run bench -- --profile`),
 * with the share of samples each holds, to see where the service spends its CPU
 * without opening DevTools.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const [file, count = '25'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node --import tsx bench/top-frames.ts <file.cpuprofile> [count]');
  process.exit(1);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
const hits = new Map<number, number>();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);

const byFrame = new Map<string, number>();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url
    ? `${url.replace(/^file:\/\//, '').replace(`${process.cwd()}${path.sep}`, '')}:${lineNumber + 1}`
    : '';
  const name = `${functionName || '(anonymous)'} ${where}`.trim();
  byFrame.set(name, (byFrame.get(name) ?? 0) + (hits.get(node.id) ?? 0));
}
const total = profile.samples.length;
const top = [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, Number(count));
for (const [name, n] of top) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`);
