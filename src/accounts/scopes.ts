/** The scopes of spec part 5. A key's empty scope list means unrestricted. */
export const SCOPES = [
  'models:read',
  'models:upload',
  'datasets:read',
  'datasets:upload',
  'listings:read',
  'listings:write',
  'payouts:read',
  'deploy:write',
  'webhooks:write',
  'inference:run',
  'factory:run',
] as const;

export type Scope = (typeof SCOPES)[number];

