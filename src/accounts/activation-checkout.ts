import type { Mode } from '../platform/mode';

/**
 * Where a live premium key's activation fee is paid: commerce's checkout, bound in the
 * composition root (app.module.ts), so accounts asks for it without importing commerce.
 */
export const ACTIVATION_CHECKOUT = Symbol('ActivationCheckout');

export interface ActivationCheckout {
  /** Opens the activation checkout of `keyId`; `expires_at` in unix seconds. */
  open(key: { account_id: string; mode: Mode; key_id: string }): Promise<{ id: string; checkout_url: string; expires_at: number }>;
}
