import { Html, html } from './html';

/**
 * What an action reports back after its redirect (?notice=code). Codes, not text, travel in
 * the URL, so a crafted link cannot make the console say something it never said.
 */
export const NOTICES = {
  'rebuild-started': 'The rebuild started beside the live read model; it switches over when it has caught up.',
  'parked-retried': 'The parked events were offered to the read model again.',
  'key-revoked': 'The key was revoked; it is refused from now on.',
  'credits-granted': 'The credits were granted.',
  'delivery-resent': 'The delivery was queued for another attempt now; refresh to see it.',
  'parked-replayed': 'The parked events were handed to the fan-out again.',
  'mode-switched': 'Switched mode.',
  'signed-out': 'You are signed out.',
  'session-ended': 'Your session ended (it expired, or its key was revoked or expired); sign in again.',
} as const;

export type NoticeCode = keyof typeof NOTICES;

/**
 * Notices that say how many: the action answers the number with the code, and it travels as
 * ?count=n (digits only, else the plain text above is shown). A crafted link can change
 * only that number.
 */
const COUNTED: Partial<Record<NoticeCode, (n: number) => string>> = {
  'parked-replayed': (n) =>
    n === 0
      ? 'No event was parked: nothing was replayed.'
      : `${n === 1 ? '1 parked event was' : `${n} parked events were`} replayed: the fan-out hands ${n === 1 ? 'it' : 'them'} to its consumers again, and the deliveries appear as ${n === 1 ? 'it is' : 'they are'} handled.`,
};

export function noticeFor(code: string | undefined, count?: string): Html {
  if (!code || !(code in NOTICES)) return html``;
  const counted = COUNTED[code as NoticeCode];
  const text = counted && count !== undefined && /^\d{1,9}$/.test(count) ? counted(Number(count)) : NOTICES[code as NoticeCode];
  return html`<p class="notice ok" role="status">${text}</p>`;
}
