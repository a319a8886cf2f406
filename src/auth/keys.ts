import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'svc_pat_';
const BODY_BYTES = 32; // 43 base64url characters
const BODY_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{${BODY_LENGTH}}[A-Za-z0-9_-]{${CHECKSUM_LENGTH}}$`);

/** A new agent-key secret: prefix + 32 random bytes (base64url) + a 6-character checksum. */
export function generateKeySecret(): string {
  const body = randomBytes(BODY_BYTES).toString('base64url');
  return `${KEY_PREFIX}${body}${checksum(body)}`;
}

/** True when the string has the key shape and its checksum matches (no database needed). */
export function isWellFormedKey(secret: string): boolean {
  if (!KEY_PATTERN.test(secret)) return false;
  const body = secret.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  const sum = secret.slice(KEY_PREFIX.length + BODY_LENGTH);
  return safeEqual(sum, checksum(body));
}

/** A new bearer secret (session cookie, sign-in link, OAuth code or token): prefix + 32 random bytes, base64url. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** The stored form of a secret: HMAC-SHA256 under the server secret, hex. */
export function digestSecret(serverSecret: string, secret: string): string {
  return createHmac('sha256', serverSecret).update(secret).digest('hex');
}

/** Constant-time string comparison. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function checksum(body: string): string {
  // Catches typos and truncation before any database lookup; not a security boundary.
  return createHmac('sha256', 'svc_pat checksum').update(body).digest('base64url').slice(0, CHECKSUM_LENGTH);
}
