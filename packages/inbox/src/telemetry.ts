/**
 * The inbox's tracing hook points: the receiver's ingest, the trace context a job carries, the worker's event and
 * effect spans. Nothing here loads OpenTelemetry: until an app installs an implementation (`installTelemetry`,
 * done by `startTracing` of `@webhook-inbox/tracing` when the OTEL_* environment turns tracing on), every hook is one
 * `undefined` check and calls straight through, so tracing off costs nothing.
 */

/** A W3C trace context (https://www.w3.org/TR/trace-context/), as a job carries it. */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** The event a span is about: its key and type, never its payload. */
export interface EventSpanKey {
  provider: string;
  eventId: string;
  type?: string;
}

/** What the worker's span for one attempt of an event starts from: its job. */
export interface EventSpanStart extends EventSpanKey {
  /** The trace the job was sent in (the receiver's request): the event span is its child. */
  trace?: TraceContext | undefined;
  /** The trace of the event's first delivery, when this job is a replay: linked, not continued. */
  replayOf?: TraceContext | undefined;
  jobId: string;
  attempt: number;
}

/** The worker's span for one attempt of an event; its effects' spans are its children. */
export interface EventSpan {
  end(outcome: 'processed' | 'failed' | 'dead'): void;
}

export interface EffectSpanAttributes {
  effect: string;
  kind: 'database' | 'external';
  attempt: number;
}

/** What `startTracing` installs (`@webhook-inbox/tracing`'s otel.ts). */
export interface Telemetry {
  traceContext(): TraceContext | undefined;
  annotateRequest(attributes: { provider: string; outcome: string; eventId?: string; type?: string }): void;
  ingest<T extends string>(event: EventSpanKey, run: () => Promise<T>): Promise<T>;
  startEvent(start: EventSpanStart): EventSpan;
  effect<T>(parent: EventSpan, attributes: EffectSpanAttributes, run: () => Promise<T>): Promise<T>;
  skippedEffect(parent: EventSpan, attributes: EffectSpanAttributes): void;
  /** A span of our own around a call no maintained instrumentation covers (SMTP). */
  span<T>(name: string, attributes: Record<string, string | number>, run: () => Promise<T>): Promise<T>;
}

let installed: Telemetry | undefined;

/** Installs (or, with `undefined`, removes) the implementation every hook below calls. */
export function installTelemetry(telemetry: Telemetry | undefined): void {
  installed = telemetry;
}

export function tracingInstalled(): boolean {
  return installed !== undefined;
}

/** The fields a job adds to carry the current trace: `{ trace }`, or nothing when tracing is off. */
export function jobTraceContext(): { trace?: TraceContext } {
  const trace = installed?.traceContext();
  return trace ? { trace } : {};
}

/** Sets the outcome and the event's key on the current request's span (the receiver's webhook route). */
export function annotateRequest(attributes: Parameters<Telemetry['annotateRequest']>[0]): void {
  installed?.annotateRequest(attributes);
}

/** Runs the ingest transaction in its span; its result (accepted, duplicate) is the span's outcome. */
export function traceIngest<T extends string>(event: EventSpanKey, run: () => Promise<T>): Promise<T> {
  return installed ? installed.ingest(event, run) : run();
}

export function startEventSpan(start: EventSpanStart): EventSpan | undefined {
  return installed?.startEvent(start);
}

/** Runs one effect in a child span of its event's span. */
export function traceEffect<T>(
  parent: EventSpan | undefined,
  attributes: EffectSpanAttributes,
  run: () => Promise<T>,
): Promise<T> {
  return installed && parent ? installed.effect(parent, attributes, run) : run();
}

export function traceSkippedEffect(parent: EventSpan | undefined, attributes: EffectSpanAttributes): void {
  if (installed && parent) installed.skippedEffect(parent, attributes);
}

export function traceSpan<T>(
  name: string,
  attributes: Record<string, string | number>,
  run: () => Promise<T>,
): Promise<T> {
  return installed ? installed.span(name, attributes, run) : run();
}
