/**
 * One consumer of an EventStoreDB persistent subscription to $all (the port's
 * subscribePersistent). The server does the competing-consumer work: it hands each event
 * to one consumer at a time, remembers acknowledgements, retries nacked and timed-out
 * events (a retry past maxRetryCount is parked by the server itself) and retries what a
 * disconnected consumer held. This side creates the group, runs handlers and answers.
 */
import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  PersistentSubscriptionExistsError,
  PersistentSubscriptionFailedError,
  START as CLIENT_START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  jsonEvent,
  persistentSubscriptionToAllSettingsFromDefaults,
  type PersistentSubscriptionToAll,
  type PersistentSubscriptionToAllResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { PersistentGroupRefusedError, PersistentHandler, PersistentSubscriptionOptions, Position, RecordedEvent, START, Subscription, parsePosition, toPosition } from '../event-store';
import { asUnavailable, explainDenied, toRecorded } from './recorded';

/** Pause before a dropped consumer joins again; doubles per failure up to the max, reset once joined. */
const REJOIN_MIN_MS = 250;
const REJOIN_MAX_MS = 5000;

/** Where the server parks a $all group's events (PersistentSubscriptionMessageParker: "$persistentsubscription-" + "$all::<group>" + "-parked"). */
export function parkedStreamOf(group: string): string {
  return `$persistentsubscription-$all::${group}-parked`;
}

/** Exactly these event types, as a server-side (.NET) regex. */
function typesRegex(types: readonly string[]): string {
  return `^(?:${types.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`;
}

/**
 * The versions of a group, newest last, in a stream of their own: a group on $all cannot
 * have its filter (its event types) changed in place, and the server does not report it,
 * so each set of types is a group of its own on the server, "<group>" for the first and
 * "<group>-v<n>" after, created where the one before had got to (its checkpoint). The
 * stream is none of the service's categories, so no reader of $all sees it.
 */
export function groupVersionsStreamOf(group: string): string {
  return `persistentgroupversions-${group}`;
}

interface GroupVersion {
  /** The group's name on the server. */
  name: string;
  types: string[];
}

/** The current version of a group (null: none recorded) and the revision it is at. */
async function currentVersion(client: KurrentDBClient, group: string): Promise<{ version: GroupVersion | null; revision: bigint | 'no_stream' }> {
  try {
    for await (const resolved of client.readStream(groupVersionsStreamOf(group), { direction: BACKWARDS, fromRevision: END, maxCount: 1 })) {
      if (resolved.event) return { version: resolved.event.data as unknown as GroupVersion, revision: resolved.event.revision };
    }
  } catch (error) {
    if (!(error instanceof StreamNotFoundError)) throw error;
  }
  return { version: null, revision: 'no_stream' };
}

/** The name on the server of a group's current version: the one its consumers join, whose parked events are its. */
export async function serverGroupName(client: KurrentDBClient, group: string): Promise<string> {
  return (await currentVersion(client, group)).version?.name ?? group;
}

const sameTypes = (a: readonly string[], b: readonly string[]) => [...a].sort().join('\n') === [...b].sort().join('\n');

type StartFrom = ReturnType<typeof persistentSubscriptionToAllSettingsFromDefaults>['startFrom'];

/** Creates a group on the server; false when it exists already. */
async function create(client: KurrentDBClient, name: string, startFrom: StartFrom, options: PersistentSubscriptionOptions): Promise<boolean> {
  const settings = persistentSubscriptionToAllSettingsFromDefaults({ startFrom, maxRetryCount: options.maxRetries, messageTimeout: options.messageTimeoutMs });
  try {
    await client.createPersistentSubscriptionToAll(name, settings, { filter: eventTypeFilter({ regex: typesRegex(options.types) }) });
    return true;
  } catch (error) {
    if (error instanceof PersistentSubscriptionExistsError) return false;
    const denied = explainDenied(error, `creating persistent subscription group ${name}`, 'the server lets only a user in $ops or $admins create groups');
    if (denied !== error) throw denied;
    if (error instanceof PersistentSubscriptionFailedError) {
      // The server's refusal says why only in its reason: the usual one is a start past the end of $all.
      const at = typeof startFrom === 'object' ? ` at commit position ${startFrom.commit}` : '';
      const why = error.reason || error.message;
      throw new PersistentGroupRefusedError(
        name,
        `the server refused to start it${at} (${why}); a start past the end of $all is refused, which a startAfter taken from another log (a copy, another server) is: give a position of this server's $all, or none`,
      );
    }
    throw error;
  }
}

/** Where a group has got to: its last checkpoint, else its start. */
async function reachedBy(client: KurrentDBClient, name: string): Promise<StartFrom> {
  const info = await client.getPersistentSubscriptionToAllInfo(name);
  return info.stats.lastCheckpointedEventPosition ?? info.settings.startFrom;
}

/**
 * The server group of the consumer's version of the group, created if needed: the
 * recorded current version when its types are the consumer's (created again where
 * startAfter says if it was deleted); else a new version, created at the checkpoint of the
 * one before and recorded (a group that exists with no version recorded was made before
 * versions were, with types unknown, so it is succeeded too). Two consumers of a new
 * release racing make the same new version: the record is appended at the revision read.
 */
async function prepareVersion(client: KurrentDBClient, group: string, options: PersistentSubscriptionOptions): Promise<string> {
  const startAfter = options.startAfter ?? START;
  const startFrom = startAfter === START ? CLIENT_START : parsePosition(startAfter);
  for (;;) {
    const { version, revision } = await currentVersion(client, group);
    if (version && sameTypes(version.types, options.types)) {
      await create(client, version.name, startFrom, options);
      return version.name;
    }
    let name = group;
    if (version || !(await create(client, group, startFrom, options))) {
      const previous = version?.name ?? group;
      const n = Number(/-v(\d+)$/.exec(previous)?.[1] ?? 1) + 1;
      name = `${group}-v${n}`;
      await create(client, name, await reachedBy(client, previous), options);
    }
    try {
      await client.appendToStream(groupVersionsStreamOf(group), jsonEvent({ type: 'PersistentGroupVersion', data: { name, types: [...options.types].sort() } }), { streamState: revision });
      return name;
    } catch (error) {
      // Another consumer recorded a version meanwhile: take it (or succeed it) instead.
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
  }
}

/**
 * Prepares the group (see prepareVersion), then returns its server name and its start
 * position when that is a position. The server starts a group AT its start position (it
 * reads $all from there, inclusively, and drops only live events before it:
 * PersistentSubscription.cs); the port starts it AFTER, so consumers acknowledge the event
 * at exactly that position unhandled. The start is read back from the server (GetInfo),
 * not taken from the options, because the group may have been created by another consumer
 * with another startAfter, or as a later version at its predecessor's checkpoint.
 */
async function prepareGroup(client: KurrentDBClient, group: string, options: PersistentSubscriptionOptions): Promise<{ name: string; skipAt: Position | null }> {
  const name = await prepareVersion(client, group, options);
  const start = (await client.getPersistentSubscriptionToAllInfo(name)).settings.startFrom;
  if (!start || start === CLIENT_START || start === END) return { name, skipAt: null };
  return { name, skipAt: toPosition(start.commit, start.prepare) };
}

export function joinPersistentGroup(
  client: KurrentDBClient,
  streamPrefixes: readonly string[],
  group: string,
  options: PersistentSubscriptionOptions,
  handler: PersistentHandler,
): Subscription {
  let stopped = false;
  let subscription: PersistentSubscriptionToAll | null = null;
  let endSession: (() => void) | null = null;
  let cancelPause: (() => void) | null = null;
  const ours = (streamId: string) => streamPrefixes.some((prefix) => streamId.startsWith(prefix));

  /**
   * A replayed parked event comes as the server read it from the parked stream: with its
   * link, and both at the link's position (PersistentSubscriptions.Read sends a resolved
   * event's OriginalPosition), not the event's own. Its own is read from its stream.
   */
  const ownPosition = async (event: RecordedEvent): Promise<RecordedEvent> => {
    for await (const own of client.readStream(event.streamId, { direction: FORWARDS, fromRevision: BigInt(event.revision), maxCount: 1 })) {
      const recorded = toRecorded(own);
      if (recorded && recorded.id === event.id) return { ...event, position: recorded.position };
    }
    throw new Error(`replayed parked event ${event.id} is no longer at ${event.revision}@${event.streamId}`);
  };

  const answer = async (sub: PersistentSubscriptionToAll, resolved: PersistentSubscriptionToAllResolvedEvent, skipAt: Position | null, parkedStream: string) => {
    const replayed = resolved.link?.streamId === parkedStream;
    const event = toRecorded(resolved);
    // Other applications' events (the server filters on type only) and the event at the
    // group's start (see prepareGroup) are acknowledged without the handler.
    if (!event || !ours(event.streamId) || (!replayed && event.position === skipAt)) return sub.ack(resolved);
    try {
      await handler(replayed ? await ownPosition(event) : event, resolved.retryCount);
    } catch (error) {
      // The handler's failure is its own to report (onError is for the subscription's, as on Postgres).
      const reason = error instanceof Error ? error.message : String(error);
      // The server would park it too on the retry after maxRetries ("Reached retry count");
      // parking here keeps the handler's error as the reason.
      return sub.nack(resolved.retryCount >= options.maxRetries ? 'park' : 'retry', reason, resolved);
    }
    return sub.ack(resolved);
  };

  /** One connection: joins, handles until the stream ends (stop, drop, server error). */
  const session = async (onJoined: () => void): Promise<void> => {
    const { name, skipAt } = await prepareGroup(client, group, options);
    if (stopped) return;
    const sub = client.subscribeToPersistentSubscriptionToAll(name, { bufferSize: options.bufferSize });
    subscription = sub;
    await new Promise<void>((resolve) => {
      let ended = false;
      const end = (error?: unknown) => {
        if (ended) return;
        ended = true;
        if (error && !stopped) options.onError?.(asUnavailable(error, `persistent subscription ${group}`));
        resolve();
      };
      endSession = () => end();
      sub.on('confirmation', onJoined);
      // Each event is handled as it arrives: the server sends no more than bufferSize that
      // this consumer holds. A handler still running for an event the server took back (its
      // message timeout passed, or this connection dropped) no longer counts, as the server's
      // count does not: that event is another consumer's (or this one's again) by now.
      sub.on('data', (resolved: PersistentSubscriptionToAllResolvedEvent) => {
        // An answer the closed stream cannot carry is moot: the server retries the event.
        answer(sub, resolved, skipAt, parkedStreamOf(name)).catch(() => undefined);
      });
      sub.on('error', end);
      sub.on('end', () => end());
      sub.on('close', () => end());
    });
    subscription = null;
    await sub.unsubscribe().catch(() => undefined);
  };

  const loop = (async () => {
    let pauseMs = REJOIN_MIN_MS;
    while (!stopped) {
      try {
        await session(() => (pauseMs = REJOIN_MIN_MS));
      } catch (error) {
        if (!stopped) options.onError?.(asUnavailable(error, `persistent subscription ${group}`));
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pauseMs);
        cancelPause = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      cancelPause = null;
      pauseMs = Math.min(pauseMs * 2, REJOIN_MAX_MS);
    }
  })();

  return {
    // Handlers in flight are not awaited: closing the connection hands their events out again.
    stop: async () => {
      stopped = true;
      cancelPause?.();
      const sub = subscription;
      endSession?.();
      await sub?.unsubscribe().catch(() => undefined);
      await loop;
    },
  };
}
