// The small rules of the authorization server, without a server: which resources are ours, which
// redirect URIs a client may register, PKCE S256, and where a token is accepted.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redirectUriProblem } from '../../src/identity/clients.js';
import { audienceAccepts, doorOf, ourResource, type Resources } from '../../src/identity/resources.js';
import { verifierMatches } from '../../src/identity/secrets.js';

const resources: Resources = {
  issuer: 'https://docs.example.com',
  service: 'https://docs.example.com/',
  mcp: 'https://docs.example.com/mcp',
  api: 'https://docs.example.com/api/v1',
};

describe('resources (RFC 8707)', () => {
  it('names only this service, normalized; anything else is not ours', () => {
    expect(ourResource(resources, 'https://docs.example.com/mcp')).toBe(resources.mcp);
    expect(ourResource(resources, 'https://docs.example.com/mcp/')).toBe(resources.mcp);
    expect(ourResource(resources, 'https://DOCS.example.com/api/v1')).toBe(resources.api);
    expect(ourResource(resources, 'https://docs.example.com')).toBe(resources.service);
    for (const other of [
      'https://evil.example/mcp',
      'https://docs.example.com/mcp?x=1',
      'https://docs.example.com/mcp#f',
      'http://docs.example.com/mcp',
      'mcp',
      '',
    ])
      expect(ourResource(resources, other), other).toBeNull();
  });

  it('a token is accepted at the door of its audience, and a service-wide one at both', () => {
    expect(audienceAccepts(resources, resources.mcp, 'mcp')).toBe(true);
    expect(audienceAccepts(resources, resources.mcp, 'api')).toBe(false);
    expect(audienceAccepts(resources, resources.api, 'mcp')).toBe(false);
    expect(audienceAccepts(resources, resources.service, 'api')).toBe(true);
    expect(doorOf('/mcp')).toBe('mcp');
    expect(doorOf('/api/v1/workspaces/-/memory')).toBe('api');
    expect(doorOf('/api/v1/openapi.json')).toBeNull();
    expect(doorOf('/graphql')).toBeNull();
  });
});

describe('redirect URIs a client may register', () => {
  it("https, http on loopback, a reverse-domain native scheme (and editors' own); never one-word schemes that open anything, fragments or credentials", () => {
    for (const ok of [
      'https://app.example/cb',
      'http://127.0.0.1:3334/cb',
      'http://localhost/cb',
      'http://[::1]:8/cb',
      'com.example.app:/oauth/callback',
      'com.googleusercontent.apps.1234-abc:/oauth2redirect',
      'cursor://anysphere.cursor-mcp/oauth/callback',
      'vscode://vscode.github-authentication/did-authenticate',
    ])
      expect(redirectUriProblem(ok), ok).toBeNull();
    for (const bad of [
      'http://app.example/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'file:///etc/passwd',
      'ms-msdt:/id PCWDiagnostic',
      'search-ms:query=invoice&crumb=location:\\\\evil.example\\share',
      'chrome://settings',
      'view-source:https://a.example/',
      'mailto:a@b.example',
      'myapp://callback',
      'https://a.example/cb#x',
      'https://u:p@a.example/cb',
      'cb',
      42,
    ])
      expect(redirectUriProblem(bad), String(bad)).not.toBeNull();
    expect(redirectUriProblem(`https://a.example/${'x'.repeat(2000)}`)).not.toBeNull();
  });
});

describe('PKCE S256 (RFC 7636)', () => {
  it('matches the verifier whose SHA-256 is the challenge, and refuses malformed verifiers', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    expect(challenge).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'); // RFC 7636, appendix B
    expect(verifierMatches(verifier, challenge)).toBe(true);
    expect(verifierMatches(`${verifier}x`, challenge)).toBe(false);
    expect(verifierMatches('short', createHash('sha256').update('short').digest('base64url'))).toBe(false);
    expect(verifierMatches(challenge, challenge)).toBe(false); // "plain" is not accepted
  });
});
