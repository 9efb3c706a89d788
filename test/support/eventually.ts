/** Polls until check returns a truthy value; fails after timeoutMs. Timing is never the assertion. */
export async function eventually<T>(check: () => Promise<T | false | undefined> | T | false | undefined, timeoutMs = 15000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
