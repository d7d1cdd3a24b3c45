import { z } from 'zod';

/**
 * Validates the process environment once, at startup, against a zod schema and returns the typed
 * result. All problems are reported together, each naming its variable.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `  ${i.path.join('.') || '(environment)'}: ${i.message}`);
  throw new Error(`invalid configuration:\n${problems.join('\n')}`);
}

/** Reusable field schemas for environment variables (all arrive as strings). */
export const envField = {
  port: (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback),
  seconds: (fallback: number) => z.coerce.number().positive().default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(['true', 'false', '1', '0'])
      .default(fallback ? 'true' : 'false')
      .transform((v) => v === 'true' || v === '1'),
  list: () =>
    z
      .string()
      .default('')
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
};
