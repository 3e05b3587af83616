/**
 * Runs the bench's phases one by one: a phase that fails is logged and recorded,
 * and has no result, so the other phases still run and the table still shows
 * their lines; bench/run.ts exits 2 after the table when any failed.
 */
import { EndpointFailed } from './load.js';

/** A phase that did not finish; its message names the phase, then what went wrong. */
class PhaseFailed extends Error {
  constructor(phase: string, cause: unknown) {
    // A failing endpoint says all in its message; anything else is a bug in the bench or the service: its stack helps.
    super(
      `phase "${phase}" failed: ${cause instanceof EndpointFailed ? cause.message : ((cause as Error).stack ?? String(cause))}`,
    );
  }
}

/** `peakRss` is the running service's so far, if one runs: logged with each phase, to see which one raises it. */
export function phaseRunner(log: (message: string) => void, peakRss: () => number | undefined) {
  /** Phases that failed, in order. */
  const failed: string[] = [];
  async function phase<T>(label: string, run: () => Promise<T>): Promise<T | undefined> {
    const rss = peakRss();
    log(rss === undefined ? label : `${label}   [server peak RSS so far ${Math.round(rss / 1024 / 1024)} MB]`);
    try {
      return await run();
    } catch (err) {
      const failure = new PhaseFailed(label, err);
      log(failure.message);
      failed.push(failure.message);
      return undefined;
    }
  }
  return { phase, failed };
}
