// Measures a password with zxcvbn for the main thread (password-strength.ts):
// its matching can take a few hundred milliseconds on 100 characters, which
// must never be the event loop's. Plain JavaScript so that it loads in a worker
// without a TypeScript loader. The dictionaries (about 15 MB) load at the first job.
import { parentPort } from 'node:worker_threads';

let zxcvbn;

parentPort.on('message', async ({ id, password, userInputs }) => {
  try {
    if (!zxcvbn) {
      const [{ ZxcvbnFactory }, { dictionary, adjacencyGraphs }] = await Promise.all([
        import('@zxcvbn-ts/core'),
        import('@zxcvbn-ts/language-common'),
      ]);
      zxcvbn = new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs });
    }
    const result = zxcvbn.check(password, userInputs);
    let commonLength = 0;
    for (const match of result.sequence) {
      if (match.pattern === 'dictionary' && match.dictionaryName === 'passwords')
        commonLength = Math.max(commonLength, match.token.length);
    }
    parentPort.postMessage({ id, result: { score: result.score, commonLength } });
  } catch (err) {
    parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
