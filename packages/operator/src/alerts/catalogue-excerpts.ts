import type { Fields } from './fields.ts';

// One Adyen notification item, as recorded alone or inside the batch it came in.
const ADYEN_ITEM: Fields = {
  eventCode: true,
  success: true,
  pspReference: true,
  originalReference: true,
  merchantAccountCode: true,
  eventDate: true,
  amount: { currency: true, value: true },
};

/**
 * The fields an alert's excerpt may show for the catalogue's providers, by catalogue type: the event's own ids,
 * type, action, status and time, and the account it belongs to (repository, workspace, merchant). Never people:
 * no phone numbers, emails, names or user handles (a GitHub sender, a Slack user, a Twilio `From` stay out),
 * and never content (message text, issue titles, form answers).
 */
export const CATALOGUE_EXCERPTS: Readonly<Record<string, Fields>> = {
  github: {
    action: true,
    repository: { full_name: true },
    organization: { login: true },
    installation: { id: true },
    ref: true,
    pull_request: { number: true, state: true, merged: true },
    issue: { number: true, state: true },
    check_run: { id: true, status: true, conclusion: true },
    workflow_run: { id: true, status: true, conclusion: true },
    hook_id: true,
  },
  gitlab: {
    object_kind: true,
    event_name: true,
    project: { id: true, path_with_namespace: true },
    object_attributes: { id: true, iid: true, state: true, action: true, status: true },
    ref: true,
  },
  bitbucket: {
    repository: { full_name: true, workspace: { slug: true } },
    pullrequest: { id: true, state: true },
  },
  slack: {
    type: true,
    event_id: true,
    event_time: true,
    team_id: true,
    enterprise_id: true,
    api_app_id: true,
    event: { type: true, subtype: true, channel: true, event_ts: true },
    form: {
      payload: { type: true, team: { id: true, domain: true }, channel: { id: true }, api_app_id: true },
    },
  },
  twilio: {
    form: {
      AccountSid: true,
      MessageSid: true,
      SmsSid: true,
      CallSid: true,
      MessageStatus: true,
      SmsStatus: true,
      CallStatus: true,
      ErrorCode: true,
    },
  },
  square: {
    event_id: true,
    type: true,
    created_at: true,
    merchant_id: true,
    data: { type: true, id: true },
  },
  adyen: {
    live: true,
    ...ADYEN_ITEM,
    NotificationRequestItem: ADYEN_ITEM,
    notificationItems: { NotificationRequestItem: ADYEN_ITEM },
  },
  paypal: {
    id: true,
    event_type: true,
    resource_type: true,
    create_time: true,
    resource: { id: true, status: true, payee: { merchant_id: true } },
  },
  paddle: {
    event_id: true,
    event_type: true,
    occurred_at: true,
    notification_id: true,
    data: { id: true, status: true, customer_id: true, subscription_id: true, currency_code: true },
  },
  linear: {
    action: true,
    type: true,
    createdAt: true,
    organizationId: true,
    data: { id: true, teamId: true },
  },
  jira: {
    webhookEvent: true,
    timestamp: true,
    issue: { id: true, key: true, fields: { project: { key: true } } },
  },
  zoom: { event: true, event_ts: true, payload: { account_id: true, object: { id: true, uuid: true } } },
  meta: { object: true, entry: { id: true, time: true, changes: { field: true } } },
  discord: { type: true, id: true, application_id: true, guild_id: true },
  'aws-sns': { Type: true, MessageId: true, TopicArn: true, Timestamp: true },
  hubspot: {
    eventId: true,
    subscriptionType: true,
    portalId: true,
    appId: true,
    objectId: true,
    occurredAt: true,
  },
  intercom: {
    type: true,
    id: true,
    topic: true,
    app_id: true,
    created_at: true,
    data: { item: { type: true, id: true } },
  },
  zendesk: { type: true, id: true, time: true, account_id: true, detail: { id: true } },
  typeform: { event_id: true, event_type: true, form_response: { form_id: true, submitted_at: true } },
  woocommerce: { id: true, status: true, currency: true, total: true, date_created: true },
  sentry: { action: true, installation: { uuid: true }, data: { issue: { id: true, status: true } } },
  vercel: {
    id: true,
    type: true,
    createdAt: true,
    payload: { team: { id: true }, project: { id: true }, deployment: { id: true } },
  },
};
