/**
 * Which endpoints this server has, read from its own OpenAPI document, so a page
 * for an endpoint the server lacks says so instead of failing.
 */
import { useEffect, useState } from 'react';

export interface Features {
  keyLifecycle: boolean;
  expiredKeys: boolean;
  dryRun: boolean;
  history: boolean;
  audit: boolean;
}

type Operation = { parameters?: { name?: string; in?: string }[]; requestBody?: unknown };
type Document = { paths?: Record<string, Record<string, Operation>> };

export function featuresOf(document: Document): Features {
  const paths = document.paths ?? {};
  const has = (path: string, method: string) => Boolean(paths[path]?.[method]);
  const hasQuery = (path: string, method: string, name: string) =>
    Boolean(paths[path]?.[method]?.parameters?.some((p) => p.in === 'query' && p.name === name));
  const keyStatus = paths['/v1/api-keys']?.get?.parameters?.find((p) => p.name === 'status');
  return {
    keyLifecycle: has('/v1/api-keys/{id}', 'patch') && has('/v1/api-keys/{id}/roll', 'post'),
    expiredKeys: JSON.stringify(keyStatus ?? {}).includes('EXPIRED') || has('/v1/api-keys/{id}/roll', 'post'),
    dryRun: hasQuery('/v1/fee-rules/bulk-assign', 'post', 'dry_run'),
    history: has('/v1/merchants/{id}/fee-rules', 'get'),
    audit: has('/v1/audit-events', 'get'),
  };
}

let cached: Promise<Features> | undefined;

export function useFeatures(): Features | undefined {
  const [features, setFeatures] = useState<Features>();
  useEffect(() => {
    cached ??= fetch('/v1/openapi.json')
      .then((response) => (response.ok ? response.json() : {}))
      .then(featuresOf, () => featuresOf({}));
    let live = true;
    void cached.then((value) => live && setFeatures(value));
    return () => {
      live = false;
    };
  }, []);
  return features;
}
