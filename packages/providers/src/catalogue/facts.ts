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
  /** JSON pointers into the payload (../pointer.ts), tried in order; the first that holds a scalar is the fact. */
  paths?: readonly string[];
  /** A kept delivery header (lower-case), tried when no path matched. */
  header?: string;
  /** Personal data (a phone number, a user's handle): shown on the event page only, never in an alert. */
  personal?: true;
}

/**
 * What a provider says about its payloads, each path a JSON pointer (RFC 6901, ../pointer.ts): `/repository/id`,
 * a digit token for one element of an array (`/entry/0/id`), and `*` for each element (`/data/to/*`). A catalogue
 * provider declares them in its definition, Stripe and Shopify beside their code; ../provider-paths.ts parses
 * them once and keys them by provider type.
 */
export interface PayloadPaths {
  /** Where its events come from (account ids and names, never message content), in the order shown. */
  eventFacts?: readonly EventFact[];
  /** The values an operator searches its events by (../subject.ts): customers, emails, repositories. */
  subject?: readonly string[];
  /** Kept delivery headers (lower-case) whose values are subject values too (Shopify's shop domain). */
  subjectHeaders?: readonly string[];
  /**
   * What the provider compares without case. `subject`: those of `subject` and `subjectHeaders` that hold emails,
   * logins, repository names or domains, stored lower-cased so a search finds them however they are typed (every
   * other value keeps its case: a Stripe `cus_I4TagvBaGok0Tj` lower-cased would find nothing at Stripe).
   * `eventId`: its event keys are (UUIDs), so the console's and the CLI's event-id search ignores case for them.
   */
  caseless?: { subject?: readonly string[]; eventId?: true };
  /**
   * The fields an alert's excerpt may show, in the order shown: the event's own ids, type, action, status and
   * time, and the account it belongs to. Never people (phone numbers, emails, names, user handles) and never
   * content (message text, issue titles, form answers). An excerpt keeps the payload's shape: an array on a
   * field's way shows its first items, each read by the rest of the pointer.
   */
  excerpt?: readonly string[];
}
