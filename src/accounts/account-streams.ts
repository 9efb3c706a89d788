import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore } from '../event-store/event-store';
import type { Handled, Loaded, StreamCommands } from '../event-store/stream-commands';
import { Errors } from '../platform/errors';
import { MODES, Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import type { AccountView } from './account-queries';
import { AccountCommand, accountDecider, AccountEvent, AccountState } from './account.decider';
import { ApiKeyCommand, apiKeyDecider, ApiKeyEvent, ApiKeyState } from './api-key.decider';
import { AccountCreated, AccountEvents, AccountSlugClaimed, ApiKeyCreated } from './events';

export interface LoadedApiKey {
  /** The mode whose stream holds the key. */
  mode: Mode;
  state: ApiKeyState & { created: ApiKeyCreated };
  /** The stream as loaded, for a command decided on it next (onKey). */
  loaded: Loaded<ApiKeyState>;
}

export function toAccountView(e: AccountCreated): AccountView {
  return { id: e.account_id, slug: e.slug, name: e.name, email: e.email, created_at: e.created_at };
}

/**
 * How commands find accounts and keys and record facts on their streams: each stream type
 * has its decider, run by StreamCommands (load, decide, append at the loaded revision, on
 * a lost race again), never deciding on the accounts or api_keys read models, so a lagging
 * projection cannot turn what was just created into a 404 (issue 9). Queries (GET /v1/me,
 * the key guard, key lists) keep the read models.
 */
@Injectable()
export class AccountStreams {
  private readonly accounts: StreamCommands<AccountCommand, AccountEvent, AccountState>;
  private readonly keys: StreamCommands<ApiKeyCommand, ApiKeyEvent, ApiKeyState>;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    writer: EventWriter,
  ) {
    this.accounts = writer.commands(accountDecider);
    this.keys = writer.commands(apiKeyDecider);
  }

  /** Decides a command on an account's stream. */
  onAccount(accountId: string, command: AccountCommand): Promise<Handled<AccountState, AccountEvent>> {
    return this.accounts.handle(Streams.account(accountId), command);
  }

  /** Decides a command on an API key's stream; on `loaded` (loadKey's) when the caller has just loaded it. */
  onKey(mode: Mode, keyId: string, command: ApiKeyCommand, loaded?: Loaded<ApiKeyState>): Promise<Handled<ApiKeyState, ApiKeyEvent>> {
    return this.keys.handle(Streams.apiKey(mode, keyId), command, loaded);
  }

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
    const { created } = (await this.accounts.load(Streams.account(accountId))).state;
    return created ? toAccountView(created) : undefined;
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

  /** A key folded from its stream in whichever mode holds it (a key id alone names no mode); 404 not_found when neither does. */
  async loadKey(keyId: string): Promise<LoadedApiKey> {
    for (const mode of MODES) {
      const loaded = await this.keys.load(Streams.apiKey(mode, keyId));
      const { state } = loaded;
      if (state.created) return { mode, state: { ...state, created: state.created }, loaded };
    }
    throw Errors.notFound('API key');
  }
}
