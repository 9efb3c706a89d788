import { randomBytes } from 'node:crypto';

/** URL slug: lowercase ASCII letters and digits separated by single hyphens. */
export const SLUG_SHAPE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function slugify(text: string, maxLength = 60): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/g, '');
}

/** Random suffixes tried after "-2" is taken too; each is one in 36^6, so the second is already a formality. */
const RANDOM_TRIES = 3;

/**
 * The first free slug near `base`, in at most five claims whatever is taken (issue 24): the
 * base, then "<base>-2" (the readable answer for the usual second of a name), then
 * "<base>-<6 random letters or digits>". `claim` appends the slug's claim stream and answers
 * false when it is taken. Undefined only if every try was taken: the caller's 409.
 */
export async function claimFreeSlug(base: string, claim: (slug: string) => Promise<boolean>): Promise<string | undefined> {
  const candidates = [base, `${base}-2`, ...Array.from({ length: RANDOM_TRIES }, () => `${base}-${randomSuffix()}`)];
  for (const slug of candidates) if (await claim(slug)) return slug;
  return undefined;
}

function randomSuffix(): string {
  return Array.from(randomBytes(6), (b) => '0123456789abcdefghijklmnopqrstuvwxyz'[b % 36]).join('');
}
