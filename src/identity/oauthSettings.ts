import { defaultOf } from '../config.js';
/** OAuth settings (docs/configuration.md): token lifetimes, the registration rate, the public address. */
export interface OAuthSettings {
  /** OAUTH_ACCESS_TOKEN_TTL_S: lifetime of an access token (short: revocation also reaches every process within seconds). */
  accessTokenTtlS: number;
  /** OAUTH_REFRESH_TOKEN_TTL_S: lifetime of a refresh token; each use rotates it and starts a new one. */
  refreshTokenTtlS: number;
  /** OAUTH_REGISTRATIONS_PER_HOUR: Dynamic Client Registrations per client address and hour. */
  registrationsPerHour: number;
  /** PUBLIC_URL: the service's address as clients see it (issuer, resource identifiers); default the request's own origin. */
  publicUrl?: string;
  /**
   * Fetches of Client ID Metadata Documents per window: from one client address
   * (OAUTH_METADATA_FETCHES_PER_ADDRESS) and by the whole service (OAUTH_METADATA_FETCHES_PER_MINUTE),
   * counted across processes on PostgreSQL. The window is a minute (tests may widen it).
   */
  metadataFetches: { perAddress: number; perService: number; windowSeconds: number };
}

export const DEFAULT_OAUTH_SETTINGS: OAuthSettings = {
  accessTokenTtlS: defaultOf('OAUTH_ACCESS_TOKEN_TTL_S'),
  refreshTokenTtlS: defaultOf('OAUTH_REFRESH_TOKEN_TTL_S'),
  registrationsPerHour: defaultOf('OAUTH_REGISTRATIONS_PER_HOUR'),
  metadataFetches: {
    perAddress: defaultOf('OAUTH_METADATA_FETCHES_PER_ADDRESS'),
    perService: defaultOf('OAUTH_METADATA_FETCHES_PER_MINUTE'),
    windowSeconds: 60,
  },
};

/** An authorization code lives two minutes and is redeemed once. */
export const CODE_TTL_S = 120;
/** A registration (DCR) that no grant used within a day is deleted: hosts re-register often. */
export const UNUSED_REGISTRATION_TTL_S = 24 * 3600;
/** A fetched metadata document that no grant used within an hour of its last fetch is deleted (a person consents within minutes). */
export const UNUSED_METADATA_TTL_S = 3600;
/** A metadata document that could not be fetched (or was refused) is not fetched again for a minute: the refusal is repeated. */
export const METADATA_FAILURE_S = 60;
/** A Client ID Metadata Document is kept at least 5 minutes and at most a day (its Cache-Control max-age within those), 1 hour by default. */
export const METADATA_CACHE_S = { min: 300, max: 24 * 3600, default: 3600 };
/** Bounds of a metadata document fetch: the outbound rules of webhooks and specs by URL, smaller and faster. */
export const METADATA_FETCH = { timeoutMs: 5000, maxBytes: 16 * 1024 };
