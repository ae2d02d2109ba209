import { createPublicKey, type KeyObject } from 'node:crypto';

// Every public key a source verifies with is judged here, once, when it is configured: a key of the wrong type or
// curve, a short RSA modulus, or an Ed25519 point of small order is refused at start-up, naming the source. An
// Ed25519 key of small order (the all-zero key, the identity `01 00..00`, ...) lets anyone sign: with R the
// identity and S = 0, the check [S]B = R + [k]A holds whenever [k]A is the identity, for 1 message in 1, 2, 4 or 8.

/** What a provider verifies with: Ed25519, ECDSA on one named curve, or RSA of at least `minBits`. */
export type KeyRequirement =
  | { type: 'ed25519' }
  | { type: 'ec'; curve: 'prime256v1' | 'secp384r1' | 'secp521r1' }
  | { type: 'rsa'; minBits: number };

/** A configured public key that must not be used: it would let others sign, or is not what the provider uses. */
export class WeakKeyError extends TypeError {
  readonly code = 'weak_key';
  constructor(message: string) {
    super(message);
    this.name = 'WeakKeyError';
  }
}

/** Why `key` does not meet `wanted`, or undefined when it does. */
export function keyWeakness(key: KeyObject, wanted: KeyRequirement): string | undefined {
  const type = key.asymmetricKeyType;
  if (type !== wanted.type)
    return `is ${type === undefined ? 'not a public key' : `an ${type} key`}, not ${label(wanted)}`;
  if (wanted.type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    return curve === wanted.curve ? undefined : `is on ${curve ?? 'an unnamed curve'}, not ${wanted.curve}`;
  }
  if (wanted.type === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    return bits >= wanted.minBits ? undefined : `is RSA of ${bits} bits, under ${wanted.minBits}`;
  }
  const { x } = key.export({ format: 'jwk' });
  return ed25519Weakness(Buffer.from(x ?? '', 'base64url'));
}

/** `key`, or a `WeakKeyError` naming `where` (e.g. `sendgrid: secret #1`) and what is wrong with it. */
export function requireStrongKey(where: string, key: KeyObject, wanted: KeyRequirement): KeyObject {
  const weakness = keyWeakness(key, wanted);
  if (weakness !== undefined) throw new WeakKeyError(`${where} ${weakness}`);
  return key;
}

// A raw 32-byte Ed25519 public key becomes a KeyObject through its SPKI DER form: this fixed prefix, then the key.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/**
 * The Ed25519 public key of 64 hex digits (as Discord's developer portal shows it), judged: `where` names it in
 * the error (`discord: secret #1`).
 */
export function ed25519PublicKey(where: string, hex: string): KeyObject {
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw new TypeError(`${where} is not an Ed25519 public key (64 hex digits)`);
  const key = createPublicKey({
    key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]),
    format: 'der',
    type: 'spki',
  });
  return requireStrongKey(where, key, { type: 'ed25519' });
}

function label(wanted: KeyRequirement): string {
  if (wanted.type === 'ec') return `an ECDSA ${wanted.curve} key`;
  if (wanted.type === 'rsa') return `an RSA key of at least ${wanted.minBits} bits`;
  return 'an Ed25519 key';
}

// Edwards25519 arithmetic over BigInt (RFC 8032, section 5.1), enough to decode a point and multiply it by the
// cofactor 8: a point is of small order exactly when [8]P is the identity.
const P = 2n ** 255n - 19n;
const D = mod(-121665n * inverse(121666n));
const SQRT_M1 = power(2n, (P - 1n) / 4n);

function mod(a: bigint): bigint {
  const r = a % P;
  return r < 0n ? r + P : r;
}
function power(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}
function inverse(a: bigint): bigint {
  return power(a, P - 2n);
}

/** Why the 32-byte encoding is not a usable Ed25519 public key: not canonical, not on the curve, small order. */
export function ed25519Weakness(bytes: Uint8Array): string | undefined {
  if (bytes.length !== 32) return 'is not 32 bytes';
  const sign = bytes[31]! >> 7;
  const y = BigInt(`0x${Buffer.from(bytes).reverse().toString('hex')}`) & ((1n << 255n) - 1n);
  if (y >= P) return 'is not a canonical encoding (y is not below 2^255 - 19)';
  // x^2 = (y^2 - 1) / (d y^2 + 1), its root by RFC 8032's recipe.
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * power(v, 3n) * power(u * power(v, 7n), (P - 5n) / 8n));
  if (mod(v * x * x) !== u) x = mod(x * SQRT_M1);
  if (mod(v * x * x) !== u) return 'is not a point of the curve';
  if (x === 0n && sign === 1) return 'is not a canonical encoding (x = 0 with its sign bit set)';
  let point: Point = [x, y];
  for (let i = 0; i < 3; i += 1) point = add(point, point);
  return point[0] === 0n && point[1] === 1n
    ? 'is a point of small order: anyone could sign for it (RFC 8032 keys are never of small order)'
    : undefined;
}

type Point = [bigint, bigint];

/** The sum of two points of the twisted Edwards curve -x^2 + y^2 = 1 + d x^2 y^2 (complete formulas). */
function add([x1, y1]: Point, [x2, y2]: Point): Point {
  const t = mod(D * x1 * x2 * y1 * y2);
  return [mod((x1 * y2 + y1 * x2) * inverse(1n + t)), mod((y1 * y2 + x1 * x2) * inverse(1n - t + P))];
}
