import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { parsePayload } from '../../src/effects/parse-payload.ts';
import { PermanentEffectError, type GenericInboxEvent } from '../../src/effects/types.ts';
import { createInbox } from '../../src/inbox.ts';
import type { GitHubEventType, GitHubInboxEvent } from '@webhook-inbox/providers/github';
import type { PaddleInboxEvent } from '@webhook-inbox/providers/paddle';
import type { SlackInboxEvent } from '@webhook-inbox/providers/slack';
import type { SquareEventType, SquareInboxEvent } from '@webhook-inbox/providers/square';

// As in api.test.ts, the `expectTypeOf` calls and `@ts-expect-error` lines are the compiler's assertions
// (`pnpm typecheck` checks this file); the `expect` calls check what ran.
describe('typed provider payloads', () => {
  it('types GitHub payloads from @octokit/openapi-webhooks-types and checks the type names', () => {
    const inbox = createInbox()
      .on('github', 'pull_request.opened', {
        label: ({ event }) => {
          expectTypeOf(event.type).toEqualTypeOf<'pull_request.opened'>();
          expectTypeOf(event.payload.action).toEqualTypeOf<'opened'>();
          expectTypeOf(event.payload.pull_request.number).toBeNumber();
          expectTypeOf(event.payload.repository.full_name).toBeString();
          // @ts-expect-error a field the payload does not have
          expectTypeOf(event.payload.pull_request.no_such_field).toBeUnknown();
        },
      })
      .on('github', ['push', 'issues.opened'], {
        route: ({ event }) => {
          if (event.type === 'push') expectTypeOf(event.payload.ref).toBeString();
          else expectTypeOf(event.payload.issue.number).toBeNumber();
        },
      });
    // @ts-expect-error a misspelt type
    createInbox().on('github', 'pull_request.opend', { typo: () => undefined });
    // @ts-expect-error an event with actions is registered per action
    createInbox().on('github', 'pull_request', { bare: () => undefined });
    expectTypeOf<
      'ping' | 'pull_request_review.submitted' | 'workflow_run.completed'
    >().toExtend<GitHubEventType>();
    expectTypeOf<GitHubInboxEvent<'ping'>['payload']['zen']>().toEqualTypeOf<string | undefined>();
    expect(inbox.routes()).toEqual(['github pull_request.opened', 'github push', 'github issues.opened']);
  });

  it('types Slack Events API envelopes by the inner event type, interactivity as unknown', () => {
    createInbox()
      .on('slack', 'app_mention', {
        reply: ({ event }) => {
          expectTypeOf(event.payload.type).toEqualTypeOf<'event_callback'>();
          expectTypeOf(event.payload.team_id).toBeString();
          expectTypeOf(event.payload.event.type).toEqualTypeOf<'app_mention'>();
          expectTypeOf(event.payload.event.text).toBeString();
        },
      })
      .on('slack', 'block_actions', {
        act: ({ event }) => {
          expectTypeOf(event.payload).toBeUnknown();
        },
      })
      // @ts-expect-error not a Slack event type
      .on('slack', 'app_mentioned', { typo: () => undefined });
    expectTypeOf<SlackInboxEvent<'reaction_added'>['payload']['event']['reaction']>().toBeString();
  });

  it('types Paddle notifications (the snake_case wire shape)', () => {
    createInbox().on('paddle', 'transaction.completed', {
      fulfil: ({ event }) => {
        // The SDK types event_type as its EventName enum member, whose value is the type.
        expectTypeOf<`${typeof event.payload.event_type}`>().toEqualTypeOf<'transaction.completed'>();
        expectTypeOf(event.payload.data.customer_id).toEqualTypeOf<string | null | undefined>();
        expectTypeOf(event.payload.occurred_at).toBeString();
      },
    });
    expectTypeOf<PaddleInboxEvent<'subscription.created'>['payload']['data']['status']>().not.toBeAny();
  });

  it('types Square notifications (the snake_case wire shape) and checks the type names', () => {
    createInbox()
      .on('square', 'payment.updated', {
        settle: ({ event }) => {
          expectTypeOf(event.payload.type).toEqualTypeOf<'payment.updated'>();
          expectTypeOf(event.payload.event_id).toBeString();
          expectTypeOf(event.payload.data?.object?.payment?.id).toEqualTypeOf<string | null | undefined>();
          // @ts-expect-error the SDK's camelCase shape is not what Square sends
          expectTypeOf(event.payload.merchantId).toBeUnknown();
        },
      })
      .on('square', ['invoice.payment_made', 'dispute.created'], {
        route: ({ event }) => {
          if (event.type === 'invoice.payment_made')
            expectTypeOf(event.payload.data?.object?.invoice?.id).toEqualTypeOf<string | null | undefined>();
          else expectTypeOf(event.payload.type).toEqualTypeOf<'dispute.created'>();
        },
      });
    // @ts-expect-error a misspelt type
    createInbox().on('square', 'payment.update', { typo: () => undefined });
    expectTypeOf<'booking.custom_attribute.owned.deleted' | 'vendor.updated'>().toExtend<SquareEventType>();
    expectTypeOf<SquareInboxEvent<'refund.created'>['payload']['data']>().not.toBeAny();
  });

  it('keeps other providers unknown, for any type name', () => {
    createInbox().on('linear', 'Issue.create', {
      triage: ({ event }) => {
        expectTypeOf(event).toEqualTypeOf<GenericInboxEvent>();
        expectTypeOf(event.payload).toBeUnknown();
      },
    });
  });
});

describe('parsePayload', () => {
  const Issue = z.object({ action: z.string(), data: z.object({ id: z.string(), number: z.number() }) });
  const event = (payload: unknown) => ({ provider: 'linear', type: 'Issue.create', payload });

  it('returns the schema’s output, typed', () => {
    const issue = parsePayload(Issue, event({ action: 'create', data: { id: 'i1', number: 7, extra: 'x' } }));
    expectTypeOf(issue).toEqualTypeOf<z.output<typeof Issue>>();
    expect(issue).toEqual({ action: 'create', data: { id: 'i1', number: 7 } });
  });

  it('throws PermanentEffectError naming the fields, never their values', () => {
    const parse = () =>
      parsePayload(Issue, event({ action: 'create', data: { id: 'secret-value', number: '7' } }));
    expect(parse).toThrow(PermanentEffectError);
    expect(parse).toThrow(/^the linear Issue\.create payload does not match: data\.number: /);
    expect(parse).not.toThrow(/secret-value|'7'/);
    expect(() => parsePayload(Issue, event('not an object'))).toThrow(/: \(payload\): /);
  });

  it('refuses an asynchronous schema with a TypeError', () => {
    const asynchronous = z.string().refine(async () => Promise.resolve(true));
    expect(() => parsePayload(asynchronous, event('x'))).toThrow(TypeError);
  });
});
