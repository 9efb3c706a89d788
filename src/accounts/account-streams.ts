import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '../event-store/event-store';
import { Errors } from '../platform/errors';
import { MODES, Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import type { AccountView } from './account-queries';
import { AccountCreated, AccountEvents, AccountSlugClaimed, ApiKeyCreated } from './events';

export interface LoadedApiKey {
  mode: Mode;
  created: ApiKeyCreated;
  active: boolean;
  revoked: boolean;
  /** Revision of the stream's last event: the expected revision of the next append. */
  revision: number;
}

/**
 * How commands find accounts and keys: from their streams, never from the accounts or
 * api_keys read models, so a lagging projection cannot turn what was just created into
 * a 404 (issue 9). Queries (GET /v1/me, the key guard, key lists) keep the read models.
 */
@Injectable()
export class AccountStreams {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /**
   * The account an id or a slug names. A slug is resolved through its claim stream, and
   * then only if the claimed account was created with that slug: a claim left behind by a
   * failed creation names nothing.
   */
  async find(idOrSlug: string): Promise<AccountView | undefined> {
    const byId = await this.findById(idOrSlug);
    if (byId) return byId;
    const claim = (await this.store.readStream(Streams.accountSlug(idOrSlug)))[0];
    if (claim?.type !== AccountEvents.AccountSlugClaimed) return undefined;
    const account = await this.findById((claim.data as AccountSlugClaimed).account_id);
    return account?.slug === idOrSlug ? account : undefined;
  }

  /** By id only (a slug answers undefined). */
  async findById(accountId: string): Promise<AccountView | undefined> {
    const created = (await this.store.readStream(Streams.account(accountId))).find((e) => e.type === AccountEvents.AccountCreated);
    if (!created) return undefined;
    const e = created.data as AccountCreated;
    return { id: e.account_id, slug: e.slug, name: e.name, email: e.email, created_at: e.created_at };
  }

  /** find(), or 404 not_found. */
  async get(idOrSlug: string): Promise<AccountView> {
    const account = await this.find(idOrSlug);
    if (!account) throw Errors.notFound('account');
    return account;
  }

  /** findById(), or 404 not_found. */
  async getById(accountId: string): Promise<AccountView> {
    const account = await this.findById(accountId);
    if (!account) throw Errors.notFound('account');
    return account;
  }

  /**
   * A key folded from its stream, in the given mode or (a key id alone names no mode)
   * whichever mode holds it; 404 not_found when neither does.
   */
  async loadKey(keyId: string, mode?: Mode): Promise<LoadedApiKey> {
    for (const m of mode ? [mode] : MODES) {
      const events = await this.store.readStream(Streams.apiKey(m, keyId));
      if (events[0]?.type !== AccountEvents.ApiKeyCreated) continue;
      const created = events[0].data as ApiKeyCreated;
      return {
        mode: m,
        created,
        active: created.active || events.some((e) => e.type === AccountEvents.ApiKeyActivated),
        revoked: events.some((e) => e.type === AccountEvents.ApiKeyRevoked),
        revision: events[events.length - 1].revision,
      };
    }
    throw Errors.notFound('API key');
  }
}
