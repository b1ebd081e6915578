// The trust-rule role of the store (issue 28 §1, §4): a namespace's OIDC trust rules and how the namespace was
// verified. A small port of its own, every method async; implemented in store/sqlite and store/postgres.

/** A trust rule as stored: claims are plain string maps, `oidcOnly` a boolean. */
export interface TrustRuleRecord {
  id: number;
  namespace: string;
  issuer: string;
  audience: string;
  claims: Record<string, string>;
  refClaims: Record<string, string>;
  oidcOnly: boolean;
  createdAt: string;
  /** When `publisher untrust` removed it (the row stays); null while it is in force. */
  removedAt: string | null;
}

export type NewTrustRuleRecord = Omit<TrustRuleRecord, 'id' | 'removedAt'>;

/** How a namespace was verified: marked unverified by an operator, or proven for a domain over HTTP. */
export interface NamespaceVerificationRecord {
  namespace: string;
  unverified: boolean;
  domain: string | null;
  provenAt: string | null;
}

/** A namespace's rules in force and its verification record (loadNamespaceTrust). */
export interface NamespaceTrustRecords {
  rules: TrustRuleRecord[];
  verification: NamespaceVerificationRecord | undefined;
}

export interface TrustRuleStore {
  /** The rules in force for `namespace` (exact, lowercase), oldest first. */
  listTrustRules(namespace: string): Promise<TrustRuleRecord[]>;
  /** Every rule in force, by namespace then age (for `publisher list`). */
  listAllTrustRules(): Promise<TrustRuleRecord[]>;
  insertTrustRule(rule: NewTrustRuleRecord): Promise<TrustRuleRecord>;
  /** Mark rule `id` of `namespace` removed; the removed record, or undefined when no such rule is in force. */
  removeTrustRule(namespace: string, id: number, removedAt: string): Promise<TrustRuleRecord | undefined>;
  findNamespaceVerification(namespace: string): Promise<NamespaceVerificationRecord | undefined>;
  /**
   * Both of a namespace's trust facts (what every publish reads): its rules in force, oldest first, and its
   * verification record; what listTrustRules and findNamespaceVerification answer, read together (one round trip).
   */
  loadNamespaceTrust(namespace: string): Promise<NamespaceTrustRecords>;
  /** Insert or replace the namespace's verification record. */
  saveNamespaceVerification(record: NamespaceVerificationRecord): Promise<void>;
}
