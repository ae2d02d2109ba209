/**
 * What a catalogue provider does, as its documentation says, in the form the sources framework and
 * docs/providers.md use: one object per provider, next to the code that implements it.
 */
export interface ProviderFacts {
  /** How a request is authenticated, in one line. */
  scheme: string;
  /** Where the event key comes from, and what happens without it. */
  eventKey: string;
  /** Where the event type comes from. */
  eventType: string;
  /** The default tolerance of a signed timestamp in seconds, or `undefined` when no timestamp is signed. */
  toleranceSeconds: number | undefined;
  /** The provider's retry schedule, which bounds how long event keys must be kept. */
  retries: string;
  /** What differs from the common pattern and trips people up. */
  quirks: string;
  /** Options the source must set besides its secrets (e.g. `url`, the public URL the provider signs). */
  requiredOptions: readonly string[];
  /** The provider's webhook documentation. */
  docs: string;
}

/**
 * Where an event comes from, as its payload (or a kept header) says: the repository of a GitHub event, the
 * workspace of a Slack one, the merchant of a Square one. The console's event page shows them; alerts show those
 * that are not personal data.
 */
export interface EventFact {
  label: string;
  /** Paths into the payload (keys, array indices), tried in order; the first that holds a scalar is the fact. */
  paths?: ReadonlyArray<ReadonlyArray<string | number>>;
  /** A kept delivery header (lower-case), tried when no path matched. */
  header?: string;
  /** Personal data (a phone number, a user's handle): shown on the event page only, never in an alert. */
  personal?: true;
}

/** A form body is kept as `{ form, raw }` (template-body.ts): a field is read there or at the top level. */
const formField = (name: string): ReadonlyArray<ReadonlyArray<string>> => [['form', name], [name]];

/**
 * The facts of each provider that names where its events come from, by catalogue type (the source's default
 * name): a source named otherwise shows none. Ids and names of accounts, never message content.
 */
export const EVENT_FACTS: Readonly<Record<string, readonly EventFact[]>> = {
  stripe: [
    { label: 'Connected account', paths: [['account']] },
    { label: 'Live mode', paths: [['livemode']] },
  ],
  shopify: [{ label: 'Shop', header: 'x-shopify-shop-domain' }],
  github: [
    { label: 'Repository', paths: [['repository', 'full_name']] },
    { label: 'Organization', paths: [['organization', 'login']] },
    { label: 'App installation', paths: [['installation', 'id']] },
    { label: 'Hook target', header: 'x-github-hook-installation-target-type' },
    { label: 'Sender', paths: [['sender', 'login']], personal: true },
  ],
  gitlab: [
    { label: 'Project', paths: [['project', 'path_with_namespace']] },
    { label: 'Project id', paths: [['project', 'id'], ['project_id']] },
    { label: 'User', paths: [['user_username'], ['user', 'username']], personal: true },
  ],
  bitbucket: [
    { label: 'Repository', paths: [['repository', 'full_name']] },
    { label: 'Workspace', paths: [['repository', 'workspace', 'slug']] },
    { label: 'Actor', paths: [['actor', 'nickname']], personal: true },
  ],
  slack: [
    { label: 'Workspace', paths: [['team_id'], ['form', 'payload', 'team', 'id'], ['form', 'team_id']] },
    {
      label: 'Workspace domain',
      paths: [
        ['form', 'payload', 'team', 'domain'],
        ['form', 'team_domain'],
      ],
    },
    { label: 'Enterprise', paths: [['enterprise_id'], ['form', 'payload', 'enterprise', 'id']] },
    { label: 'App', paths: [['api_app_id'], ['form', 'payload', 'api_app_id'], ['form', 'api_app_id']] },
    {
      label: 'Channel',
      paths: [
        ['event', 'channel'],
        ['form', 'payload', 'channel', 'id'],
      ],
    },
    {
      label: 'User',
      paths: [
        ['event', 'user'],
        ['form', 'payload', 'user', 'id'],
      ],
      personal: true,
    },
  ],
  twilio: [
    { label: 'Account', paths: formField('AccountSid') },
    { label: 'To', paths: formField('To'), personal: true },
    { label: 'From', paths: formField('From'), personal: true },
  ],
  square: [{ label: 'Merchant', paths: [['merchant_id']] }],
  adyen: [
    {
      label: 'Merchant account',
      paths: [
        ['NotificationRequestItem', 'merchantAccountCode'],
        ['merchantAccountCode'],
        ['notificationItems', 0, 'NotificationRequestItem', 'merchantAccountCode'],
      ],
    },
  ],
  paypal: [
    { label: 'Merchant', paths: [['resource', 'payee', 'merchant_id']] },
    { label: 'Resource', paths: [['resource_type']] },
  ],
  paddle: [
    { label: 'Customer', paths: [['data', 'customer_id']] },
    { label: 'Subscription', paths: [['data', 'subscription_id']] },
  ],
  linear: [
    { label: 'Organization', paths: [['organizationId']] },
    {
      label: 'Team',
      paths: [
        ['data', 'teamId'],
        ['data', 'team', 'key'],
      ],
    },
  ],
  jira: [
    { label: 'Project', paths: [['issue', 'fields', 'project', 'key']] },
    { label: 'Issue', paths: [['issue', 'key']] },
  ],
  zoom: [{ label: 'Account', paths: [['payload', 'account_id']] }],
  meta: [
    { label: 'Object', paths: [['object']] },
    { label: 'Account', paths: [['entry', 0, 'id']] },
    {
      label: 'Business number id',
      paths: [['entry', 0, 'changes', 0, 'value', 'metadata', 'phone_number_id']],
    },
  ],
  discord: [
    { label: 'Application', paths: [['application_id']] },
    { label: 'Guild', paths: [['guild_id']] },
  ],
  'aws-sns': [{ label: 'Topic', paths: [['TopicArn']] }],
  vercel: [
    { label: 'Team', paths: [['payload', 'team', 'id']] },
    { label: 'Project', paths: [['payload', 'project', 'id']] },
  ],
  hubspot: [{ label: 'Portal', paths: [['portalId'], [0, 'portalId']] }],
  intercom: [{ label: 'Workspace', paths: [['app_id']] }],
  zendesk: [{ label: 'Account', paths: [['account_id']] }],
  typeform: [{ label: 'Form', paths: [['form_response', 'form_id']] }],
  woocommerce: [{ label: 'Store', header: 'x-wc-webhook-source' }],
  sentry: [{ label: 'Installation', paths: [['installation', 'uuid']] }],
};

function isRecord(value: unknown): value is Record<string | number, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The scalar at a path, as text, or undefined. */
function at(payload: unknown, path: ReadonlyArray<string | number>): string | undefined {
  let value = payload;
  for (const key of path) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return undefined;
}

/**
 * The facts of an event of a provider, in the table's order: those its payload or headers hold.
 *
 * @example
 * eventFactsOf('github', { repository: { full_name: 'acme/api' } }, {})
 * // [{ label: 'Repository', value: 'acme/api' }]
 */
export function eventFactsOf(
  provider: string,
  payload: unknown,
  headers: Readonly<Record<string, string>>,
  options: { personal?: boolean } = {},
): Array<{ label: string; value: string }> {
  const facts: Array<{ label: string; value: string }> = [];
  for (const fact of EVENT_FACTS[provider] ?? []) {
    if (fact.personal && options.personal === false) continue;
    let value: string | undefined;
    for (const path of fact.paths ?? []) {
      value = at(payload, path);
      if (value !== undefined) break;
    }
    if (value === undefined && fact.header) value = headers[fact.header];
    if (value !== undefined) facts.push({ label: fact.label, value });
  }
  return facts;
}
