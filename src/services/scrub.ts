/**
 * Removes what callers must not send in a content-gap question (they are asked to send it without
 * names, e-mail addresses or secrets, and some will anyway): e-mail addresses,
 * secrets (keys with known prefixes, long high-entropy tokens) and phone numbers, each replaced
 * by a placeholder.
 */
export interface Scrubbed {
  text: string;
  redacted: string[];
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
// Known credential shapes: our agent keys, common cloud/API tokens, JWTs, bearer values.
const KNOWN_SECRETS = [
  /svc_pat_[A-Za-z0-9_-]{8,}/g,
  /adm_[A-Za-z0-9_-]{16,}/g,
  /whsec_[A-Za-z0-9+/=_-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{16,}/g,
  /\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{16,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  /\b(?:Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{12,}/gi,
];
const TOKEN = /[A-Za-z0-9_+/=-]{24,}/g;
const PHONE = /(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]?\d{2,4}){2,4}/g;

/** Shannon entropy in bits per character. */
function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/** A long run of mixed letters and digits with high entropy looks like a secret, not a word. */
function looksRandom(token: string): boolean {
  return /[0-9]/.test(token) && /[A-Za-z]/.test(token) && entropy(token) >= 3.5;
}

export function scrub(input: string): Scrubbed {
  const redacted = new Set<string>();
  let text = input;
  for (const pattern of KNOWN_SECRETS) {
    text = text.replace(pattern, () => {
      redacted.add('secret');
      return '[secret]';
    });
  }
  text = text.replace(EMAIL, () => {
    redacted.add('email');
    return '[email]';
  });
  text = text.replace(TOKEN, (token) => {
    if (!looksRandom(token)) return token;
    redacted.add('secret');
    return '[secret]';
  });
  text = text.replace(PHONE, (match) => {
    const digits = match.replace(/\D/g, '');
    if (digits.length < 7 || digits.length > 15) return match;
    redacted.add('phone');
    return '[phone]';
  });
  return { text, redacted: [...redacted] };
}

/** The first `max` characters (code points: a surrogate pair is never split). */
export function firstChars(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : chars.slice(0, max).join('');
}
