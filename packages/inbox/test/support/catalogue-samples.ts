/**
 * Catalogue providers' payloads in the shapes their documentation shows, each with personal data and content
 * (`PERSONAL_VALUES`) that the event page may show but an alert never may. Not a test file.
 */

/** Values that must never reach an alert: people's numbers, emails, handles, names and what they wrote. */
export const PERSONAL_VALUES = [
  'octocat',
  'Fix the parser for the new format',
  'U061F7AUR',
  'is it everything a river should be?',
  'UA8RXUSPL',
  'jtorrance',
  '+14155550100',
  '+14155550199',
  'Hello from the beach',
  'buyer@example.com',
  'merchant@example.com',
  'shopper@example.com',
  'J Smith',
  'admin@example.com',
  'Administrator',
  'jane.doe',
  'Jane Doe',
  '1 Main St',
];

export const SAMPLES = {
  github: {
    action: 'opened',
    number: 42,
    pull_request: {
      number: 42,
      state: 'open',
      title: 'Fix the parser for the new format',
      user: { login: 'octocat' },
      merged: false,
    },
    repository: { id: 1296269, full_name: 'acme/api', owner: { login: 'acme' } },
    organization: { login: 'acme' },
    installation: { id: 8675309 },
    sender: { login: 'octocat' },
  },
  gitlab: {
    object_kind: 'merge_request',
    event_type: 'merge_request',
    user: { id: 1, name: 'Administrator', username: 'root', email: 'admin@example.com' },
    project: { id: 1, path_with_namespace: 'gitlabhq/gitlab-test' },
    object_attributes: { id: 99, iid: 1, title: 'MS-Viewport', state: 'opened', action: 'open' },
  },
  bitbucket: {
    actor: { display_name: 'Jane Doe', nickname: 'jane.doe' },
    repository: { full_name: 'team/repo', workspace: { slug: 'team' } },
    pullrequest: { id: 7, state: 'OPEN', title: 'Fix the parser for the new format' },
  },
  slack: {
    token: 'XXYYZZ',
    team_id: 'T061EG9R6',
    api_app_id: 'A0PNCHHK2',
    event: {
      type: 'app_mention',
      user: 'U061F7AUR',
      text: '<@U0LAN0Z89> is it everything a river should be?',
      ts: '1515449522.000016',
      channel: 'C123ABC456',
      event_ts: '1515449522.000016',
    },
    type: 'event_callback',
    event_id: 'Ev0LAN670R',
    event_time: 1515449522,
  },
  slackInteraction: {
    form: {
      payload: {
        type: 'block_actions',
        team: { id: 'T9TK3CUKW', domain: 'example' },
        user: { id: 'UA8RXUSPL', username: 'jtorrance', name: 'jtorrance' },
        api_app_id: 'AABA1ABCD',
        channel: { id: 'CBR2V3XEX', name: 'review-updates' },
      },
    },
    raw: 'payload=%7B%7D',
  },
  twilio: {
    form: {
      AccountSid: 'AC0123456789abcdef0123456789abcdef',
      MessageSid: 'SM0123456789abcdef0123456789abcdef',
      From: '+14155550100',
      To: '+14155550199',
      Body: 'Hello from the beach',
      SmsStatus: 'received',
    },
    raw: 'Body=Hello+from+the+beach',
  },
  square: {
    merchant_id: '6SSW7HV8K2ST5',
    type: 'payment.created',
    event_id: '13b867cf-db3d-4b1c-90b6-2f32a9d78124',
    created_at: '2020-02-06T21:27:30.792Z',
    data: {
      type: 'payment',
      id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
      object: {
        payment: {
          id: 'KkAkhdMsgzn59SM8A89WgKwekxLZY',
          location_id: 'S8GWD5R9QB376',
          buyer_email_address: 'buyer@example.com',
          amount_money: { amount: 100, currency: 'USD' },
        },
      },
    },
  },
  adyen: {
    live: 'false',
    notificationItems: [
      {
        NotificationRequestItem: {
          merchantAccountCode: 'AcmeECOM',
          eventCode: 'AUTHORISATION',
          success: 'true',
          pspReference: 'QFQTPCQ8HXSKGK82',
          merchantReference: 'order-1',
          amount: { currency: 'EUR', value: 1000 },
          additionalData: { shopperEmail: 'shopper@example.com', cardHolderName: 'J Smith' },
        },
      },
    ],
  },
  paypal: {
    id: 'WH-2WR32451HC0233532-67976317FL4543714',
    event_type: 'PAYMENT.CAPTURE.COMPLETED',
    resource_type: 'capture',
    create_time: '2024-01-01T10:00:00Z',
    summary: 'Payment completed for $ 10.0 USD',
    resource: {
      id: '2GG279541U471931P',
      status: 'COMPLETED',
      payee: { email_address: 'merchant@example.com', merchant_id: '7KNGBPH2U58GQ' },
      amount: { value: '10.00', currency_code: 'USD' },
    },
  },
  paddle: {
    event_id: 'evt_01h8bxqh8d7xkpgs1a2b3c4d5e',
    event_type: 'transaction.completed',
    occurred_at: '2024-01-01T10:00:00.000Z',
    notification_id: 'ntf_01h8bxqh8d7xkpgs1a2b3c4d5f',
    data: {
      id: 'txn_01h8bxqh8d7xkpgs1a2b3c4d60',
      status: 'completed',
      customer_id: 'ctm_01h8bxqh8d7xkpgs1a2b3c4d61',
      subscription_id: 'sub_01h8bxqh8d7xkpgs1a2b3c4d62',
      currency_code: 'USD',
      billing_details: { address: '1 Main St' },
    },
  },
};
