import type { Html } from './html';
import type { NoticeCode } from './notices';
import type { ConsoleRole } from './sessions';
import type { PageRequest } from './viewer';

/** One page of the console: who may open it, and what it shows. */
export interface ConsolePage {
  /** Under /console; may end in /:id (PageRequest.param). */
  path: string;
  title: string;
  role: ConsoleRole;
  /** A creator's key must carry one of these, as for the API routes showing the same data. */
  scopes?: string[];
  render(request: PageRequest): Promise<Html>;
  /** Where to send the browser instead of rendering (a page that only finds another). */
  redirect?(request: PageRequest): Promise<string>;
  /** The part of the page the script refreshes (data-refresh), on its own. */
  fragment?(request: PageRequest): Promise<Html>;
  /** A download of what the page shows (?format=csv). */
  csv?(request: PageRequest): Promise<{ fileName: string; body: string }>;
}

/**
 * A file a page's script fetches (not a page): its bytes, answered as a download
 * (application/octet-stream, attachment), never cached; who may fetch it is checked as for a page.
 */
export interface ConsoleFile {
  /** Under /console; may end in /:id (PageRequest.param); the file is named by the query. */
  path: string;
  role: ConsoleRole;
  scopes?: string[];
  /** The file's bytes and name; throws a 404 ApiError for a file the viewer may not fetch. */
  serve(request: PageRequest): Promise<{ fileName: string; body: Uint8Array }>;
}

/** A form's target: it changes something, then sends the browser back to a page. */
export interface ConsoleAction {
  path: string;
  role: ConsoleRole;
  scopes?: string[];
  /**
   * Answers where to go next; a notice code (NOTICES in notices.ts) says what happened, with
   * how many for a notice that counts (COUNTED there).
   */
  run(request: PageRequest, form: Record<string, string>): Promise<{ redirect: string; notice?: NoticeCode; count?: number }>;
}

/** A group of pages and actions, provided by a Nest provider of ConsoleModule. */
export interface ConsoleSection {
  pages(): ConsolePage[];
  actions(): ConsoleAction[];
  /** Files the section's pages fetch from their script. */
  files?(): ConsoleFile[];
}

/** A client mistake on a form (a missing field): the page again, with the message. */
export class ConsoleInputError extends Error {}
