/**
 * Polls `condition` until it holds (resolves with its value) or `ms` pass (rejects, naming `what`):
 * tests wait for the state they need, never for a fixed time.
 */
export async function until<T>(condition: () => T | Promise<T>, what: string, ms = 15_000, everyMs = 25): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
