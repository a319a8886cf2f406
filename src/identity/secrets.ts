import { createHash } from 'node:crypto';
import { safeEqual } from '../auth/keys.js';

/** Prefixes that tell OAuth secrets apart from agent keys (`svc_pat_`) and from each other. */
export const ACCESS_PREFIX = 'wks_at_';
export const REFRESH_PREFIX = 'wks_rt_';
export const CODE_PREFIX = 'wks_ac_';
export const CLIENT_PREFIX = 'wks_client_';

/** RFC 7636: a code verifier is 43–128 characters of [A-Za-z0-9-._~]. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** An S256 challenge is the base64url SHA-256 of a verifier: 43 characters. */
export const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** Whether the verifier matches the S256 challenge (PKCE). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!VERIFIER.test(verifier)) return false;
  return safeEqual(createHash('sha256').update(verifier).digest('base64url'), challenge);
}
