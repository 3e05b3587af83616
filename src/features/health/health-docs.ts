/** What the OpenAPI document says of the probes; their HTTP is in health-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

export const HEALTH_DOCS = operationDocs('operations', {
  getHealth: {
    summary: 'The process is up',
    description: 'Liveness: answers without touching the database. Unknown query parameters are a 400.',
  },
  getReadiness: {
    summary: 'The database answers',
    description:
      'Readiness: 503 `database_unavailable` while the database does not answer. Unknown query parameters are a 400.',
  },
});
