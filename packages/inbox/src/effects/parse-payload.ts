import { PermanentEffectError, type InboxEventBase } from './types.ts';

/**
 * A schema as the Standard Schema spec (standardschema.dev) defines it, the part read here: zod (3.24 and
 * later), valibot and arktype schemas all are one. Declared here rather than imported, as the spec asks, so the
 * team's own zod is the one used, whatever its version.
 */
export interface StandardSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

type StandardResult<Output> =
  { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<StandardIssue> };

interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The output type of a Standard Schema (`z.output<typeof schema>` for a zod schema). */
export type SchemaOutput<S extends StandardSchema> = S extends StandardSchema<infer Output> ? Output : never;

function issuePath(issue: StandardIssue): string {
  const keys = (issue.path ?? []).map((segment) =>
    String(typeof segment === 'object' ? segment.key : segment),
  );
  return keys.length ? keys.join('.') : '(payload)';
}

/**
 * The payload of an event whose provider has no type package, parsed by the team's schema. A payload that does
 * not match throws `PermanentEffectError` (retrying cannot change a recorded payload: the event goes `dead` at
 * once), whose message names the fields and the schema's complaints, never the payload's values.
 *
 * @example
 * const Issue = z.object({ action: z.string(), data: z.object({ id: z.string(), title: z.string() }) });
 * createInbox().on('linear', 'Issue.create', {
 *   triage: async ({ event, tx }) => {
 *     const issue = parsePayload(Issue, event); // typed: z.output<typeof Issue>
 *   },
 * });
 */
export function parsePayload<S extends StandardSchema>(
  schema: S,
  event: Pick<InboxEventBase, 'provider' | 'type' | 'payload'>,
): SchemaOutput<S> {
  const result = schema['~standard'].validate(event.payload);
  if (result instanceof Promise) {
    throw new TypeError('parsePayload takes a synchronous schema (no async refinements or transforms)');
  }
  if (result.issues) {
    const issues = result.issues
      .slice(0, 5)
      .map((issue) => `${issuePath(issue)}: ${issue.message}`)
      .join('; ');
    throw new PermanentEffectError(`the ${event.provider} ${event.type} payload does not match: ${issues}`);
  }
  return result.value as SchemaOutput<S>;
}
