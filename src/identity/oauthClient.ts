/** A client as the authorization server uses it. */
export interface OAuthClient {
  id: string;
  kind: 'registered' | 'metadata';
  name: string;
  redirectUris: string[];
}
