export function consoleBuildIsStale(): boolean;
export function buildConsoleIfStale(): Promise<boolean>;
