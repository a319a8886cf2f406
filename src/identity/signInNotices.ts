import { PERSON_TWO_FACTOR_MESSAGE } from '../errors.js';

/**
 * Why the browser was sent to the sign-in page: `?notice=` names one of these codes, and the page
 * shows its fixed sentence. The page never shows text from its URL: anyone can link to it, and the
 * service's own page must not carry someone else's words.
 */
export const SIGN_IN_NOTICES = {
  signed_out: 'Signed out.',
  session_ended: 'The session ended (signed out elsewhere, ended by an owner, or expired). Sign in again.',
  provider_unreachable: 'The identity provider cannot be reached. Try again later.',
  provider_unverified: 'The identity provider’s answer could not be verified. Start again.',
  provider_refused: 'The identity provider did not sign you in. Start again.',
  flow_expired: 'This sign-in began too long ago or in another browser. Start again.',
  email_unverified: 'The identity provider did not give a verified e-mail address.',
  not_a_member: 'The e-mail address the identity provider gave is not a member of any organization here. Ask an owner to add you.',
  several_organizations:
    'The e-mail address the identity provider gave is a member of several organizations: sign in with a sign-in link from the one you mean.',
  two_factor_required: PERSON_TWO_FACTOR_MESSAGE,
} as const;

/** A sign-in notice's code. */
export type SignInNotice = keyof typeof SIGN_IN_NOTICES;

/** The sentence of a `?notice=` code, or null for anything else (free text included). */
export function noticeText(code: unknown): string | null {
  return typeof code === 'string' && Object.hasOwn(SIGN_IN_NOTICES, code) ? SIGN_IN_NOTICES[code as SignInNotice] : null;
}
