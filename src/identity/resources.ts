import type { Context } from 'koa';
import type { OAuthSettings } from './oauthSettings.js';

/**
 * The protected resources (RFC 8707 audiences) this service is: `/mcp`, `/api/v1`, and the service
 * as a whole (its origin, accepted at both). A token is bound to one of them and accepted only at
 * the doors its audience covers.
 */
export interface Resources {
  /** The issuer: the public origin with no trailing slash. */
  issuer: string;
  service: string;
  mcp: string;
  api: string;
}

/** The resource identifiers for a request (PUBLIC_URL, else the request's own origin). */
export function resourcesFor(ctx: Context, settings: Pick<OAuthSettings, 'publicUrl'>): Resources {
  // Koa's ctx.origin is the Origin request header, not this server's origin: build it from the Host.
  const issuer = settings.publicUrl ? settings.publicUrl.replace(/\/$/, '') : `${ctx.protocol}://${ctx.host}`;
  return { issuer, service: `${issuer}/`, mcp: `${issuer}/mcp`, api: `${issuer}/api/v1` };
}

/** Hosts a listening address is private to (no one else can send it a forged Host header). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The start-time warning when PUBLIC_URL is unset and the service listens beyond loopback: the
 * OAuth issuer, the resource identifiers and sign-in links then follow each request's Host header.
 */
export function publicUrlWarning(publicUrl: string | undefined, listenHost: string): string | null {
  if (publicUrl || LOOPBACK_HOSTS.has(listenHost) || listenHost.startsWith('127.')) return null;
  return (
    "PUBLIC_URL is not set: the OAuth issuer, resource identifiers and sign-in links follow each request's Host header. " +
    'Set PUBLIC_URL to the address people and clients use (https://docs.example.com).'
  );
}

/** Which door a path is: MCP, the REST API, or neither (OAuth tokens are accepted only at the first two). */
export function doorOf(path: string): 'mcp' | 'api' | null {
  if (path === '/mcp') return 'mcp';
  if (path.startsWith('/api/') && path !== '/api/v1/openapi.json') return 'api';
  return null;
}

/** Whether a token bound to `resource` may be used at this door. */
export function audienceAccepts(resources: Resources, resource: string, door: 'mcp' | 'api'): boolean {
  return resource === resources.service || resource === resources[door];
}

/** A requested `resource` as one of ours (normalized), or null when it names anything else. */
export function ourResource(resources: Resources, raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.hash || url.search) return null;
  const href = url.href.replace(/\/+$/, '') || url.href;
  if (url.href === resources.service || href === resources.issuer) return resources.service;
  if (href === resources.mcp) return resources.mcp;
  if (href === resources.api) return resources.api;
  return null;
}

/** The Protected Resource Metadata URL of a door (RFC 9728: the well-known path, then the resource's path). */
export function metadataUrlOf(resources: Resources, door: 'mcp' | 'api' | 'service'): string {
  const suffix = door === 'mcp' ? '/mcp' : door === 'api' ? '/api/v1' : '';
  return `${resources.issuer}/.well-known/oauth-protected-resource${suffix}`;
}
