/** What the OpenAPI document says of the merchant operations; their HTTP is in merchants-routes.ts. */
import { operationDocs } from '../../schemas/common.js';

export const MERCHANTS_DOCS = operationDocs('merchants', {
  listMerchants: {
    summary: "List the caller's merchants",
    description:
      'A customer caller sees every merchant of its customer; a merchant caller sees only itself. Newest first (create_date, then id). ' +
      '`q` searches among them: names containing the text in any letter case, or ids starting with it (so a full id finds that one merchant). ' +
      'Unknown query parameters are a 400.',
  },
});
