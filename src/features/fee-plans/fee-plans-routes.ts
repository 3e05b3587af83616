/**
 * HTTP only: the fee plans' one route plugin, as app.ts registers one per
 * feature. Its parts keep their own plugins, registered in the order the
 * OpenAPI document lists their operations: the catalogue's listing, assignment,
 * then the catalogue's writes and scheduled changes.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { feeRuleCatalogueRoutes } from './fee-rule-catalogue-routes.js';
import { feeRulesRoutes } from './fee-rules-routes.js';
import { paymentPlansRoutes } from './payment-plans-routes.js';

export const feePlansRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(paymentPlansRoutes);
  await app.register(feeRulesRoutes);
  await app.register(feeRuleCatalogueRoutes);
};
