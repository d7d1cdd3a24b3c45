import type { z } from 'zod';
import { parseEnv } from './env.js';
import { LOGGING_SETTINGS } from './logging.js';

/** Settings a release retired, with the one that replaced them (durations now carry their unit). */
export const RETIRED_SETTINGS: Readonly<Record<string, string>> = {
  GRACE_SECONDS: 'GRACE',
  RESYNC_SECONDS: 'RESYNC',
  WATCH_DEAD_SECONDS: 'WATCH_DEAD',
  UNHEALTHY_AFTER_SECONDS: 'UNHEALTHY_AFTER',
  LEASE_DURATION_SECONDS: 'LEASE_DURATION',
  FILE_POLL_SECONDS: 'FILE_POLL',
};

// What a container's environment holds besides our settings: never judged.
const PROCESS_NAMES = new Set(['PATH', 'HOME', 'HOSTNAME', 'USER', 'SHELL', 'PWD', 'OLDPWD', 'SHLVL', 'TERM', 'TZ', 'LANG', 'LANGUAGE', 'TMPDIR', '_']);
const PROCESS_PREFIXES = ['KUBERNETES_', 'NODE_', 'NPM_', 'LC_'];
// Kubernetes service links of any Service in the namespace: FOO_SERVICE_HOST, FOO_SERVICE_PORT[_NAME], FOO_PORT, FOO_PORT_443_TCP[_PROTO|_PORT|_ADDR].
const SERVICE_LINK = /^[A-Z0-9_]+_(SERVICE_(HOST|PORT(_[A-Z0-9_]+)?)|PORT(_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)$/;

/**
 * Why each variable of `env` is refused, given the settings this service knows: a retired name (with
 * its replacement, when the service has it), or an unknown name that extends a setting by words
 * (`GRACE_MS`), is the leading words of one (`LEASE_RENEW`) or is one typo away from one
 * (`LOG_LEVLE`). Anything else is left alone, so no ordinary container environment is refused.
 */
export function settingProblems(known: ReadonlySet<string>, env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || known.has(name)) continue;
    const replacement = RETIRED_SETTINGS[name];
    if (replacement && known.has(replacement)) {
      problems.push(`  ${name}: retired; set ${replacement}${/^\d+$/.test(value) ? `=${value}s` : ''} instead (a duration with its unit)`);
      continue;
    }
    if (PROCESS_NAMES.has(name) || PROCESS_PREFIXES.some((p) => name.toUpperCase().startsWith(p)) || SERVICE_LINK.test(name)) continue;
    const like = [...known].find((setting) => looksLike(name, setting));
    if (like) problems.push(`  ${name}: not a setting of this service (did you mean ${like}?)`);
  }
  return problems;
}

function looksLike(name: string, setting: string): boolean {
  if (name.startsWith(`${setting}_`)) return true;
  if (name.includes('_') && setting.startsWith(`${name}_`)) return true;
  return setting.length >= 6 && oneEditApart(name, setting);
}

/** One character inserted, deleted, replaced, or two neighbours swapped. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length !== b.length) return (a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1));
  return a.slice(i + 1) === b.slice(i + 1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2));
}

/**
 * A service's settings, parsed once at startup as parseEnv does, and strictly: what settingProblems
 * finds in the environment is refused with the rest, each naming its variable.
 */
export function parseServiceEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const known = new Set([...Object.keys(schema.shape), ...LOGGING_SETTINGS]);
  return parseEnv(schema, env, settingProblems(known, env));
}
