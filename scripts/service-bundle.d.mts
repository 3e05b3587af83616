/** Writes `outdir`/feegate.mjs and its workers; answers the bundle's path. */
export function bundleService(outdir: string): Promise<string>;
