/** The part of autocannon 8's programmatic API the bench uses (the package ships no types). */
declare module 'autocannon' {
  export interface RequestParams {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    requests?: Array<RequestParams & { setupRequest?(request: RequestParams): RequestParams }>;
  }

  export interface Histogram {
    average: number;
    mean: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  }

  export interface Result {
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Histogram;
    requests: Histogram & { total: number };
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
