import type { Role } from '../roles.js';
import type { Plan } from '../plans.js';

/** A key as its lookup reads it: the key, its member and organization (cached per process by KeyCache). */
export interface KeyRow {
  id: string;
  name: string;
  permissions: string[];
  workspace_id: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  member_id: string;
  role: Role;
  two_factor_enabled: boolean;
  organization_id: string;
  plan: Plan;
  require_two_factor: boolean;
}
