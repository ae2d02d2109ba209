import { z } from 'zod';

/** Text PostgreSQL can compare: no NUL (text cannot hold it), bounded. */
export const text = (max: number) =>
  z
    .string()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((value) => !value.includes('\u0000'), { error: 'must not contain NUL' });

/** The first problem zod found, as `field: what is wrong`. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid';
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}
