import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, Database } from '../database/database';
import type { Mode } from '../platform/mode';
import { inMode, Owner, ownedBy } from '../platform/owner-scope';
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

  async find(owner: Owner, id: string): Promise<WebhookEndpointView | undefined> {
    const s = ownedBy(owner);
    const { rows } = await this.db.query(`SELECT * FROM webhook_endpoints WHERE ${s.where()} AND id = ${s.param(id)}`, s.params);
    return rows[0] && toEndpointView(rows[0]);
  }

  /** Oldest first, so a page boundary is stable while endpoints are added. */
  async list(owner: Owner, limit: number, cursor?: string): Promise<Page<WebhookEndpointView>> {
    if (cursor && !(await this.find(owner, cursor))) throw invalidCursor();
    const s = ownedBy(owner);
    const after = s.param(cursor ?? null);
    const { rows } = await this.db.query(
      `SELECT * FROM webhook_endpoints
        WHERE ${s.where()}
          AND (${after}::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM webhook_endpoints WHERE id = ${after}))
        ORDER BY created_at, id LIMIT ${s.param(limit + 1)}`,
      s.params,
    );
    return toPage(rows, limit, toEndpointView);
  }

  /** Operators (the console): the mode's newest endpoints of every account. */
  async recentInMode(mode: Mode, limit: number): Promise<(WebhookEndpointView & { account_id: string })[]> {
    const s = inMode(mode);
    const { rows } = await this.db.query(`SELECT * FROM webhook_endpoints WHERE ${s.where()} ORDER BY created_at DESC, id DESC LIMIT ${s.param(limit)}`, s.params);
    return rows.map((row: any) => ({ ...toEndpointView(row), account_id: row.account_id }));
  }
}
