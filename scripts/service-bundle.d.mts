/** Writes `outdir`/feegate.mjs and its workers; answers the bundle's path. */
export function bundleService(outdir: string): Promise<string>;
/** Throws, naming the file and line, when one of `files` holds a character beyond ASCII. */
export function assertAscii(files: string[]): void;
