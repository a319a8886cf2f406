// Signs a member in the way a person does with a sign-in link: the admin token mints the link over
// GraphQL, then the link's token (from its fragment) is redeemed on the sign-in endpoint, as the
// sign-in page's script does. The answer's session cookie and CSRF token are what a browser holds.

/** A signed-in person: the `Cookie` header value to send, and the session's CSRF token. */
export interface SignedInPerson {
  cookie: string;
  csrf: string;
}

/** Mints a sign-in link (with `adminToken`, or with `mintedBy`'s session when given) for `email` and redeems it. */
export async function mintSignInLink(
  baseUrl: string,
  adminToken: string,
  email: string,
  options: { organizationId?: string; mintedBy?: SignedInPerson } = {},
): Promise<{ url: string; token: string }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.mintedBy) Object.assign(headers, { cookie: options.mintedBy.cookie, 'x-csrf-token': options.mintedBy.csrf });
  else headers.authorization = `Bearer ${adminToken}`;
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      query: 'mutation($email: String!, $org: ID) { createSignInLink(email: $email, organizationId: $org) { url expiresAt } }',
      variables: { email, org: options.organizationId ?? null },
    }),
  });
  const body = (await res.json()) as { data?: { createSignInLink: { url: string } }; errors?: unknown[] };
  if (body.errors?.length || !body.data) throw new Error(`createSignInLink failed: ${JSON.stringify(body.errors)}`);
  const url = body.data.createSignInLink.url;
  const token = /#link=([\w-]+)$/.exec(url)?.[1];
  if (!token) throw new Error(`a sign-in link without a token in its fragment: ${url}`);
  return { url, token };
}

/** Redeems a sign-in link's token like the sign-in page does; throws with the answer on refusal. */
export async function redeemSignInLink(
  baseUrl: string,
  token: string,
  returnTo = '/console',
): Promise<SignedInPerson & { returnTo: string }> {
  const res = await fetch(`${baseUrl}/console/sign-in/link`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: baseUrl },
    body: JSON.stringify({ token, returnTo }),
  });
  const body = (await res.json()) as { csrf?: string; returnTo?: string; error?: { code: string; message: string } };
  if (res.status !== 200 || !body.csrf)
    throw Object.assign(new Error(`sign-in refused: ${res.status} ${JSON.stringify(body)}`), { status: res.status, body });
  const setCookie = res.headers.getSetCookie().find((c) => /^(__Host-)?wks_session=/.test(c));
  if (!setCookie) throw new Error('the sign-in answer set no session cookie');
  return { cookie: setCookie.split(';')[0], csrf: body.csrf, returnTo: body.returnTo! };
}

/** Signs `email` in through a sign-in link minted with the admin token: the session's cookie and CSRF token. */
export async function signIn(
  baseUrl: string,
  adminToken: string,
  email: string,
  options: { organizationId?: string } = {},
): Promise<SignedInPerson> {
  const { token } = await mintSignInLink(baseUrl, adminToken, email, options);
  const { cookie, csrf } = await redeemSignInLink(baseUrl, token);
  return { cookie, csrf };
}

/** A GraphQL call as a signed-in person (cookie + CSRF token). */
export async function personGql<T = any>(
  baseUrl: string,
  person: SignedInPerson | null,
  query: string,
  variables: Record<string, unknown> = {},
  options: { csrf?: string | null } = {},
): Promise<{ status: number; data: T; errors?: { message: string; extensions: { code: string; details?: any } }[] }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (person) headers.cookie = person.cookie;
  const csrf = options.csrf === undefined ? person?.csrf : options.csrf;
  if (csrf) headers['x-csrf-token'] = csrf;
  const res = await fetch(`${baseUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const json = (await res.json()) as { data: T; errors?: any[] };
  return { status: res.status, data: json.data, errors: json.errors };
}
