import type { ParsedCertificate } from '@outrigger/pki';

/** `CN=outrigger-webhook-ca-1790000000 (sha256 AB:CD:EF:01, until 2026-11-01T00:00:00.000Z)` for messages. */
export function describe(cert: ParsedCertificate): string {
  return `${cert.subject} (sha256 ${cert.fingerprint256.slice(0, 11)}, until ${cert.notAfter.toISOString()})`;
}

export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms / 1000));
  const parts: string[] = [];
  for (const [unit, size] of [['d', 86_400], ['h', 3_600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return sign + parts.slice(0, 2).join('');
}
