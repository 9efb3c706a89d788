import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { AuthContext } from '../platform/auth/auth-context';
import { invalidCursor, Page, toPage } from '../platform/pagination';

/** The name of this context's read model (its projection in projections/, its checkpoint). */
export const WEBHOOK_ENDPOINTS_READ_MODEL = 'webhook_endpoints';

export interface WebhookEndpointView {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

function toEndpointView(row: any): WebhookEndpointView {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** Reads of webhook_endpoints, always scoped to the caller's account and mode. */
@Injectable()
export class EndpointQueries {
  constructor(@Inject(DATABASE) private readonly db: Database) {}

  async find(owner: Pick<AuthContext, 'accountId' | 'mode'>, id: string): Promise<WebhookEndpointView | undefined> {
    const { rows } = await this.db.query(
      'SELECT * FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND mode = $3',
      [id, owner.accountId, owner.mode],
    );
    return rows[0] && toEndpointView(rows[0]);
  }

  /** Oldest first, so a page boundary is stable while endpoints are added. */
  async list(owner: Pick<AuthContext, 'accountId' | 'mode'>, limit: number, cursor?: string): Promise<Page<WebhookEndpointView>> {
    if (cursor && !(await this.find(owner, cursor))) throw invalidCursor();
    const { rows } = await this.db.query(
      `SELECT * FROM webhook_endpoints
        WHERE account_id = $1 AND mode = $2
          AND ($3::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM webhook_endpoints WHERE id = $3))
        ORDER BY created_at, id LIMIT $4`,
      [owner.accountId, owner.mode, cursor ?? null, limit + 1],
    );
    return toPage(rows, limit, toEndpointView);
  }
}
