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
  'mode-switched': 'Switched mode.',
  'signed-out': 'You are signed out.',
  'session-ended': 'Your session ended (it expired, or its key was revoked or expired); sign in again.',
} as const;

export type NoticeCode = keyof typeof NOTICES;

export function noticeFor(code: string | undefined): Html {
  if (!code || !(code in NOTICES)) return html``;
  return html`<p class="notice ok" role="status">${NOTICES[code as NoticeCode]}</p>`;
}
