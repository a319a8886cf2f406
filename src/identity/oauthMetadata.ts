import { PERMISSIONS } from '../auth/permissions.js';
import type { Resources } from './resources.js';

/** Where the authorization server's endpoints are (under the issuer). */
export const ENDPOINTS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
} as const;

/** OAuth 2.0 Protected Resource Metadata (RFC 9728) of the service, of `/mcp` or of `/api/v1`. */
export function protectedResourceMetadata(resources: Resources, door: 'service' | 'mcp' | 'api'): Record<string, unknown> {
  const names = {
    service: 'Workspace Knowledge Service',
    mcp: 'Workspace Knowledge Service (MCP)',
    api: 'Workspace Knowledge Service (REST API v1)',
  };
  return {
    resource: resources[door],
    authorization_servers: [resources.issuer],
    scopes_supported: [...PERMISSIONS],
    bearer_methods_supported: ['header'],
    resource_name: names[door],
    resource_documentation: `${resources.issuer}/docs`,
  };
}

/** OAuth 2.0 Authorization Server Metadata (RFC 8414): OAuth 2.1 with PKCE S256, public clients, CIMD and DCR. */
export function authorizationServerMetadata(resources: Resources): Record<string, unknown> {
  const at = (path: string) => `${resources.issuer}${path}`;
  return {
    issuer: resources.issuer,
    authorization_endpoint: at(ENDPOINTS.authorize),
    token_endpoint: at(ENDPOINTS.token),
    registration_endpoint: at(ENDPOINTS.register),
    revocation_endpoint: at(ENDPOINTS.revoke),
    scopes_supported: [...PERMISSIONS],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    protected_resources: [resources.service, resources.mcp, resources.api],
  };
}

/** The well-known documents by path, or undefined for any other path. */
export function wellKnownDocument(path: string, resources: Resources): Record<string, unknown> | undefined {
  const prm = '/.well-known/oauth-protected-resource';
  if (path === prm) return protectedResourceMetadata(resources, 'service');
  if (path === `${prm}/mcp`) return protectedResourceMetadata(resources, 'mcp');
  if (path === `${prm}/api/v1`) return protectedResourceMetadata(resources, 'api');
  if (path === '/.well-known/oauth-authorization-server') return authorizationServerMetadata(resources);
  return undefined;
}
