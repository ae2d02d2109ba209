import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type {
  EffectSpanAttributes,
  EventSpan,
  Telemetry,
  TraceContext,
} from '@webhook-inbox/inbox/telemetry';

// Jobs carry the W3C trace context only, whatever OTEL_PROPAGATORS says: never baggage, which could hold
// anything a caller put there.
const w3c = new W3CTraceContextPropagator();
const tracer = trace.getTracer('webhook-inbox');

/** The attribute names of our spans: keys and outcomes, never payloads, headers or secrets. */
export const ATTR = {
  provider: 'webhook.provider',
  eventId: 'webhook.event_id',
  eventType: 'webhook.event_type',
  outcome: 'webhook.outcome',
  jobId: 'webhook.job_id',
  attempt: 'webhook.attempt',
  replay: 'webhook.replay',
  effect: 'webhook.effect.name',
  effectKind: 'webhook.effect.kind',
  effectAttempt: 'webhook.effect.attempt',
  effectOutcome: 'webhook.effect.outcome',
} as const;

interface OtelEventSpan extends EventSpan {
  readonly context: Context;
}

function extract(carrier: TraceContext): Context {
  return w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
}

/** The error's class only: an effect's error message can quote the payload (an address, an amount). */
function fail(span: Span, error: unknown): void {
  span.setAttribute('error.type', error instanceof Error ? error.name : typeof error);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

async function inSpan<T>(span: Span, parent: Context, run: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parent, span), run);
  } catch (error) {
    fail(span, error);
    throw error;
  } finally {
    span.end();
  }
}

function effectAttributes(attributes: EffectSpanAttributes, outcome: string): Attributes {
  return {
    [ATTR.effect]: attributes.effect,
    [ATTR.effectKind]: attributes.kind,
    [ATTR.effectAttempt]: attributes.attempt,
    [ATTR.effectOutcome]: outcome,
  };
}

/** The OpenTelemetry implementation of the inbox's hooks, on the global tracer provider. */
export function createOtelTelemetry(): Telemetry {
  return {
    traceContext() {
      const carrier: Partial<TraceContext> = {};
      w3c.inject(context.active(), carrier, defaultTextMapSetter);
      return carrier.traceparent ? (carrier as TraceContext) : undefined;
    },

    annotateRequest({ provider, outcome, eventId, type }) {
      const span = trace.getActiveSpan();
      if (!span) return;
      span.setAttributes({ [ATTR.provider]: provider, [ATTR.outcome]: outcome });
      if (eventId !== undefined) span.setAttribute(ATTR.eventId, eventId);
      if (type !== undefined) span.setAttribute(ATTR.eventType, type);
    },

    ingest(event, run) {
      const span = tracer.startSpan('webhook ingest', {
        kind: SpanKind.INTERNAL,
        attributes: { [ATTR.provider]: event.provider, [ATTR.eventId]: event.eventId },
      });
      if (event.type !== undefined) span.setAttribute(ATTR.eventType, event.type);
      return inSpan(span, context.active(), async () => {
        const outcome = await run();
        span.setAttribute(ATTR.outcome, outcome);
        return outcome;
      });
    },

    startEvent(start) {
      // The request's trace continues here; a replay starts its own trace, linked to the first delivery's.
      const parent = start.trace ? extract(start.trace) : ROOT_CONTEXT;
      const links: Link[] = [];
      const original = start.replayOf ? trace.getSpanContext(extract(start.replayOf)) : undefined;
      if (original && trace.isSpanContextValid(original)) links.push({ context: original });
      const span = tracer.startSpan(
        'webhook event',
        {
          kind: SpanKind.CONSUMER,
          links,
          attributes: {
            [ATTR.provider]: start.provider,
            [ATTR.eventId]: start.eventId,
            [ATTR.jobId]: start.jobId,
            [ATTR.attempt]: start.attempt,
            [ATTR.replay]: start.replayOf !== undefined,
          },
        },
        parent,
      );
      if (start.type !== undefined) span.setAttribute(ATTR.eventType, start.type);
      const eventSpan: OtelEventSpan = {
        context: trace.setSpan(parent, span),
        end(outcome) {
          span.setAttribute(ATTR.outcome, outcome);
          if (outcome !== 'processed') span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
      return eventSpan;
    },

    effect(parent, attributes, run) {
      const parentContext = (parent as OtelEventSpan).context;
      const span = tracer.startSpan(
        `effect ${attributes.effect}`,
        { kind: SpanKind.INTERNAL, attributes: effectAttributes(attributes, 'failed') },
        parentContext,
      );
      return inSpan(span, parentContext, async () => {
        const result = await run();
        span.setAttribute(ATTR.effectOutcome, 'completed');
        return result;
      });
    },

    skippedEffect(parent, attributes) {
      tracer
        .startSpan(
          `effect ${attributes.effect}`,
          { kind: SpanKind.INTERNAL, attributes: effectAttributes(attributes, 'skipped') },
          (parent as OtelEventSpan).context,
        )
        .end();
    },

    span(name, attributes, run) {
      return inSpan(tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }), context.active(), run);
    },
  };
}
