import { describe, expect, it } from 'vitest';
import { ENV_FIELD_PATH, isAnnotationPrefix, isDnsLabel, isDnsSubdomain, isQualifiedNamePart, PORT_NAME, QUANTITY } from './k8s-names.js';

describe('Kubernetes name rules', () => {
  it('DNS labels', () => {
    expect(['a', 'xxl-job', 'a1', 'x'.repeat(63)].every(isDnsLabel)).toBe(true);
    expect(['', 'A', '-a', 'a-', 'a.b', 'x'.repeat(64)].some(isDnsLabel)).toBe(false);
  });

  it('DNS subdomains', () => {
    expect(['a.b', 'tracing.example.com', 'xxl-agent'].every(isDnsSubdomain)).toBe(true);
    expect(['a..b', '.a', 'a.', 'A.b'].some(isDnsSubdomain)).toBe(false);
  });

  it('annotation prefixes end with a slash after a subdomain', () => {
    expect(isAnnotationPrefix('xxl-agent/')).toBe(true);
    expect(isAnnotationPrefix('tracing.example.com/')).toBe(true);
    expect(['xxl-agent', '/', 'a//', 'A/'].some(isAnnotationPrefix)).toBe(false);
  });

  it('annotation names after the prefix', () => {
    expect(['job-addr', 'a', 'A_b.c', 'x'.repeat(63)].every(isQualifiedNamePart)).toBe(true);
    expect(['', '-a', 'a-', 'a/b', 'x'.repeat(64)].some(isQualifiedNamePart)).toBe(false);
  });

  it('port names (IANA service names)', () => {
    expect(['http', 'http-xxl-agent', 'a', 'h2c', 'x1'].every((name) => PORT_NAME.test(name))).toBe(true);
    expect(['1', '123', 'a--b', '-a', 'a-', 'HTTP'].some((name) => PORT_NAME.test(name))).toBe(false);
  });

  it('quantities', () => {
    expect(['10m', '64Mi', '1', '1.5', '.5', '2e3', '1Gi', '+1'].every((value) => QUANTITY.test(value))).toBe(true);
    expect(['128MB', 'm', '', '1 Gi', 'Mi'].some((value) => QUANTITY.test(value))).toBe(false);
  });

  it('downward API env fields', () => {
    expect(["metadata.labels['app']", 'metadata.name', 'status.podIP', 'spec.nodeName'].every((path) => ENV_FIELD_PATH.test(path))).toBe(true);
    expect(['metadata.labels', 'spec.containers', 'status.phase'].some((path) => ENV_FIELD_PATH.test(path))).toBe(false);
  });
});
