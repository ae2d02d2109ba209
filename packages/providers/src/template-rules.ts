import type { z } from 'zod';
import type { TemplateSpec } from './template-schema.ts';

// The cross-field rules of a template source, in one list that both the sources file (a start-up error naming the
// source and the field) and a provider built in code (a TypeError) apply. Some depend on what the source's
// authentication covers: a key read from a header the signature does not cover lets a captured delivery be
// posted again as a new event, and X's CRC, which answers anyone the HMAC of a token, is safe only where no token
// it accepts can be a recordable body.

/** What a template source's authentication proves about a request. */
export type Coverage =
  /**
   * A signature (hmac, ed25519): over the body, and over `headers` (lower-case) besides; `bodyOnly` when the
   * signed bytes are the raw body and nothing else.
   */
  | { kind: 'signature'; headers: readonly string[]; bodyOnly: boolean }
  /** A credential (basic-auth, api-key): who sent the request, nothing about its body or headers. */
  | { kind: 'credential' };

export const CREDENTIAL: Coverage = { kind: 'credential' };

export interface TemplateIssue {
  path: string[];
  message: string;
}

/** Every rule `spec` breaks, each against the field to change; none for a valid template. */
export function templateIssues(spec: TemplateSpec, coverage: Coverage): TemplateIssue[] {
  const issues: TemplateIssue[] = [];
  const add = (path: string[], message: string) => issues.push({ path, message });
  if (spec.eventKey === undefined) {
    add(
      ['eventKey'],
      'is required: a header or JSON pointer that is the same on every redelivery of one event; ' +
        'or, knowing a sender that changes one byte on redelivery is then not deduplicated, { bodyHash: true }',
    );
  }
  const keyHeaders = keyHeadersOf(spec);
  const unsignedHeader = keyHeaders.find(
    (header) => coverage.kind === 'signature' && !coverage.headers.includes(header.toLowerCase()),
  );
  if (spec.batch !== undefined && keyHeaders.length > 0) {
    add(
      ['eventKey', 'header'],
      'cannot key a batch: every event of the request would share it; use a pointer into each item',
    );
  } else if (unsignedHeader !== undefined && spec.eventKey?.unsigned !== true) {
    add(
      ['eventKey', 'header'],
      `${unsignedHeader} is not covered by the signature: a captured delivery posted again with another ` +
        `${unsignedHeader} would be a new event; key by what is signed: a pointer into the body, { bodyHash: true }, ` +
        'or (hmac) the header hmac.id names with {id} in hmac.signed; or, knowing that, unsigned: true',
    );
  }
  if (spec.batch !== undefined && spec.body === 'form') add(['batch'], 'is for JSON bodies only');
  if (spec.formJsonFields.length > 0 && spec.body !== 'form') add(['formJsonFields'], 'needs body: form');
  if (
    spec.handshake?.type === 'crc' &&
    !(coverage.kind === 'signature' && coverage.bodyOnly && spec.body === 'json')
  ) {
    add(
      ['handshake', 'type'],
      'crc answers anyone the HMAC-SHA256 of a token under the first secret: only for an hmac source signing ' +
        '"{body}" alone, with body: json (X), where no token it accepts is a body the source records',
    );
  }
  return issues;
}

/** The headers the event key is read from, as written (none for a pointer or bodyHash key). */
export function keyHeadersOf(spec: TemplateSpec): readonly string[] {
  const header = spec.eventKey?.header;
  if (header === undefined) return [];
  return typeof header === 'string' ? [header] : header;
}

/** The cross-field rules of a template source (below), reported against the field to change. */
export function checkTemplate(spec: TemplateSpec, ctx: z.RefinementCtx, coverage: Coverage): void {
  for (const { path, message } of templateIssues(spec, coverage))
    ctx.addIssue({ code: 'custom', path, message });
}
