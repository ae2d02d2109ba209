import { parseSince } from '@webhook-inbox/operator/duration';
import { GROUP_NAME_RULE, isGroupName } from '@webhook-inbox/inbox/queue';
import { MAX_EVENT_FIELD_LENGTH, PROVIDER_NAME } from '@webhook-inbox/providers';
import { z } from 'zod';
import { AdminError } from '../http/errors.ts';

/** The admin API's parameters, each refused with what is wrong with it (400, the caller's code). */

/** Text PostgreSQL can compare: no NUL (text cannot hold it), bounded. */
export const text = (max: number) =>
  z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((value) => !value.includes('\u0000'), { error: 'must not contain NUL' });

export const providerName = text(MAX_EVENT_FIELD_LENGTH).regex(PROVIDER_NAME, {
  error: 'must be lower-case letters, digits and "-"',
});

/** An empty value is no filter, as when the parameter is left out. */
export const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

/** A consumer group's name in a query or a body. */
export const groupName = z
  .string()
  .refine(isGroupName, { message: `not a consumer group name (${GROUP_NAME_RULE})` });

/** `since`: a duration back from now (`24h`) or an instant (`parseSince`), as a Date. */
export const sinceText = z
  .string()
  .max(64, { error: 'must be at most 64 characters' })
  .transform((value, ctx) => {
    try {
      return parseSince(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });

/** A page's `limit` in a query: 1 to 500 rows. */
export const pageLimit = z
  .string()
  .regex(/^\d{1,3}$/, { error: 'must be a whole number from 1 to 500' })
  .transform(Number)
  .pipe(z.number().min(1, { error: 'must be from 1 to 500' }).max(500, { error: 'must be from 1 to 500' }));

/** The first problem zod found, as `field: what is wrong`. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/**
 * A JSON body read by `schema`: 400 `invalid_request` when it is not JSON (the message shows `example`, what to
 * send) or when `schema` refuses it (the first problem).
 */
export function jsonBody<T extends z.ZodType>(raw: string, schema: T, example: string): z.output<T> {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new AdminError('invalid_request', `the body is not JSON; send ${example}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new AdminError('invalid_request', `body: ${firstIssue(parsed.error)}`);
  return parsed.data;
}
