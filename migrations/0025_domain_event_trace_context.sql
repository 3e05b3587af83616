-- The W3C traceparent of the request that wrote a domain event (contract section
-- 25): each webhook delivery attempt is a trace of its own, linked to it. Null
-- while tracing is off, and for the events written before.
ALTER TABLE "domain_events" ADD COLUMN "traceparent" text;
