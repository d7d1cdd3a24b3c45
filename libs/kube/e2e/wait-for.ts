/**
 * Polls `condition` until it returns something truthy (which is returned), or fails after
 * `timeoutMs` with `what` and the last error thrown by the condition. Tests wait for states, never
 * for fixed times.
 */
export async function waitFor<T>(what: string, condition: () => T | Promise<T>, timeoutMs = 60_000, intervalMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? `; last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${cause}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
