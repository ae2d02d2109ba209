import { describe, expect, it } from 'vitest';
import { alertExcerpt } from '@webhook-inbox/operator/alerts';
import { EVENT_FACTS, eventFactsOf } from '@webhook-inbox/providers/event-facts';
import { EXCERPT_POINTERS } from '@webhook-inbox/providers/paths';
import { PERSONAL_VALUES, SAMPLES } from '../support/catalogue-samples.ts';

describe('eventFactsOf', () => {
  it.each([
    [
      'github',
      SAMPLES.github,
      { 'x-github-hook-installation-target-type': 'repository' },
      [
        ['Repository', 'acme/api'],
        ['Organization', 'acme'],
        ['App installation', '8675309'],
        ['Hook target', 'repository'],
        ['Sender', 'octocat'],
      ],
    ],
    [
      'gitlab',
      SAMPLES.gitlab,
      {},
      [
        ['Project', 'gitlabhq/gitlab-test'],
        ['Project id', '1'],
        ['User', 'root'],
      ],
    ],
    [
      'bitbucket',
      SAMPLES.bitbucket,
      {},
      [
        ['Repository', 'team/repo'],
        ['Workspace', 'team'],
        ['Actor', 'jane.doe'],
      ],
    ],
    [
      'slack',
      SAMPLES.slack,
      {},
      [
        ['Workspace', 'T061EG9R6'],
        ['App', 'A0PNCHHK2'],
        ['Channel', 'C123ABC456'],
        ['User', 'U061F7AUR'],
      ],
    ],
    [
      'slack',
      SAMPLES.slackInteraction,
      {},
      [
        ['Workspace', 'T9TK3CUKW'],
        ['Workspace domain', 'example'],
        ['App', 'AABA1ABCD'],
        ['Channel', 'CBR2V3XEX'],
        ['User', 'UA8RXUSPL'],
      ],
    ],
    [
      'twilio',
      SAMPLES.twilio,
      {},
      [
        ['Account', 'AC0123456789abcdef0123456789abcdef'],
        ['To', '+14155550199'],
        ['From', '+14155550100'],
      ],
    ],
    ['square', SAMPLES.square, {}, [['Merchant', '6SSW7HV8K2ST5']]],
    ['adyen', SAMPLES.adyen, {}, [['Merchant account', 'AcmeECOM']]],
    ['adyen', SAMPLES.adyen.notificationItems[0], {}, [['Merchant account', 'AcmeECOM']]],
    [
      'paypal',
      SAMPLES.paypal,
      {},
      [
        ['Merchant', '7KNGBPH2U58GQ'],
        ['Resource', 'capture'],
      ],
    ],
    ['shopify', {}, { 'x-shopify-shop-domain': 'shop.example' }, [['Shop', 'shop.example']]],
  ])('%s: where the event comes from', (provider, payload, headers, expected) => {
    expect(eventFactsOf(provider, payload, headers)).toEqual(
      expected.map(([label, value]) => ({ label, value })),
    );
  });

  it('shows nothing for a provider without facts, a payload that is not an object, or a fact that is absent', () => {
    expect(eventFactsOf('acme-standard-webhooks', SAMPLES.github, {})).toEqual([]);
    expect(eventFactsOf('github', null, {})).toEqual([]);
    expect(eventFactsOf('github', 'acme/api', {})).toEqual([]);
    expect(eventFactsOf('github', { repository: { full_name: '' }, sender: { login: {} } }, {})).toEqual([]);
  });

  it('leaves personal facts out when asked', () => {
    expect(eventFactsOf('twilio', SAMPLES.twilio, {}, { personal: false })).toEqual([
      { label: 'Account', value: 'AC0123456789abcdef0123456789abcdef' },
    ]);
  });
});

describe('alertExcerpt of catalogue providers', () => {
  const cases: Array<[string, string, unknown]> = [
    ['github', 'pull_request.opened', SAMPLES.github],
    ['gitlab', 'merge_request.open', SAMPLES.gitlab],
    ['bitbucket', 'pullrequest:created', SAMPLES.bitbucket],
    ['slack', 'app_mention', SAMPLES.slack],
    ['slack', 'block_actions', SAMPLES.slackInteraction],
    ['twilio', 'sms', SAMPLES.twilio],
    ['square', 'payment.created', SAMPLES.square],
    ['adyen', 'AUTHORISATION', SAMPLES.adyen],
    ['paypal', 'PAYMENT.CAPTURE.COMPLETED', SAMPLES.paypal],
    ['paddle', 'transaction.completed', SAMPLES.paddle],
  ];

  it.each(cases)(
    '%s %s: the account and the event, never a person or what they wrote',
    (provider, type, payload) => {
      const excerpt = alertExcerpt({ provider, type, payload }, 4000);
      expect(excerpt).toBeDefined();
      for (const value of PERSONAL_VALUES) expect(excerpt, value).not.toContain(value);
      // Every fact that is not personal data is in the excerpt: an operator can tell which account it is about.
      for (const fact of eventFactsOf(provider, payload, {}, { personal: false })) {
        expect(excerpt, fact.label).toContain(JSON.stringify(fact.value).slice(1, -1));
      }
    },
  );

  it('shows what tells the event apart: GitHub, Square, Twilio', () => {
    expect(
      JSON.parse(
        alertExcerpt({ provider: 'github', type: 'pull_request.opened', payload: SAMPLES.github }) ?? '',
      ),
    ).toEqual({
      action: 'opened',
      repository: { full_name: 'acme/api' },
      organization: { login: 'acme' },
      installation: { id: 8675309 },
      pull_request: { number: 42, state: 'open', merged: false },
    });
    expect(
      JSON.parse(
        alertExcerpt({ provider: 'square', type: 'payment.created', payload: SAMPLES.square }) ?? '',
      ),
    ).toEqual({
      event_id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
      type: 'payment.created',
      created_at: '2020-02-06T21:27:30.792Z',
      merchant_id: '6SSW7HV8K2ST5',
      data: { type: 'payment', id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY' },
    });
    expect(
      JSON.parse(alertExcerpt({ provider: 'twilio', type: 'sms', payload: SAMPLES.twilio }) ?? ''),
    ).toEqual({
      form: {
        AccountSid: 'AC0123456789abcdef0123456789abcdef',
        MessageSid: 'SM0123456789abcdef0123456789abcdef',
        SmsStatus: 'received',
      },
    });
  });

  it('lists excerpt fields for every provider the event page has facts for', () => {
    const own = ['stripe', 'shopify'];
    const providers = Object.keys(EVENT_FACTS).filter((provider) => !own.includes(provider));
    expect(providers.filter((provider) => !(provider in EXCERPT_POINTERS))).toEqual([]);
  });
});
