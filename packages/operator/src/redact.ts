/**
 * Masking of free text that leaves the process in an alert (an error message, an allowed payload field): emails,
 * secrets (`sk_live_`, `whsec_`, `shpat_`, `Bearer ...`), card numbers (13 to 19 digits passing the Luhn check)
 * and phone numbers. A name or an address inside free text is not recognisable and is not masked: which payload
 * fields an alert shows at all is decided by an allow-list (`alerts/excerpt.ts`), never by this.
 */

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
