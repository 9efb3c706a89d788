import type { AuthContext } from '../platform/auth/auth-context';
import type { OperatorContext } from '../platform/auth/operator';
import type { Mode } from '../platform/mode';
import type { ConsoleRole } from './sessions';

/** Who is looking at a console page, and in which mode. */
export interface Viewer {
  role: ConsoleRole;
  mode: Mode;
  csrfToken: string;
  /** A creator's key as the API would see it (the same scopes and mode); undefined for an operator. */
  auth?: AuthContext;
  /** An operator's name and role; undefined for a creator. */
  operator?: OperatorContext;
}

/** What a page renders from: the viewer and the request's query string. */
export interface PageRequest {
  viewer: Viewer;
  query: Record<string, string | undefined>;
  /** The page's own path parameter (an id), when its path has one. */
  param?: string;
}
