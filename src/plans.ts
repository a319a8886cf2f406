/** The plans an organization may be on, and what each allows: the one table of plan limits. */
export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

interface PlanLimits {
  /** Memory notes a workspace may hold (null: unlimited); updating an existing path never counts. */
  memoryNotes: number | null;
  /** Sections and articles may be restricted (hidden from viewer-role members). */
  restrictedContent: boolean;
}

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: { memoryNotes: 200, restrictedContent: false },
  pro: { memoryNotes: 10_000, restrictedContent: true },
  enterprise: { memoryNotes: null, restrictedContent: true },
};

/** Memory notes a workspace may hold per plan (null: unlimited). */
export const MEMORY_QUOTA = Object.fromEntries(PLANS.map((p) => [p, PLAN_LIMITS[p].memoryNotes])) as Record<Plan, number | null>;

/** A feature only some plans allow: those plans, and the feature's name in a 403 `plan_required`. */
export interface PlanFeature {
  plans: Plan[];
  what: string;
}

/** Restricted visibility of a section or an article. */
export const RESTRICTED_VISIBILITY: PlanFeature = {
  plans: PLANS.filter((p) => PLAN_LIMITS[p].restrictedContent),
  what: 'Restricted visibility',
};

/** The memory quotas in words, for documentation: "free 200, pro 10,000, enterprise unlimited". */
export function memoryQuotasInWords(): string {
  return PLANS.map((p) => `${p} ${MEMORY_QUOTA[p]?.toLocaleString('en-US') ?? 'unlimited'}`).join(', ');
}
