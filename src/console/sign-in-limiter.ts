import { Injectable } from '@nestjs/common';

/** Sign-in attempts an address may make in a window, in this process. */
const ATTEMPTS = 10;
const WINDOW_MS = 60_000;

/**
 * Sign-in attempts per address: ATTEMPTS a minute, counted per instance (a guesser spread over
 * N instances gets N times as many; the admin token and API keys carry 160+ bits, so the
 * limit is about noise in the logs and load, not about making a guess likely).
 */
@Injectable()
export class SignInLimiter {
  private readonly attempts = new Map<string, number[]>();

  allow(address: string, now = Date.now()): boolean {
    const recent = (this.attempts.get(address) ?? []).filter((at) => now - at < WINDOW_MS);
    if (recent.length >= ATTEMPTS) {
      this.attempts.set(address, recent);
      return false;
    }
    recent.push(now);
    this.attempts.set(address, recent);
    // Addresses that went quiet are forgotten, so the map stays as small as the last minute.
    if (this.attempts.size > 10_000) for (const [key, times] of this.attempts) if (!times.some((at) => now - at < WINDOW_MS)) this.attempts.delete(key);
    return true;
  }
}
