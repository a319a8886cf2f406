import { CliError, GLOBAL_OPTIONS, option, type CliContext } from './command.js';

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: { message: string; extensions?: { code?: string; details?: unknown } }[];
}

/** The service's error envelope, when an answer carries one. */
interface Envelope {
  error?: { code?: string; message?: string; status?: number; details?: unknown };
}

/** Talks to one running service: admin GraphQL with the admin token, REST with an agent key. */
export class ServiceClient {
  constructor(
    readonly url: string,
    private readonly adminToken: string | undefined,
  ) {}

  /** The client for the `--url` / `--admin-token` options (or WKS_URL / WKS_ADMIN_TOKEN). */
  static from(ctx: CliContext): ServiceClient {
    const url = (option(ctx, 'url', GLOBAL_OPTIONS) ?? '').replace(/\/$/, '');
    if (!/^https?:\/\//.test(url)) throw new CliError(`--url must be an http(s) URL, got "${url}"`, 2);
    return new ServiceClient(url, option(ctx, 'admin-token', GLOBAL_OPTIONS));
  }

  /** The admin token, or a usage error saying how to give one. */
  token(): string {
    if (!this.adminToken) throw new CliError('an admin token is needed: pass --admin-token or set WKS_ADMIN_TOKEN', 2);
    return this.adminToken;
  }

  /** Any HTTP request to the service; network failures become one clear message. */
  async request(path: string, init: RequestInit & { duplex?: 'half' } = {}): Promise<Response> {
    try {
      return await fetch(`${this.url}${path}`, init);
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CliError(
        `cannot reach the service at ${this.url} (${cause?.code ?? cause?.message ?? String(error)}); is it running? (--url or WKS_URL)`,
      );
    }
  }

  /** One admin GraphQL operation; resolves with `data`, throws the first error as a CliError. */
  async admin<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
    const res = await this.request('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token()}` },
      body: JSON.stringify({ query, variables }),
    });
    const answer = (await readJson(res)) as GraphQLAnswer<T> | null;
    const error = answer?.errors?.[0];
    if (error || !answer?.data) {
      const code = error?.extensions?.code ?? `http_${res.status}`;
      // GraphQL answers most errors with HTTP 200: the code is what matters.
      const status = res.status === 200 ? undefined : res.status;
      throw new CliError(describeFailure(status, code, error?.message ?? 'no data in the answer', error?.extensions?.details));
    }
    return answer.data;
  }

  /** A REST call under /api/v1 with an agent key; throws the envelope as a CliError unless 2xx. */
  async rest<T>(method: string, path: string, key: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await this.request(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const answer = await readJson(res);
    if (!res.ok) throw envelopeError(res.status, answer);
    return answer as T;
  }
}

/** The body as JSON, or null when it is not JSON. */
export async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? (JSON.parse(text) as unknown) : null;
  } catch {
    return null;
  }
}

/** A non-2xx answer with the service's envelope as one CliError. */
export function envelopeError(status: number, answer: unknown): CliError {
  const error = (answer as Envelope | null)?.error;
  return new CliError(
    describeFailure(status, error?.code ?? `http_${status}`, error?.message ?? 'the service refused the request', error?.details),
  );
}

/** One line saying what failed, with a hint for the credential failures. */
function describeFailure(status: number | undefined, code: string, message: string, details: unknown): string {
  const hint =
    code === 'unauthorized'
      ? ' (check --admin-token / WKS_ADMIN_TOKEN, or the agent key)'
      : code === 'permission_denied' && /admin token/i.test(message)
        ? ' (this needs the admin token, not an agent key)'
        : '';
  const extra =
    Array.isArray(details) && details.length
      ? `: ${details.map((d) => (typeof d === 'object' ? JSON.stringify(d) : String(d))).join('; ')}`
      : '';
  return `${code}${status ? ` (${status})` : ''}: ${message}${extra}${hint}`;
}
