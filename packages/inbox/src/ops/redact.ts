import { parseJsonLossless } from '../json.ts';

/**
 * Masking for what leaves the process in an alert: a payload excerpt, an error message. Two layers:
 * - by key: the value of any field whose name says personal or secret data (email, name, phone, address,
 *   line1, postal_code, ip, card number, cvc, token, secret, password, signature, ...) is replaced whole,
 *   objects included (`customer_address: "[redacted]"`);
 * - by shape, in every remaining string: emails, secrets (`sk_live_`, `whsec_`, `shpat_`, `Bearer ...`),
 *   card numbers (13 to 19 digits passing the Luhn check) and phone numbers.
 * A name inside free text is not recognisable and is not masked: keep excerpts short.
 */

// Matched against the key in snake_case (`firstName` -> `first_name`), one underscore-separated word or more.
const SENSITIVE_KEY =
  /(?:^|_)(?:e?mail|email_address|name|first_name|last_name|full_name|phone|phone_number|mobile|address|addresses|line1|line2|street|city|zip|postal_code|postcode|province|dob|birth_date|birthday|ssn|ip|ip_address|browser_ip|client_ip|secret|client_secret|password|passcode|token|api_key|authorization|cookie|signature|hmac|number|cvc|cvv|last4|exp_month|exp_year|iban|account_number|routing_number|tax_id|tax_ids|national_id)(?:_|$)/;

const REDACTED = '[redacted]';

// Anything shaped `local@domain`, liberal on purpose (RFC 5322 local parts allow !#$%&'*+/=?^`{|}~). The
// lookbehind lets a match start only where a run of such characters starts: without it, a long run with no `@`
// is rescanned from each of its positions (quadratic).
export const EMAIL = /(?<![^\s@"<>(),;:\\[\]])[^\s@"<>(),;:\\[\]]+@[^\s@"<>(),;:\\[\]]+/g;
const SECRET =
  /\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]+|\bwhsec_[A-Za-z0-9+/=]+|\bshp(?:ss|at|ca|pa|ua)_[A-Za-z0-9]+|\bBearer\s+[A-Za-z0-9._~+/=-]+/gi;
// A run of digits, grouped by spaces, dashes, dots or parentheses, not glued to a word or a path (`/Order/123`).
const DIGIT_RUN = /(?<![\w+/])\+?\(?\d(?:[ ().-]{0,2}\d){5,}(?![\w/])/g;

// Masking reads at most this much of a text: every pattern above is linear, and the cut bounds the rest.
const MAX_MASKED = 1000;
const MAX_KEY = 64;
const MAX_DEPTH = 6;
const MAX_ARRAY_ITEMS = 5;
const MAX_NODES = 400;
const MAX_STRING = 200;
const MAX_PARSE = 256 * 1024;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function isCardNumber(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && luhn(digits);
}

function maskDigitRun(run: string, wholeValue: boolean): string {
  const digits = run.replace(/\D/g, '');
  if (isCardNumber(digits)) return '[card]';
  // A phone number: 9 to 15 digits written like one (a leading +, separators), or a whole value of digits.
  const written = run.startsWith('+') || /[ ().-]/.test(run) || wholeValue;
  if (digits.length >= 9 && digits.length <= 15 && written && !/^\d{4}-\d{2}-\d{2}/.test(run))
    return '[phone]';
  return run;
}

/**
 * The first `max` characters without the word the cut went through: that word may be the first half of an email
 * or a card number, which no pattern would recognise.
 */
function cutAtSpace(text: string, max: number): string {
  let end = max;
  while (end > 0 && !/\s/.test(text.charAt(end))) end--;
  return text.slice(0, end);
}

/**
 * Masks emails, secrets, card-like and phone-like values inside free text. Reads at most the first 1000
 * characters (a longer text is cut, and ends with `…`), so its cost is bounded whatever it is given.
 */
export function maskString(text: string): string {
  const cut = text.length > MAX_MASKED ? `${cutAtSpace(text, MAX_MASKED)}…` : text;
  const masked = cut.replace(SECRET, '[secret]').replace(EMAIL, '[email]');
  const wholeLength = masked.trim().length;
  return masked.replace(DIGIT_RUN, (run) => maskDigitRun(run, run.length === wholeLength));
}

function snakeKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[-\s]+/g, '_')
    .toLowerCase();
}

/** True when a field of this name holds personal or secret data, whatever its value looks like. */
export function isSensitiveKey(key: string): boolean {
  return SENSITIVE_KEY.test(snakeKey(key));
}

interface Budget {
  nodes: number;
}

function redactValue(value: unknown, depth: number, budget: Budget): unknown {
  if (budget.nodes-- <= 0) return '…';
  if (value === null || typeof value === 'boolean') return value;
  // JSON numbers are amounts, timestamps and ids (card numbers and phones travel as strings): kept, unless their
  // key is sensitive, which the caller has already handled.
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    const cut = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
    return maskString(cut);
  }
  if (typeof value !== 'object') return `[${typeof value}]`;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) {
    const items: unknown[] = value
      .slice(0, MAX_ARRAY_ITEMS)
      .map((item) => redactValue(item, depth + 1, budget));
    if (value.length > MAX_ARRAY_ITEMS) items.push(`… ${value.length - MAX_ARRAY_ITEMS} more`);
    return items;
  }
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  // for...in rather than Object.entries: a huge object is walked only as far as the budget goes.
  for (const key in source) {
    if (!Object.hasOwn(source, key)) continue;
    if (budget.nodes <= 0) {
      out['…'] = '…';
      break;
    }
    const child = source[key];
    // Keys are as long as the sender likes: maskString cuts its input, and the key's name is judged by its start.
    out[maskString(key)] =
      isSensitiveKey(key.slice(0, MAX_KEY)) && child !== null
        ? REDACTED
        : redactValue(child, depth + 1, budget);
  }
  return out;
}

function truncate(text: string, maxLength: number): string {
  return text.length <= maxLength ? text : `${text.slice(0, Math.max(0, maxLength - 1))}…`;
}

/**
 * A short, masked, single-line rendering of a payload for an alert: JSON text or a parsed value in, at most
 * `maxLength` characters out. Masking happens before truncation, so a cut can never expose half a value.
 *
 * @example
 * redactExcerpt('{"id":"evt_1","customer_details":{"email":"ann@example.com"}}')
 * // '{"id":"evt_1","customer_details":{"email":"[redacted]"}}'
 */
export function redactExcerpt(payload: unknown, maxLength = 500): string {
  let value = payload;
  if (payload instanceof Uint8Array) value = new TextDecoder().decode(payload);
  if (typeof value === 'string') {
    const text = value;
    // Parsing a very large body just to show 500 characters of it is not worth the time: mask its start as text.
    if (text.length > MAX_PARSE) return truncate(maskString(text.slice(0, maxLength * 2)), maxLength);
    try {
      value = parseJsonLossless(text);
    } catch {
      return truncate(maskString(text.slice(0, maxLength * 2)), maxLength);
    }
  }
  if (value === undefined) return '';
  const redacted = redactValue(value, 0, { nodes: MAX_NODES });
  const text = JSON.stringify(redacted, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return truncate(text, maxLength);
}
