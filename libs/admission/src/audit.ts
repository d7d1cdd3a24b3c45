/**
 * Audit annotations on the admission response. kube-apiserver prefixes each key with the webhook
 * name and a slash, so our keys must be qualified names without a slash of their own.
 */
export const AUDIT_DECISION_KEY = 'decision';

const AUDIT_KEY_PATTERN = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

export function isValidAuditKey(key: string): boolean {
  return key.length <= 63 && AUDIT_KEY_PATTERN.test(key);
}

export const DECISION_INJECTED = 'injected';

export function skippedDecision(reason: string): string {
  return `skipped:${reason}`;
}

export function deniedDecision(reason: string): string {
  return `denied:${reason}`;
}
