/**
 * An OTLP/HTTP trace receiver on 127.0.0.1, for tests and the bench: it takes
 * what an exporter with OTEL_EXPORTER_OTLP_PROTOCOL=http/json POSTs to /v1/traces
 * and keeps each span, flattened, with the raw text of every request (to search
 * it for what must never be exported).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  service: unknown;
}

export interface OtlpReceiver {
  /** The OTEL_EXPORTER_OTLP_ENDPOINT of it. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request body as received. */
  texts: string[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
const valueOf = (v: AnyValue): unknown => v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue;
const attributesOf = (list: Array<{ key: string; value: AnyValue }> = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const texts: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      texts.push(text);
      try {
        for (const resourceSpans of JSON.parse(text).resourceSpans ?? []) {
          const service = attributesOf(resourceSpans.resource?.attributes)['service.name'];
          for (const scopeSpans of resourceSpans.scopeSpans ?? [])
            for (const span of scopeSpans.spans ?? [])
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                kind: span.kind,
                attributes: attributesOf(span.attributes),
                links: span.links ?? [],
                service,
              });
        }
      } catch {
        // Not JSON (a protobuf exporter): kept as text only.
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    texts,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
