// Public face of the auditor (`toolseal/audit`): an RFC 9162 §8.3 log monitor run from outside the registry.

export { appendToFrontier, frontierLength, frontierRoot } from './frontier.ts';
export type { AuditProblem, AuditProblemCode, AuditReport, LogKeySource } from './report.ts';
export { type AuditOptions, type AuditResult, auditWithStateFile, runAudit } from './run-audit.ts';
export {
  AUDIT_STATE_TYPE,
  defaultAuditStateFile,
  type AuditState,
  formatAuditState,
  parseAuditState,
  readAuditStateFile,
  writeAuditStateFile,
} from './state.ts';
