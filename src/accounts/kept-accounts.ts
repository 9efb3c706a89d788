import { BeforeApplicationShutdown, Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SETTINGS, Settings } from '../config/settings';
import { EVENT_STORE, EventStore } from '../event-store/event-store';
import { FollowedEvent, LogFollower } from '../event-store/log-follower';
import { BoundedMap } from '../platform/bounded-map';
import { AccountQueries, AccountView, ApiKeyRecord } from './account-queries';
import { secretMatches } from './api-key-secret';
import { AccountEvents, ApiKeyActivated, ApiKeyRevoked } from './events';

interface Kept<T> {
  value: T;
  readAt: number;
}

/** What the log has said of a key that a read-model row read a moment ago may not show yet. */
interface KeyFacts {
  revoked_at?: string;
  activated?: true;
}

/**
 * The keys and accounts that authenticated requests use, kept in this process so that a
 * request costs no query for them (issue 27). The read models stay the truth; a copy is
 * only ever changed by an event that changes its row:
 * - ApiKeyRevoked and ApiKeyActivated update a kept key in place, from this process's own
 *   append at once and from other instances' through the log (LogFollower). Both facts are
 *   final, so they are also remembered by key id and laid over every row read later: a
 *   read that raced the event on a read model still catching up cannot bring back a key
 *   the log already revoked.
 * - Accounts never change after AccountCreated: kept as read.
 * A copy the log has not confirmed for AUTH_CACHE_MAX_AGE is read again; expiry is checked
 * by the caller on every request from the kept expires_at. Only keys found are kept, so a
 * burst of unknown keys costs one query each and keeps nothing.
 */
@Injectable()
export class KeptAccounts implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly keys: BoundedMap<string, Kept<ApiKeyRecord[]>>;
  private readonly accounts: BoundedMap<string, Kept<AccountView>>;
  private readonly facts: BoundedMap<string, KeyFacts>;
  private readonly follower: LogFollower;
  private readonly maxAgeMs: number;

  constructor(
    @Inject(EVENT_STORE) store: EventStore,
    @Inject(SETTINGS) settings: Settings,
    private readonly queries: AccountQueries,
  ) {
    this.maxAgeMs = settings.authCache.maxAgeSeconds * 1000;
    this.keys = new BoundedMap(settings.authCache.size);
    this.accounts = new BoundedMap(settings.authCache.size);
    this.facts = new BoundedMap(settings.authCache.size);
    this.follower = new LogFollower(store, [AccountEvents.ApiKeyRevoked, AccountEvents.ApiKeyActivated], (event) => this.learn(event));
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.maxAgeMs > 0) await this.follower.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.follower.stop();
  }

  /** How many keys' lookups are kept (bounded by AUTH_CACHE_SIZE). */
  get size(): number {
    return this.keys.size;
  }

  /**
   * The key whose lookup id and secret these are, or undefined. A kept entry answers only
   * when the secret matches one of its keys: anything else is read again, so a key created
   * after the entry was kept (a lookup id shared by chance) is found.
   */
  async keyMatching(lookupId: string, secret: string): Promise<ApiKeyRecord | undefined> {
    const hit = this.keptKeyMatching(lookupId, secret);
    if (hit) return hit;
    const read = await this.read(() => this.queries.keysByLookupId(lookupId));
    const keys = read.value.map((k) => this.withFacts(k));
    if (keys.length && this.maxAgeMs > 0) this.keys.set(lookupId, { value: keys, readAt: read.readAt });
    return keys.find((k) => secretMatches(secret, k.secret_hash));
  }

  /** The kept key whose lookup id and secret these are, without a read: undefined when none is kept (keyMatching then reads). */
  keptKeyMatching(lookupId: string, secret: string): ApiKeyRecord | undefined {
    return this.fresh(this.keys.get(lookupId))?.find((k) => secretMatches(secret, k.secret_hash));
  }

  async account(accountId: string): Promise<AccountView | undefined> {
    const kept = this.fresh(this.accounts.get(accountId));
    if (kept) return kept;
    const read = await this.read(() => this.queries.findAccount(accountId));
    if (read.value?.id === accountId && this.maxAgeMs > 0) this.accounts.set(accountId, { value: read.value, readAt: read.readAt });
    return read.value;
  }

  /** The time is taken before the query: a copy is as old as the moment its read began. */
  private async read<T>(query: () => Promise<T>): Promise<Kept<T>> {
    const readAt = Date.now();
    return { value: await query(), readAt };
  }

  private fresh<T>(kept: Kept<T> | undefined): T | undefined {
    if (!kept) return undefined;
    return this.follower.confirms(kept.readAt, this.maxAgeMs) ? kept.value : undefined;
  }

  private learn(event: FollowedEvent): void {
    const keyId = (event.data as ApiKeyRevoked | ApiKeyActivated).key_id;
    const known = this.facts.peek(keyId) ?? {};
    if (event.type === AccountEvents.ApiKeyRevoked) known.revoked_at ??= new Date((event.data as ApiKeyRevoked).revoked_at).toISOString();
    else known.activated = true;
    this.facts.set(keyId, known);
    // Revocations and activations are rare: a scan of the kept entries costs less than an index.
    for (const [lookupId, kept] of this.keys.all()) {
      if (kept.value.some((k) => k.id === keyId)) this.keys.replace(lookupId, { ...kept, value: kept.value.map((k) => this.withFacts(k)) });
    }
  }

  private withFacts(key: ApiKeyRecord): ApiKeyRecord {
    const facts = this.facts.peek(key.id);
    if (!facts) return key;
    return { ...key, revoked_at: key.revoked_at ?? facts.revoked_at ?? null, active: key.active || facts.activated === true };
  }
}
