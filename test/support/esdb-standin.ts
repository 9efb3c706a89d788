/**
 * A wire-level stand-in for EventStoreDB (KurrentDB), for tests on machines where no
 * server can be installed: an in-process gRPC server on the service definitions the client
 * package itself ships, holding everything in memory. The real client talks to it
 * unmodified (esdb://127.0.0.1:PORT?tls=false). It speaks only what the adapter uses:
 * BatchAppend and Append, Tombstone, Read of a stream (resolving links when asked), Read of $all forward (and backwards,
 * from its end or before a position) with a filter, subscriptions to $all (catch-up, then live), persistent
 * subscriptions to $all (Create, Read, GetInfo, Delete, ReplayParked) and ServerFeatures, which lists just those
 * methods, as the server does, so the client enables persistent subscriptions to $all and
 * appends through BatchAppend, as it does against a server when no per-call credentials are
 * given (new EsdbStandIn({ batchAppend: false }) leaves BatchAppend out, for the plain Append
 * path). Every other method answers UNIMPLEMENTED.
 *
 * Semantics kept from the server: expected-version checks answered as WrongExpectedVersion
 * (a message on Append, a status on BatchAppend), idempotence as IndexWriter.CheckCommit
 * decides it (see appendNow: any/stream_exists appends are recognised only through an
 * in-memory cache of recent event ids that restart() empties; exact revisions through the
 * stream itself), $all is one total order of (commit, prepare) positions, a read of $all from a position
 * includes the event at it while a subscription from a position starts after it, and the
 * log holds system events ($-prefixed streams) that readers must filter out. Tombstone
 * deletes a stream for good: a "$streamDeleted" record in $all at its name, and StreamDeleted
 * for reads of it and appends to it from then on. An append larger than maxAppendSize (the
 * server's 1 MiB by default, counted as Event.SizeOnDisk) is refused, nothing written, as
 * MaximumAppendSizeExceeded. Secured mode (options.secured, see securedOptions): TLS with
 * a throw-away CA, basic credentials checked on every call but ServerFeatures, system
 * streams (a group's parked stream among them) for $admins only, creating, deleting a group
 * and replaying its parked events for $ops or $admins; refusals are AccessDenied.
 *
 * A node's refusals, on demand: notReady(ms) and busy(ms) windows (a restart() opens a
 * not-ready one by default, as every node start passes through it), answered as the server
 * answers each call (UNAVAILABLE on plain calls; on BatchAppend a status the client cannot
 * recognise); refuseAppends() for NotLeader (naming the stand-in itself as the leader; on
 * BatchAppend it ends the whole call), a timeout before the write, or a commit timeout after it.
 *
 * Persistent subscriptions (KurrentDB's PersistentSubscription.cs, round robin): a group
 * on $all keeps its filter and its start, which is inclusive (a group created from a
 * position is handed the event at it too); each event goes to one consumer at a time,
 * round robin among consumers with room, at most bufferSize unacknowledged per consumer;
 * retries go out before new events; ack ends an event; nack retry hands it out again with
 * retry_count + 1, unless its retry_count already reached maxRetryCount, then it is
 * parked (so maxRetryCount 2 delivers with counts 0, 1, 2); nack park parks at once; nack
 * skip drops it; a message timeout counts as a retry (same park rule); a consumer that goes
 * away has its unacknowledged events retried (count + 1, no park check, as the server's
 * unsubscribe path does). Parking writes a "$>" link event, data "<revision>@<stream>",
 * to "$persistentsubscription-$all::<group>-parked". Replay of parked events
 * (RetryParkedMessages): answered at once, then the links up to stopAt (exclusive, or all)
 * are handed out again as retries with retry count 0, each as the event with its link,
 * both at the link's position (as PersistentSubscriptions.Read sends a resolved link), and
 * answered by the link's id; then a "$metadata" event on "$$<parked stream>" sets its
 * "$tb" (truncate before) to where the replay stopped, and stream reads skip the events
 * before a stream's $tb; a second replay while one runs fails ("already in progress").
 * Checkpoints as the server writes them (checkPointAfter, min and max checkpoint counts:
 * on the once-a-second tick when at least the minimum was processed and checkPointAfter
 * passed, on any answer when the maximum was), to the group's checkpoint stream, and
 * reported by GetInfo; a restart() loads each group from its last checkpoint, so what was
 * handed out after it comes again as new (retry count 0, acknowledged or not) and
 * replayed parked events not yet acknowledged are lost. Message timeouts are checked once
 * a second, as the server's tick does. Not kept: other consumer
 * strategies, stream-sourced groups, truncation of the parked stream without a replay
 * (TruncateParked), metadata other than $tb (ACLs are the fixed rules of secured mode,
 * not read from streams' $acl).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as grpc from '@grpc/grpc-js';
// The client ships its generated protobuf classes and service definitions (no "exports"
// map, so deep paths resolve); the stand-in serves exactly what the client sends.
import * as streamsGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb';
import * as pb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb';
import * as shared from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb';
import * as psGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/persistentsubscriptions_grpc_pb';
import * as ps from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/persistentsubscriptions_pb';
import * as featuresGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_grpc_pb';
import * as features from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_pb';
import * as rpcStatus from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/status_pb';
import { Any } from 'google-protobuf/google/protobuf/any_pb';

interface StoredEvent {
  id: string;
  stream: string;
  revision: number;
  type: string;
  contentType: string;
  data: Uint8Array;
  metadata: Uint8Array;
  /** Ticks (100 ns) since the Unix epoch, as the server stamps "created". */
  created: bigint;
  /** Single-node log: commit and prepare are the event's own log record position. */
  position: bigint;
}

/** An event as proposed in an append, before the log gives it a stream revision and a position. */
type NewStored = Omit<StoredEvent, 'stream' | 'revision' | 'created' | 'position'>;

/** An append's expected version: an exact revision, or one of the server's three states. */
type Expected = number | 'any' | 'no_stream' | 'stream_exists';

type AppendOutcome = { kind: 'success'; last: StoredEvent | null; current: number } | { kind: 'wrong'; current: number } | { kind: 'timeout' } | { kind: 'crashed' };

/**
 * How a test has the next appends refused (refuseAppends): NotLeader (not executed, the
 * client reconnects to the leader it names), a timeout before the write (nothing written)
 * or after it (a commit timeout: written, the answer says it timed out), or a crash after
 * the write and before the answer (the node restarts: the caller's connection is cut, and
 * the cache of recent event ids is gone when it tries again).
 */
export type Refusal = 'not-leader' | 'timeout' | 'timeout-after-write' | 'crash-after-write';

export interface EsdbStandInOptions {
  /** Whether ServerFeatures lists BatchAppend, which the client then appends through (default); false keeps it to plain Append. */
  batchAppend?: boolean;
  /** The server's MaxAppendSize: the most bytes one append may carry (default 1 MiB, the server's). */
  maxAppendSize?: number;
  /**
   * A secured node: TLS with this certificate (PEM; the client trusts it through
   * tlsCAFile) and these users, their passwords and roles. See EsdbStandIn.authorize.
   */
  secured?: { cert: Buffer; key: Buffer; caFile: string; users: Record<string, { password: string; roles: string[] }> };
}

/** The server's default MaxAppendSize (ClusterVNodeOptions: 1,024 KiB). */
const MAX_APPEND_SIZE = 1024 * 1024;

/**
 * An event's size as the server counts it against MaxAppendSize (Event.SizeOnDisk): its
 * type (UTF-16, as .NET holds it), data and metadata.
 */
const sizeOnDisk = (e: NewStored) => e.type.length * 2 + e.data.length + e.metadata.length;

/** A gRPC error with the "exception" trailer the client maps to its typed errors (RpcExceptions). */
function streamError(code: grpc.status, exception: string, details: string, more: Record<string, string>): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  metadata.set('exception', exception);
  for (const [key, value] of Object.entries(more)) metadata.set(key, value);
  return Object.assign(new Error(details), { code, details, metadata });
}

/** How long a restarted node answers "not ready" before it serves again (restart's default). */
const RESTART_NOT_READY_MS = 300;

function proposedEvent(m: pb.AppendReq.ProposedMessage | pb.BatchAppendReq.ProposedMessage): NewStored {
  const meta = m.getMetadataMap();
  return { id: uuidString(m.getId()), type: meta.get('type') ?? '', contentType: meta.get('content-type') ?? 'application/json', data: m.getData_asU8(), metadata: m.getCustomMetadata_asU8() };
}

/** A google.rpc.Status with one packed detail, as BatchAppend answers a refused append (Status.cs). */
function status(code: number, message: string, typeName: string, detail: { serializeBinary(): Uint8Array }): rpcStatus.Status {
  const any = new Any();
  any.pack(detail.serializeBinary(), typeName);
  return new rpcStatus.Status().setCode(code).setMessage(message).setDetails(any);
}

interface Live {
  after: bigint;
  filter: (e: StoredEvent) => boolean;
  structuredIds: boolean;
  call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>;
}

const empty = () => new shared.Empty();

function uuidMessage(id: string, structured: boolean): shared.UUID {
  const uuid = new shared.UUID();
  if (!structured) return uuid.setString(id);
  const hex = id.replace(/-/g, '');
  const s = new shared.UUID.Structured();
  s.setMostSignificantBits(BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`)).toString());
  s.setLeastSignificantBits(BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`)).toString());
  return uuid.setStructured(s);
}

function uuidString(uuid: shared.UUID | undefined): string {
  if (!uuid) throw new Error('event without id');
  if (!uuid.hasStructured()) return uuid.getString();
  const s = uuid.getStructured()!;
  const hex = (v: string) => BigInt.asUintN(64, BigInt(v)).toString(16).padStart(16, '0');
  const h = hex(s.getMostSignificantBits()) + hex(s.getLeastSignificantBits());
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function streamName(identifier: shared.StreamIdentifier | undefined): string {
  return Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');
}

/** A gRPC error the client maps to its typed errors by the "exception" trailer, as the server sends them. */
function rpcError(code: grpc.status, exception: string, details: string, group: string, reason?: string): grpc.ServiceError {
  const metadata = new grpc.Metadata();
  metadata.set('exception', exception);
  metadata.set('stream-name', '$all');
  metadata.set('group-name', group);
  if (reason !== undefined) metadata.set('reason', reason);
  return Object.assign(new Error(details), { code, details, metadata });
}

interface FilterExpression {
  getRegex(): string;
  getPrefixList(): string[];
}

/** A $all filter (regex and/or prefixes) on stream names or event types. */
function expressionFilter(onStream: boolean, expression: FilterExpression): (e: StoredEvent) => boolean {
  const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : null;
  const prefixes = expression.getPrefixList();
  return (e) => {
    const subject = onStream ? e.stream : e.type;
    if (regex && !regex.test(subject)) return false;
    return prefixes.length === 0 || prefixes.some((p) => subject.startsWith(p));
  };
}

/** Fills a RecordedEvent message of either service (Streams and PersistentSubscriptions have the same fields). */
function fillRecord<R extends pb.ReadResp.ReadEvent.RecordedEvent | ps.ReadResp.ReadEvent.RecordedEvent>(r: R, e: StoredEvent, structuredIds: boolean): R {
  const m = r as any;
  m.setId(uuidMessage(e.id, structuredIds))
    .setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(e.stream, 'utf8')))
    .setStreamRevision(String(e.revision))
    .setPreparePosition(String(e.position))
    .setCommitPosition(String(e.position))
    .setData(e.data)
    .setCustomMetadata(e.metadata);
  m.getMetadataMap().set('type', e.type).set('content-type', e.contentType).set('created', String(e.created));
  return r;
}

/** The methods the stand-in serves, with the features the server advertises for them (ServerFeatures.cs). */
const SUPPORTED: [service: string, method: string, features: string[]][] = [
  ['event_store.client.streams.Streams', 'Read', ['position', 'events']],
  ['event_store.client.streams.Streams', 'Append', []],
  ['event_store.client.streams.Streams', 'BatchAppend', []],
  ['event_store.client.streams.Streams', 'Tombstone', []],
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'Create', ['stream', 'all']],
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'Read', ['stream', 'all']],
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'GetInfo', ['stream', 'all']],
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'Delete', ['stream', 'all']],
  // The client asks for ReplayParked with feature "all" before replaying a group on $all.
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'ReplayParked', ['stream', 'all']],
];

export class EsdbStandIn {
  private server = new grpc.Server();
  private readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly live = new Set<Live>();
  private nextPosition = 0n;
  /** The node's cache of recently committed event ids (IndexWriter._committedEvents): in memory, emptied by a restart. */
  private readonly recentIds = new Map<string, StoredEvent>();
  private notReadyUntil = 0;
  private busyUntil = 0;
  private readonly refusals: Refusal[] = [];
  /** Streams deleted for good (Tombstone): reads and appends answer StreamDeleted. */
  private readonly tombstoned = new Set<string>();
  /** Appends answered, by the call they came through (tests check which path the client took). */
  readonly appendsServed = { append: 0, batchAppend: 0 };
  readonly persistent = new PersistentGroups(this);
  port = 0;

  constructor(private readonly options: EsdbStandInOptions = {}) {}

  get url(): string {
    return this.options.secured ? this.urlAs() : `esdb://127.0.0.1:${this.port}?tls=false`;
  }

  /** The connection string of a secured node, as a user (none: anonymous). */
  urlAs(user?: string, password?: string): string {
    const auth = user ? `${encodeURIComponent(user)}:${encodeURIComponent(password ?? '')}@` : '';
    return `esdb://${auth}127.0.0.1:${this.port}?tls=true&tlsCAFile=${encodeURIComponent(this.options.secured!.caFile)}`;
  }

  /** Every event held, system events included (tests inspect it). */
  get events(): readonly StoredEvent[] {
    return this.log;
  }

  /** Every call but ServerFeatures answers "Server Is Not Ready" for the next ms, as a node does while it starts or elects. */
  notReady(ms: number): void {
    this.notReadyUntil = Date.now() + ms;
  }

  /** Every call but ServerFeatures answers "Server Is Busy" for the next ms, as an overloaded node does. */
  busy(ms: number): void {
    this.busyUntil = Date.now() + ms;
  }

  /** The next `times` appends (either path) meet this refusal instead of the usual answer. */
  refuseAppends(refusal: Refusal, times = 1): void {
    for (let i = 0; i < times; i++) this.refusals.push(refusal);
  }

  /** Starts serving; with notReadyMs, answering "not ready" that long first, as a node that just started does. */
  async start(port = 0, { notReadyMs = 0 }: { notReadyMs?: number } = {}): Promise<this> {
    if (notReadyMs > 0) this.notReady(notReadyMs);
    // A real log never starts empty: the server writes system events first.
    if (this.log.length === 0) {
      this.write('$epoch-information', [{ id: '00000000-0000-4000-8000-000000000001', type: '$epoch-information', contentType: 'application/json', data: Buffer.from('{}'), metadata: new Uint8Array() }]);
    }
    this.server = new grpc.Server();
    this.server.addService(streamsGrpc.StreamsService as any, {
      append: (call: any, callback: any) => this.append(call, callback),
      tombstone: (call: any, callback: any) => this.tombstone(call, callback),
      batchAppend: (call: any) => this.batchAppend(call),
      read: (call: any) => this.read(call),
    });
    this.server.addService(psGrpc.PersistentSubscriptionsService as any, {
      create: (call: any, callback: any) => this.persistent.create(call, callback),
      read: (call: any) => this.persistent.read(call),
      getInfo: (call: any, callback: any) => this.persistent.getInfo(call, callback),
      delete: (call: any, callback: any) => this.persistent.delete(call, callback),
      replayParked: (call: any, callback: any) => this.persistent.replayParked(call, callback),
    });
    this.server.addService(featuresGrpc.ServerFeaturesService as any, {
      getSupportedMethods: (_call: any, callback: any) => callback(null, this.supportedMethods()),
    });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`127.0.0.1:${port}`, this.options.secured ? grpc.ServerCredentials.createSsl(null, [{ private_key: this.options.secured.key, cert_chain: this.options.secured.cert }]) : grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    return this;
  }

  /** Ends every open subscription (persistent ones too) with UNAVAILABLE, as a lost connection or a restarting node would. */
  dropSubscriptions(): void {
    for (const sub of [...this.live]) {
      this.live.delete(sub);
      sub.call.emit('error', Object.assign(new Error('connection dropped by the stand-in'), { code: grpc.status.UNAVAILABLE }));
    }
    this.persistent.dropConsumers();
  }

  private supportedMethods(): features.SupportedMethods {
    const served = SUPPORTED.filter(([, method]) => method !== 'BatchAppend' || this.options.batchAppend !== false);
    const methods = served.map(([service, method, list]) =>
      new features.SupportedMethod().setServiceName(service.toLowerCase()).setMethodName(method.toLowerCase()).setFeaturesList(list),
    );
    return new features.SupportedMethods().setEventStoreServerVersion('25.0.0').setMethodsList(methods);
  }

  /**
   * A node restart: every connection is cut, the log is kept, the cache of recent event ids
   * is emptied, and the same port answers again, "not ready" for notReadyMs first.
   */
  async restart(downMs = 0, { notReadyMs = RESTART_NOT_READY_MS }: { notReadyMs?: number } = {}): Promise<void> {
    await this.stop();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start(this.port, { notReadyMs });
  }

  /** The node goes down: connections cut, what it held only in memory (recent event ids) gone. */
  async stop(): Promise<void> {
    this.recentIds.clear();
    this.dropSubscriptions();
    this.persistent.stopClock();
    this.persistent.reload();
    this.server.forceShutdown();
  }

  /** An event by stream and revision (a link's target), if it exists. */
  eventAt(stream: string, revision: number): StoredEvent | undefined {
    return this.streams.get(stream)?.[revision];
  }

  /** Every event of a stream ever written, the truncated ones included (see truncateBefore). */
  streamEvents(stream: string): readonly StoredEvent[] {
    return this.streams.get(stream) ?? [];
  }

  /**
   * The stream's "$tb" (truncate before), from the newest event of its metastream "$$<stream>":
   * reads skip the events before it, as the server's index reader does (0 when none is set).
   */
  truncateBefore(stream: string): number {
    const meta = this.streams.get(`$$${stream}`);
    const last = meta?.[meta.length - 1];
    if (!last) return 0;
    const tb = JSON.parse(Buffer.from(last.data).toString('utf8'))?.$tb;
    return typeof tb === 'number' ? tb : 0;
  }

  /** Appends (the server's checks having passed) and wakes the live and persistent subscriptions. */
  write(stream: string, events: NewStored[]): StoredEvent[] {
    const existing = this.streams.get(stream) ?? [];
    const written = events.map((e, i) => {
      this.nextPosition += 100n + BigInt(e.data.length);
      return { ...e, stream, revision: existing.length + i, created: BigInt(Date.now()) * 10000n, position: this.nextPosition };
    });
    this.streams.set(stream, [...existing, ...written]);
    this.log.push(...written);
    for (const e of written) this.recentIds.set(e.id, e);
    for (const sub of this.live) this.deliver(sub);
    this.persistent.pumpAll();
    return written;
  }

  private deliver(sub: Live): void {
    for (const e of this.log) {
      if (e.position <= sub.after) continue;
      sub.after = e.position;
      if (sub.filter(e)) sub.call.write(this.eventResponse(e, sub.structuredIds));
    }
  }

  /**
   * The refusal a call meets now, if any: a node starting or restarting is not ready, a
   * loaded one too busy (ClusterVNodeController's NotHandled). Every client call but
   * ServerFeatures meets it.
   */
  private unready(): 'not-ready' | 'busy' | null {
    const now = Date.now();
    if (now < this.notReadyUntil) return 'not-ready';
    if (now < this.busyUntil) return 'busy';
    return null;
  }

  /** Not ready (or busy) as the plain calls answer it: UNAVAILABLE (RpcExceptions.ServerNotReady, ServerBusy). */
  unreadyError(): grpc.ServiceError | null {
    const state = this.unready();
    if (!state) return null;
    const details = state === 'not-ready' ? 'Server Is Not Ready' : 'Server Is Too Busy';
    return Object.assign(new Error(details), { code: grpc.status.UNAVAILABLE, details, metadata: new grpc.Metadata() });
  }

  /** NotLeader with the leader's endpoint (RpcExceptions.LeaderInfo): here the stand-in itself, which the client reconnects to. */
  private notLeaderError(): grpc.ServiceError {
    const metadata = new grpc.Metadata();
    metadata.set('exception', 'not-leader');
    metadata.set('leader-endpoint-host', '127.0.0.1');
    metadata.set('leader-endpoint-port', String(this.port));
    return Object.assign(new Error('Leader info available'), { code: grpc.status.NOT_FOUND, details: 'Leader info available', metadata });
  }

  /** The next appends' fate when a test set one (refuseAppends), else none. */
  private nextRefusal(): Refusal | null {
    return this.refusals.shift() ?? null;
  }

  private append(call: grpc.ServerReadableStream<pb.AppendReq, pb.AppendResp>, callback: grpc.sendUnaryData<pb.AppendResp>): void {
    let options: pb.AppendReq.Options | undefined;
    const proposed: NewStored[] = [];
    call.on('data', (req: pb.AppendReq) => {
      if (req.hasOptions()) options = req.getOptions();
      else if (req.hasProposedMessage()) proposed.push(proposedEvent(req.getProposedMessage()!));
    });
    call.on('error', () => undefined);
    call.on('end', () => {
      if (!options) return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'append without options' });
      const unready = this.unreadyError();
      if (unready) return callback(unready);
      const stream = streamName(options.getStreamIdentifier());
      const denied = this.authorize(call.metadata, EsdbStandIn.streamNeeds(stream));
      if (denied) return callback(denied);
      // RpcExceptions.MaxAppendSizeExceeded, StreamDeleted: refused before anything is written.
      if (this.appendSize(proposed) > this.maxAppendSize) return callback(this.maxAppendSizeError());
      const refusal = this.nextRefusal();
      if (refusal === 'not-leader') return callback(this.notLeaderError());
      if (this.tombstoned.has(stream)) return callback(this.streamDeletedError(stream));
      const C = pb.AppendReq.Options.ExpectedStreamRevisionCase;
      const c = options.getExpectedStreamRevisionCase();
      const expected: Expected = c === C.REVISION ? Number(options.getRevision()) : c === C.NO_STREAM ? 'no_stream' : c === C.STREAM_EXISTS ? 'stream_exists' : 'any';
      this.appendsServed.append++;
      const outcome = this.appendNow(stream, expected, proposed, refusal);
      if (outcome.kind === 'crashed') return;
      // A commit timeout (RpcExceptions.Timeout): ABORTED without status details, which the client reports as an unknown error.
      if (outcome.kind === 'timeout') return callback({ code: grpc.status.ABORTED, details: 'Operation timed out: Commit timed out.', metadata: new grpc.Metadata() });
      const resp = new pb.AppendResp();
      if (outcome.kind === 'wrong') {
        const wrong = new pb.AppendResp.WrongExpectedVersion();
        if (outcome.current >= 0) wrong.setCurrentRevision(String(outcome.current));
        else wrong.setCurrentNoStream(empty());
        if (typeof expected === 'number') wrong.setExpectedRevision(String(expected));
        else if (expected === 'no_stream') wrong.setExpectedNoStream(empty());
        else if (expected === 'stream_exists') wrong.setExpectedStreamExists(empty());
        else wrong.setExpectedAny(empty());
        return callback(null, resp.setWrongExpectedVersion(wrong));
      }
      if (!outcome.last) {
        const success = new pb.AppendResp.Success().setNoPosition(empty());
        return callback(null, resp.setSuccess(outcome.current >= 0 ? success.setCurrentRevision(String(outcome.current)) : success.setNoStream(empty())));
      }
      const position = new pb.AppendResp.Position().setCommitPosition(String(outcome.last.position)).setPreparePosition(String(outcome.last.position));
      callback(null, resp.setSuccess(new pb.AppendResp.Success().setCurrentRevision(String(outcome.last.revision)).setPosition(position)));
    });
  }

  /**
   * BatchAppend (Streams.BatchAppend.cs), one call the client shares between all its
   * appends: each append is a correlation id, its options in the first request, events in
   * one or more, the last one final; each is answered on its own, in the order they finish.
   * Refusals come as a google.rpc.Status in the answer: WrongExpectedVersion, Timeout,
   * AccessDenied, StreamDeleted with their typed details; not ready and busy with an empty
   * detail and only a message ("Server Is Not Ready", "Server Is Busy"), which the client
   * cannot recognise. NotLeader ends the whole call with the leader's endpoint (the server
   * throws it out of the append's callback), failing every append pending on it.
   */
  private batchAppend(call: grpc.ServerDuplexStream<pb.BatchAppendReq, pb.BatchAppendResp>): void {
    const pending = new Map<string, { options: pb.BatchAppendReq.Options; events: NewStored[] }>();
    let ended = false;
    const answer = (correlation: shared.UUID, stream: string, fill: (r: pb.BatchAppendResp) => void) => {
      if (ended) return;
      const resp = new pb.BatchAppendResp().setCorrelationId(correlation).setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(stream, 'utf8')));
      fill(resp);
      call.write(resp);
    };
    call.on('data', (req: pb.BatchAppendReq) => {
      const correlation = req.getCorrelationId()!;
      const id = uuidString(correlation);
      if (req.hasOptions()) pending.set(id, { options: req.getOptions()!, events: [] });
      const write = pending.get(id);
      if (!write) return;
      write.events.push(...req.getProposedMessagesList().map(proposedEvent));
      if (!req.getIsFinal()) return;
      pending.delete(id);
      const options = write.options;
      const stream = streamName(options.getStreamIdentifier());
      const deadline = options.hasDeadline21100() ? options.getDeadline21100()!.toDate().getTime() : Infinity;
      if (deadline <= Date.now()) return answer(correlation, stream, (r) => r.setError(status(4, 'Timeout', 'event_store.client.Timeout', new shared.Timeout())));
      const unready = this.unready();
      if (unready) {
        const message = unready === 'not-ready' ? 'Server Is Not Ready' : 'Server Is Busy';
        return answer(correlation, stream, (r) => r.setError(status(0, message, 'google.protobuf.Empty', empty())));
      }
      if (this.authorize(call.metadata, EsdbStandIn.streamNeeds(stream))) {
        return answer(correlation, stream, (r) => r.setError(status(7, 'Access Denied', 'event_store.client.AccessDenied', new shared.AccessDenied())));
      }
      if (this.appendSize(write.events) > this.maxAppendSize) {
        return answer(correlation, stream, (r) => r.setError(status(3, 'Maximum Append Size Exceeded', 'event_store.client.MaximumAppendSizeExceeded', new shared.MaximumAppendSizeExceeded().setMaxappendsize(this.maxAppendSize))));
      }
      const refusal = this.nextRefusal();
      if (refusal === 'not-leader') {
        ended = true;
        return call.emit('error', this.notLeaderError());
      }
      if (this.tombstoned.has(stream)) {
        return answer(correlation, stream, (r) => r.setError(status(9, 'Stream Deleted', 'event_store.client.StreamDeleted', new shared.StreamDeleted().setStreamIdentifier(options.getStreamIdentifier()))));
      }
      const C = pb.BatchAppendReq.Options.ExpectedStreamPositionCase;
      const c = options.getExpectedStreamPositionCase();
      const expected: Expected = c === C.STREAM_POSITION ? Number(options.getStreamPosition()) : c === C.NO_STREAM ? 'no_stream' : c === C.STREAM_EXISTS ? 'stream_exists' : 'any';
      this.appendsServed.batchAppend++;
      const outcome = this.appendNow(stream, expected, write.events, refusal);
      if (outcome.kind === 'crashed') return;
      answer(correlation, stream, (r) => {
        if (outcome.kind === 'timeout') return r.setError(status(4, 'Timeout', 'event_store.client.Timeout', new shared.Timeout()));
        if (outcome.kind === 'wrong') {
          const wrong = new shared.WrongExpectedVersion();
          if (outcome.current >= 0) wrong.setCurrentStreamRevision(String(outcome.current));
          else wrong.setCurrentNoStream(empty());
          if (typeof expected === 'number') wrong.setExpectedStreamPosition(String(expected));
          else if (expected === 'no_stream') wrong.setExpectedNoStream(empty());
          else if (expected === 'stream_exists') wrong.setExpectedStreamExists(empty());
          else wrong.setExpectedAny(empty());
          return r.setError(status(6, 'WrongExpectedVersion', 'event_store.client.WrongExpectedVersion', wrong));
        }
        const success = new pb.BatchAppendResp.Success();
        if (outcome.last) success.setCurrentRevision(String(outcome.last.revision)).setPosition(new shared.AllStreamPosition().setCommitPosition(String(outcome.last.position)).setPreparePosition(String(outcome.last.position)));
        else if (outcome.current >= 0) success.setCurrentRevision(String(outcome.current)).setNoPosition(empty());
        else success.setNoStream(empty()).setNoPosition(empty());
        return r.setSuccess(success);
      });
    });
    call.on('error', () => undefined);
    call.on('end', () => {
      if (ended) return;
      ended = true;
      call.end();
    });
  }

  /**
   * A secured node's access check (none when not secured), by the call's basic
   * credentials: every call needs a known user; a system stream ("$"-prefixed: a group's
   * parked and checkpoint streams, metadata) is read or written by $admins only, as the
   * server's default system-stream ACL and the parked stream's own $acl have it; creating,
   * deleting a persistent group and replaying its parked events need $ops or $admins
   * (the server's authorization policy). Reading $all and the service's streams is left to
   * every user: an operator grants the service's user that, or it could not work at all.
   */
  authorize(metadata: grpc.Metadata, need: 'user' | 'ops' | 'admins'): grpc.ServiceError | null {
    const secured = this.options.secured;
    if (!secured) return null;
    const header = String(metadata.get('authorization')[0] ?? '');
    const [user, password] = Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8').split(':');
    const known = secured.users[user];
    const roles = known && known.password === password ? known.roles : null;
    const allowed = roles !== null && (need === 'user' || roles.includes('$admins') || (need === 'ops' && roles.includes('$ops')));
    return allowed ? null : streamError(grpc.status.PERMISSION_DENIED, 'access-denied', 'Access Denied', {});
  }

  /** What reading or writing a stream needs on a secured node. */
  static streamNeeds(stream: string): 'user' | 'admins' {
    return stream.startsWith('$') ? 'admins' : 'user';
  }

  private get maxAppendSize(): number {
    return this.options.maxAppendSize ?? MAX_APPEND_SIZE;
  }

  private appendSize(events: NewStored[]): number {
    return events.reduce((n, e) => n + sizeOnDisk(e), 0);
  }

  private maxAppendSizeError(): grpc.ServiceError {
    return streamError(grpc.status.INVALID_ARGUMENT, 'maximum-append-size-exceeded', `Maximum Append Size of ${this.maxAppendSize} Exceeded.`, { 'maximum-append-size': String(this.maxAppendSize) });
  }

  private streamDeletedError(stream: string): grpc.ServiceError {
    return streamError(grpc.status.FAILED_PRECONDITION, 'stream-deleted', `Event stream '${stream}' is deleted.`, { 'stream-name': stream });
  }

  /**
   * Tombstone (a hard delete): the stream is gone for good, under its name too. A
   * "$streamDeleted" record goes to the log (readers of $all see it, at the stream's name);
   * reads of the stream and appends to it answer StreamDeleted from then on, as does a
   * second tombstone. The expected version is checked as for an append.
   */
  private tombstone(call: grpc.ServerUnaryCall<pb.TombstoneReq, pb.TombstoneResp>, callback: grpc.sendUnaryData<pb.TombstoneResp>): void {
    const unready = this.unreadyError();
    if (unready) return callback(unready);
    const options = call.request.getOptions()!;
    const stream = streamName(options.getStreamIdentifier());
    const denied = this.authorize(call.metadata, EsdbStandIn.streamNeeds(stream));
    if (denied) return callback(denied);
    if (this.tombstoned.has(stream)) return callback(this.streamDeletedError(stream));
    const current = (this.streams.get(stream)?.length ?? 0) - 1;
    const wrong =
      (options.hasRevision() && Number(options.getRevision()) !== current) || (options.hasNoStream() && current >= 0) || (options.hasStreamExists() && current < 0);
    if (wrong) return callback(streamError(grpc.status.FAILED_PRECONDITION, 'wrong-expected-version', 'Wrong expected version.', { 'stream-name': stream, 'actual-version': String(current), 'expected-version': options.hasRevision() ? options.getRevision() : '-2' }));
    this.tombstoned.add(stream);
    this.nextPosition += 100n;
    const record: StoredEvent = { id: randomUUID(), stream, revision: Number.MAX_SAFE_INTEGER, type: '$streamDeleted', contentType: 'application/octet-stream', data: new Uint8Array(), metadata: new Uint8Array(), created: BigInt(Date.now()) * 10000n, position: this.nextPosition };
    this.log.push(record);
    for (const sub of this.live) this.deliver(sub);
    const position = new pb.TombstoneResp.Position().setCommitPosition(String(record.position)).setPreparePosition(String(record.position));
    callback(null, new pb.TombstoneResp().setPosition(position));
  }

  /**
   * The server's commit check (IndexWriter.CheckCommit), then the write. Idempotence
   * depends on the expected version, as there:
   * - any / stream_exists: the ids are looked up in the node's cache of recently committed
   *   event ids only (in memory, emptied by a restart): all of them there, in this stream,
   *   is the earlier result again; the first not there is a new write (a second copy, if
   *   it was written before the restart); some there and some not, WrongExpectedVersion;
   * - an exact revision (no_stream is -1): behind the stream's end, the events after that
   *   revision are compared by id with the index (durable): the same ids are the earlier
   *   result again, any other WrongExpectedVersion; ahead of it, WrongExpectedVersion;
   *   equal to it, a new write, even of ids written elsewhere in the stream before.
   */
  private appendNow(stream: string, expected: Expected, events: NewStored[], refusal: Refusal | null): AppendOutcome {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length - 1;
    const decision = this.commitCheck(stream, existing, expected, events.map((e) => e.id));
    if (decision.kind === 'wrong') return { kind: 'wrong', current };
    if (decision.kind === 'idempotent') return refusal === 'timeout' ? { kind: 'timeout' } : { kind: 'success', last: decision.last, current };
    // A timeout before the write leaves nothing; a commit timeout ("timeout-after-write") is answered after it.
    if (refusal === 'timeout') return { kind: 'timeout' };
    if (events.length === 0) return { kind: 'success', last: null, current };
    const written = this.write(stream, events);
    if (refusal === 'timeout-after-write') return { kind: 'timeout' };
    if (refusal === 'crash-after-write') {
      void this.restart();
      return { kind: 'crashed' };
    }
    return { kind: 'success', last: written[written.length - 1], current };
  }

  private commitCheck(stream: string, existing: StoredEvent[], expected: Expected, ids: string[]): { kind: 'ok' | 'wrong' } | { kind: 'idempotent'; last: StoredEvent } {
    const current = existing.length - 1;
    if (expected === 'stream_exists' && current < 0) return { kind: 'wrong' };
    if (expected === 'any' || expected === 'stream_exists') {
      if (ids.length === 0) return { kind: 'ok' };
      let last: StoredEvent | undefined;
      for (const [i, id] of ids.entries()) {
        const known = this.recentIds.get(id);
        // Not the first: CorruptedIdempotency, answered as WrongExpectedVersion.
        if (!known || known.stream !== stream) return { kind: i === 0 ? 'ok' : 'wrong' };
        last = known;
      }
      return { kind: 'idempotent', last: last! };
    }
    const revision = expected === 'no_stream' ? -1 : expected;
    if (revision < current) {
      if (ids.length === 0) return { kind: 'wrong' };
      for (const [i, id] of ids.entries()) if (existing[revision + 1 + i]?.id !== id) return { kind: 'wrong' };
      return { kind: 'idempotent', last: existing[revision + ids.length] };
    }
    return { kind: revision > current ? 'wrong' : 'ok' };
  }

  private eventResponse(e: StoredEvent, structuredIds: boolean, resolveLinks = false): pb.ReadResp {
    const read = new pb.ReadResp.ReadEvent().setCommitPosition(String(e.position));
    const record = (x: StoredEvent) => fillRecord(new pb.ReadResp.ReadEvent.RecordedEvent(), x, structuredIds);
    if (resolveLinks && e.type === '$>') {
      // A link resolves to its target ("<revision>@<stream>"); a dangling one comes as the link alone.
      const target = this.linkTarget(e);
      if (target) read.setEvent(record(target));
      read.setLink(record(e));
    } else {
      read.setEvent(record(e));
    }
    return new pb.ReadResp().setEvent(read);
  }

  linkTarget(link: StoredEvent): StoredEvent | undefined {
    const match = /^(\d+)@(.+)$/.exec(Buffer.from(link.data).toString('utf8'));
    return match ? this.eventAt(match[2], Number(match[1])) : undefined;
  }

  private read(call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>): void {
    const unready = this.unreadyError();
    if (unready) return void call.emit('error', unready);
    const options = call.request.getOptions();
    const denied = this.authorize(call.metadata, options?.hasStream() ? EsdbStandIn.streamNeeds(streamName(options.getStream()!.getStreamIdentifier())) : 'user');
    if (denied) return void call.emit('error', denied);
    try {
      this.readNow(call);
    } catch (error: any) {
      call.emit('error', Object.assign(new Error(error?.message ?? String(error)), { code: grpc.status.INVALID_ARGUMENT }));
    }
  }

  private readNow(call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>): void {
    const options = call.request.getOptions();
    if (!options) throw new Error('read without options');
    const backwards = options.getReadDirection() === pb.ReadReq.Options.ReadDirection.BACKWARDS;
    const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
    const count = options.hasCount() ? Number(BigInt(options.getCount())) : Infinity;

    if (options.hasStream()) {
      if (options.hasSubscription()) throw new Error('the stand-in subscribes to $all only');
      const stream = options.getStream()!;
      const name = streamName(stream.getStreamIdentifier());
      if (this.tombstoned.has(name)) return void call.emit('error', this.streamDeletedError(name));
      const events = this.streams.get(name);
      if (!events) {
        call.write(new pb.ReadResp().setStreamNotFound(new pb.ReadResp.StreamNotFound().setStreamIdentifier(stream.getStreamIdentifier())));
        return void call.end();
      }
      // Events before the stream's $tb are gone to readers; a read from before it starts at it.
      const resolveLinks = options.getResolveLinks();
      const tb = this.truncateBefore(name);
      if (backwards) {
        // Backwards from a revision (inclusive) or the end, newest first, down to the $tb.
        const top = stream.hasRevision() ? Math.min(Number(stream.getRevision()), events.length - 1) : events.length - 1;
        const picked = [];
        for (let r = top; r >= tb && picked.length < count; r--) picked.push(events[r]);
        for (const e of picked) call.write(this.eventResponse(e, structuredIds, resolveLinks));
        return void call.end();
      }
      const from = Math.max(tb, stream.hasRevision() ? Number(stream.getRevision()) : stream.hasEnd() ? events.length : 0);
      for (const e of events.slice(from, from + Math.min(count, events.length))) call.write(this.eventResponse(e, structuredIds, resolveLinks));
      return void call.end();
    }

    const all = options.getAll()!;
    const filter = this.filterOf(options);
    const after = all.hasPosition() ? BigInt(all.getPosition()!.getCommitPosition()) : all.hasEnd() ? this.nextPosition : -1n;

    if (!options.hasSubscription()) {
      // A read from a position includes the event at it.
      let sent = 0;
      for (const e of backwards ? [...this.log].reverse() : this.log) {
        if (sent >= count) break;
        // Backwards from a position starts before it, as the server's backward read of $all does.
        if ((!backwards && e.position < after) || (backwards && all.hasPosition() && e.position >= after) || !filter(e)) continue;
        call.write(this.eventResponse(e, structuredIds));
        sent++;
      }
      return void call.end();
    }

    // A subscription from a position starts after it: confirm, catch up, say so, then go live.
    call.write(new pb.ReadResp().setConfirmation(new pb.ReadResp.SubscriptionConfirmation().setSubscriptionId(`standin-${Date.now()}`)));
    const sub: Live = { after: all.hasStart() ? -1n : after, filter, structuredIds, call };
    this.deliver(sub);
    const head = new pb.ReadResp.Position().setCommitPosition(String(sub.after)).setPreparePosition(String(sub.after));
    call.write(new pb.ReadResp().setCaughtUp(new pb.ReadResp.CaughtUp().setPosition(head)));
    this.live.add(sub);
    call.on('cancelled', () => this.live.delete(sub));
    call.on('close', () => this.live.delete(sub));
  }

  private filterOf(options: pb.ReadReq.Options): (e: StoredEvent) => boolean {
    if (!options.hasFilter()) return () => true;
    const f = options.getFilter()!;
    return expressionFilter(f.hasStreamIdentifier(), f.hasStreamIdentifier() ? f.getStreamIdentifier()! : f.getEventType()!);
  }
}

interface Delivery {
  event: StoredEvent;
  retryCount: number;
  /** The group's sequence number of an event read from the log (none for a replayed parked event). */
  seq?: number;
  /** The log index after the event (where the group resumes when it is checkpointed at it). */
  cursor?: number;
  /**
   * A replayed parked event's link in the parked stream, which it is handed out with (the
   * server read it from there, resolving the link): the consumer answers by the link's id.
   */
  link?: StoredEvent;
}

/** What a consumer acknowledges or refuses a delivery by: the link's id for a replayed parked event, as the client sends it. */
const answerId = (d: Delivery) => (d.link ?? d.event).id;

interface Consumer {
  call: grpc.ServerDuplexStream<ps.ReadReq, ps.ReadResp>;
  bufferSize: number;
  structuredIds: boolean;
  /** Unacknowledged deliveries by event id, with the time their message timeout ends. */
  inFlight: Map<string, { delivery: Delivery; deadline: number }>;
}

interface Group {
  name: string;
  filter: (e: StoredEvent) => boolean;
  /** As GetInfo reports it: "C:<commit>/P:<prepare>", "C:0/P:0" (start) or "C:-1/P:-1" (end). */
  startFrom: string;
  maxRetryCount: number;
  messageTimeoutMs: number;
  /** Index in the log of the next event not yet considered. */
  cursor: number;
  /** Index in the log of its first event (its start). */
  startIndex: number;
  retries: Delivery[];
  consumers: Consumer[];
  nextConsumer: number;
  /** A replay of its parked events has started and not yet truncated the parked stream. */
  replaying: boolean;
  /** Events of the group read from the log so far (its sequence numbers: the first is 1). */
  readSeq: number;
  /** The server's checkpoint settings (checkPointAfter, min and max checkpoint counts). */
  checkPointAfterMs: number;
  minCheckPointCount: number;
  maxCheckPointCount: number;
  /** The last checkpoint written: the sequence number and log index after which the group resumes on a restart. */
  checkpointed: { seq: number; cursor: number; position: string } | null;
  lastCheckpointAt: number;
}

/** Where the server parks a $all group's events (PersistentSubscriptionMessageParker). */
const parkedStreamOf = (group: string) => `$persistentsubscription-$all::${group}-parked`;

/**
 * How often message timeouts are checked: the server's persistent subscription service
 * looks at them once a second (its TimerTick), so an event whose timeout passed is handed
 * out again up to a second later.
 */
const CLOCK_MS = 1000;
const NAK = ps.ReadReq.Nack.Action;

/** The PersistentSubscriptions service of the stand-in: groups on $all only (see the header for the semantics kept). */
class PersistentGroups {
  private readonly groups = new Map<string, Group>();
  private clock: NodeJS.Timeout | null = null;

  constructor(private readonly host: EsdbStandIn) {}

  /** Parked events of a group not yet replayed: its parked stream's links from its $tb on, as GetInfo's ParkedMessageCount (tests inspect it). */
  parkedCount(group: string): number {
    const stream = parkedStreamOf(group);
    return Math.max(0, this.host.streamEvents(stream).length - this.host.truncateBefore(stream));
  }

  create(call: grpc.ServerUnaryCall<ps.CreateReq, ps.CreateResp>, callback: grpc.sendUnaryData<ps.CreateResp>): void {
    const unready = this.host.unreadyError() ?? this.host.authorize(call.metadata, 'ops');
    if (unready) return callback(unready);
    const options = call.request.getOptions();
    if (!options?.hasAll()) return callback({ code: grpc.status.UNIMPLEMENTED, details: 'the stand-in has persistent subscriptions to $all only' });
    const name = options.getGroupName();
    if (this.groups.has(name)) return callback(rpcError(grpc.status.ALREADY_EXISTS, 'persistent-subscription-exists', `Subscription group ${name} on stream $all exists.`, name));
    const all = options.getAll()!;
    const settings = options.getSettings()!;
    const log = this.host.events;
    let cursor = 0;
    let startFrom = 'C:0/P:0';
    if (all.hasPosition()) {
      // Inclusive, as the server's: the group is handed the event at its start position too.
      const commit = BigInt(all.getPosition()!.getCommitPosition());
      // Past the last indexed position: the server refuses it (PersistentSubscriptionFailed, INTERNAL).
      const last = log.length ? log[log.length - 1].position : 0n;
      if (commit > last) {
        const reason = `The given start position C:${commit}/P:${all.getPosition()!.getPreparePosition()} is past the end of $all (last indexed position ${last}).`;
        return callback(rpcError(grpc.status.INTERNAL, 'persistent-subscription-failed', `Subscription group ${name} on stream $all failed: '${reason}'`, name, reason));
      }
      const found = log.findIndex((e) => e.position >= commit);
      cursor = found < 0 ? log.length : found;
      startFrom = `C:${commit}/P:${all.getPosition()!.getPreparePosition()}`;
    } else if (all.hasEnd()) {
      cursor = log.length;
      startFrom = 'C:-1/P:-1';
    }
    const f = all.hasFilter() ? all.getFilter()! : null;
    const filter = f ? expressionFilter(f.hasStreamIdentifier(), f.hasStreamIdentifier() ? f.getStreamIdentifier()! : f.getEventType()!) : () => true;
    const messageTimeoutMs = settings.hasMessageTimeoutMs() ? settings.getMessageTimeoutMs() : Number(BigInt(settings.getMessageTimeoutTicks() || '0') / 10_000n);
    const checkPointAfterMs = settings.hasCheckpointAfterMs() ? settings.getCheckpointAfterMs() : Number(BigInt(settings.getCheckpointAfterTicks() || '0') / 10_000n);
    this.groups.set(name, {
      name, filter, startFrom, maxRetryCount: settings.getMaxRetryCount(), messageTimeoutMs, cursor, startIndex: cursor, retries: [], consumers: [], nextConsumer: 0, replaying: false,
      readSeq: 0, checkPointAfterMs, minCheckPointCount: settings.getMinCheckpointCount(), maxCheckPointCount: settings.getMaxCheckpointCount(), checkpointed: null, lastCheckpointAt: Date.now(),
    });
    this.startClock();
    callback(null, new ps.CreateResp());
  }

  /**
   * Delete: the group is gone (its consumers dropped with "does not exist", as the server
   * drops them with PersistentSubscriptionDeleted); a consumer joining again finds none.
   */
  delete(call: grpc.ServerUnaryCall<ps.DeleteReq, ps.DeleteResp>, callback: grpc.sendUnaryData<ps.DeleteResp>): void {
    const unready = this.host.unreadyError() ?? this.host.authorize(call.metadata, 'ops');
    if (unready) return callback(unready);
    const name = call.request.getOptions()?.getGroupName() ?? '';
    const group = this.groups.get(name);
    if (!group) return callback(rpcError(grpc.status.NOT_FOUND, 'persistent-subscription-does-not-exist', `Subscription group ${name} on stream $all does not exist.`, name));
    this.groups.delete(name);
    for (const consumer of group.consumers.splice(0)) {
      consumer.call.emit('error', rpcError(grpc.status.NOT_FOUND, 'persistent-subscription-does-not-exist', `Subscription group ${name} on stream $all does not exist.`, name));
    }
    callback(null, new ps.DeleteResp());
  }

  getInfo(call: grpc.ServerUnaryCall<ps.GetInfoReq, ps.GetInfoResp>, callback: grpc.sendUnaryData<ps.GetInfoResp>): void {
    const unready = this.host.unreadyError() ?? this.host.authorize(call.metadata, 'user');
    if (unready) return callback(unready);
    const name = call.request.getOptions()?.getGroupName() ?? '';
    const group = this.groups.get(name);
    if (!group) return callback(rpcError(grpc.status.NOT_FOUND, 'persistent-subscription-does-not-exist', `Subscription group ${name} on stream $all does not exist.`, name));
    const inFlight = group.consumers.reduce((n, c) => n + c.inFlight.size, 0);
    const info = new ps.SubscriptionInfo()
      .setEventSource('$all')
      .setGroupName(name)
      .setStatus('Live')
      .setStartFrom(group.startFrom)
      .setMessageTimeoutMilliseconds(group.messageTimeoutMs)
      .setMaxRetryCount(group.maxRetryCount)
      .setNamedConsumerStrategy('RoundRobin')
      .setRetryBufferCount(group.retries.length)
      .setTotalInFlightMessages(inFlight)
      .setOutstandingMessagesCount(inFlight)
      .setParkedMessageCount(String(this.parkedCount(name)))
      .setLastCheckpointedEventPosition(group.checkpointed?.position ?? '')
      .setCheckPointAfterMilliseconds(group.checkPointAfterMs)
      .setMinCheckPointCount(group.minCheckPointCount)
      .setMaxCheckPointCount(group.maxCheckPointCount)
      .setConnectionsList(group.consumers.map((c) => new ps.SubscriptionInfo.ConnectionInfo().setFrom(c.call.getPeer()).setAvailableSlots(c.bufferSize - c.inFlight.size).setInFlightMessages(c.inFlight.size)));
    callback(null, new ps.GetInfoResp().setSubscriptionInfo(info));
  }

  /**
   * ReplayParked (PersistentSubscription.RetryParkedMessages): answers once the replay has
   * started, then, as the server does after reading the parked stream, hands each parked
   * event up to stopAt (a parked stream event number, exclusive; or the whole stream) to the
   * group again as a retry with retry count 0, and truncates the parked stream before the
   * point it replayed to with a "$metadata" event carrying "$tb" on "$$<parked stream>".
   * A link whose event is gone is skipped (and truncated with the rest).
   */
  replayParked(call: grpc.ServerUnaryCall<ps.ReplayParkedReq, ps.ReplayParkedResp>, callback: grpc.sendUnaryData<ps.ReplayParkedResp>): void {
    const unready = this.host.unreadyError() ?? this.host.authorize(call.metadata, 'ops');
    if (unready) return callback(unready);
    const options = call.request.getOptions();
    if (!options?.hasAll()) return callback({ code: grpc.status.UNIMPLEMENTED, details: 'the stand-in has persistent subscriptions to $all only' });
    const name = options.getGroupName();
    const group = this.groups.get(name);
    const failed = (reason: string) => callback(rpcError(grpc.status.INTERNAL, 'persistent-subscription-failed', `Subscription group ${name} on stream $all failed: '${reason}'`, name, reason));
    const stopAt = options.hasStopAt() ? Number(options.getStopAt()) : Infinity;
    if (stopAt < 0) return failed('Cannot stop replaying parked message at a negative version.');
    if (!group) return callback(rpcError(grpc.status.NOT_FOUND, 'persistent-subscription-does-not-exist', `Subscription group ${name} on stream $all does not exist.`, name));
    if (group.replaying) return failed('A replay or truncate is already in progress.');
    group.replaying = true;
    callback(null, new ps.ReplayParkedResp());
    const stream = parkedStreamOf(name);
    // The server reads the parked stream, then hands the events out, then writes the $tb: each a step of its own.
    setImmediate(() => {
      const links = this.host.streamEvents(stream);
      const tb = this.host.truncateBefore(stream);
      const end = Math.min(stopAt, links.length);
      for (const link of links.slice(tb, Math.max(tb, end))) {
        const target = this.host.linkTarget(link);
        if (target) group.retries.push({ event: target, retryCount: 0, link });
      }
      this.pump(group);
      setImmediate(() => {
        // The $tb only ever moves forward.
        if (end > tb) {
          const metadata = { $tb: end, $acl: { $r: '$admins', $w: '$admins', $d: '$admins', $mr: '$admins', $mw: '$admins' } };
          this.host.write(`$$${stream}`, [{ id: randomUUID(), type: '$metadata', contentType: 'application/json', data: Buffer.from(JSON.stringify(metadata)), metadata: new Uint8Array() }]);
        }
        group.replaying = false;
      });
    });
  }

  /**
   * Where the group could resume now (PersistentSubscription.TryMarkCheckpoint): just
   * before the lowest event still outstanding or waiting for a retry, or after the last one
   * read when none is; as a sequence number, a log index and a position. A replayed parked
   * event holds nothing back (it is behind the group already).
   */
  private checkpointCandidate(group: Group): { seq: number; cursor: number; position: string } {
    const pending = [...group.retries, ...group.consumers.flatMap((c) => [...c.inFlight.values()].map((f) => f.delivery))].filter((d) => d.seq !== undefined);
    const lowest = pending.reduce<Delivery | null>((min, d) => (!min || d.seq! < min.seq! ? d : min), null);
    const cursor = lowest ? lowest.cursor! - 1 : group.cursor;
    const seq = lowest ? lowest.seq! - 1 : group.readSeq;
    const log = this.host.events;
    const position = cursor > 0 ? `C:${log[cursor - 1].position}/P:${log[cursor - 1].position}` : '';
    return { seq, cursor, position };
  }

  /**
   * Writes a checkpoint as the server decides it: on the once-a-second tick when at least
   * minCheckPointCount events were processed since the last one and checkPointAfter has
   * passed; on any answer when maxCheckPointCount were. Written to the group's checkpoint
   * stream ("$SubscriptionCheckpoint"), and what a restart reloads the group from.
   */
  private tryCheckpoint(group: Group, isTimeCheck: boolean): void {
    const candidate = this.checkpointCandidate(group);
    const difference = candidate.seq - (group.checkpointed?.seq ?? 0);
    if (difference <= 0 || candidate.cursor <= group.startIndex) return;
    const now = Date.now();
    const due = (isTimeCheck && difference >= group.minCheckPointCount && now - group.lastCheckpointAt >= group.checkPointAfterMs) || difference >= group.maxCheckPointCount;
    if (!due) return;
    group.checkpointed = candidate;
    group.lastCheckpointAt = now;
    this.host.write(`$persistentsubscription-$all::${group.name}-checkpoint`, [
      { id: randomUUID(), type: '$SubscriptionCheckpoint', contentType: 'application/json', data: Buffer.from(JSON.stringify(candidate.position)), metadata: new Uint8Array() },
    ]);
  }

  /**
   * A node restart: each group is loaded again from its last checkpoint, as the server
   * loads it. What was only in memory is gone: events handed out (acknowledged or not)
   * after the checkpoint are read again, as new (retry count 0), so failing events start
   * their retry counts over; parked events replayed and not yet acknowledged are lost (the
   * parked stream was truncated and the group is past them).
   */
  reload(): void {
    for (const group of this.groups.values()) {
      group.retries = [];
      group.consumers = [];
      group.nextConsumer = 0;
      group.replaying = false;
      group.cursor = group.checkpointed?.cursor ?? group.startIndex;
      group.readSeq = group.checkpointed?.seq ?? 0;
      group.lastCheckpointAt = Date.now();
    }
  }

  /** One consumer: options first, then acks and nacks; events go out as the group hands them to it. */
  read(call: grpc.ServerDuplexStream<ps.ReadReq, ps.ReadResp>): void {
    let consumer: Consumer | null = null;
    let group: Group | undefined;
    const leave = () => {
      if (!consumer || !group) return;
      const gone = consumer;
      consumer = null;
      this.removeConsumer(group, gone);
    };
    call.on('data', (req: ps.ReadReq) => {
      if (req.hasOptions()) {
        const options = req.getOptions()!;
        const name = options.getGroupName();
        const unready = this.host.unreadyError() ?? this.host.authorize(call.metadata, 'user');
        if (unready) return call.emit('error', unready);
        group = this.groups.get(name);
        if (!options.hasAll()) return call.emit('error', Object.assign(new Error('the stand-in has persistent subscriptions to $all only'), { code: grpc.status.UNIMPLEMENTED }));
        if (!group) return call.emit('error', rpcError(grpc.status.NOT_FOUND, 'persistent-subscription-does-not-exist', `Subscription group ${name} on stream $all does not exist.`, name));
        call.write(new ps.ReadResp().setSubscriptionConfirmation(new ps.ReadResp.SubscriptionConfirmation().setSubscriptionId(`$all::${name}`)));
        consumer = { call, bufferSize: Math.max(1, options.getBufferSize()), structuredIds: options.getUuidOption()?.hasStructured() ?? false, inFlight: new Map() };
        group.consumers.push(consumer);
        this.startClock(); // stopped by stop(), which a restart() keeps the groups through
        this.pump(group);
      } else if (group && consumer && req.hasAck()) {
        for (const id of req.getAck()!.getIdsList()) this.take(group, uuidString(id));
        this.tryCheckpoint(group, false);
        this.pump(group);
      } else if (group && consumer && req.hasNack()) {
        const nack = req.getNack()!;
        for (const id of nack.getIdsList()) {
          const delivery = this.take(group, uuidString(id));
          if (!delivery) continue;
          const action = nack.getAction();
          if (action === NAK.PARK) this.park(group, delivery, `Client explicitly NAK'ed message.\n${nack.getReason()}`);
          else if (action === NAK.RETRY || action === NAK.UNKNOWN) this.retryOrPark(group, delivery);
          // skip and stop: the server drops the event from its outstanding messages.
        }
        this.tryCheckpoint(group, false);
        this.pump(group);
      }
    });
    call.on('error', leave);
    call.on('cancelled', leave);
    call.on('close', leave);
    call.on('end', () => {
      leave();
      call.end();
    });
  }

  /** Every consumer's connection is cut (dropSubscriptions, stop). */
  dropConsumers(): void {
    for (const group of this.groups.values()) {
      for (const consumer of [...group.consumers]) {
        this.removeConsumer(group, consumer);
        consumer.call.emit('error', Object.assign(new Error('connection dropped by the stand-in'), { code: grpc.status.UNAVAILABLE }));
      }
    }
  }

  /** New events in the log: hand them out. */
  pumpAll(): void {
    for (const group of this.groups.values()) this.pump(group);
  }

  stopClock(): void {
    if (this.clock) clearInterval(this.clock);
    this.clock = null;
  }

  private startClock(): void {
    if (this.clock) return;
    this.clock = setInterval(() => this.tick(), CLOCK_MS);
    this.clock.unref();
  }

  /** Message timeouts: an event not answered in time is retried (or parked), as if nacked. */
  private tick(): void {
    const now = Date.now();
    for (const group of this.groups.values()) {
      for (const consumer of group.consumers) {
        for (const [id, { delivery, deadline }] of [...consumer.inFlight]) {
          if (deadline > now) continue;
          consumer.inFlight.delete(id);
          this.retryOrPark(group, delivery);
        }
      }
      this.tryCheckpoint(group, true);
      this.pump(group);
    }
  }

  private removeConsumer(group: Group, consumer: Consumer): void {
    const index = group.consumers.indexOf(consumer);
    if (index < 0) return;
    group.consumers.splice(index, 1);
    // The server's unsubscribe path retries what the consumer held without the park check.
    const lost = [...consumer.inFlight.values()].map((f) => f.delivery).sort((a, b) => (a.event.position < b.event.position ? -1 : 1));
    consumer.inFlight.clear();
    group.retries.push(...lost.map((d) => ({ ...d, retryCount: d.retryCount + 1 })));
    this.pump(group);
  }

  /** Removes an outstanding event (from whichever consumer holds it). */
  private take(group: Group, id: string): Delivery | undefined {
    for (const consumer of group.consumers) {
      const held = consumer.inFlight.get(id);
      if (!held) continue;
      consumer.inFlight.delete(id);
      return held.delivery;
    }
    return undefined;
  }

  private retryOrPark(group: Group, delivery: Delivery): void {
    if (delivery.retryCount >= group.maxRetryCount) this.park(group, delivery, `Reached retry count of ${group.maxRetryCount}`);
    else group.retries.push({ ...delivery, retryCount: delivery.retryCount + 1 });
  }

  private park(group: Group, delivery: Delivery, reason: string): void {
    const e = delivery.event;
    // The link points at the event itself, also when it came through a replay (GetLinkToFor); the number is the original event's (the link's, for a replay).
    const metadata = { added: new Date().toISOString(), reason, subscriptionEventNumber: (delivery.link ?? e).revision };
    this.host.write(parkedStreamOf(group.name), [
      { id: randomUUID(), type: '$>', contentType: 'application/octet-stream', data: Buffer.from(`${e.revision}@${e.stream}`), metadata: Buffer.from(JSON.stringify(metadata)) },
    ]);
  }

  /** Hands out retries first, then new events, round robin to consumers with room. */
  private pump(group: Group): void {
    for (;;) {
      const consumer = this.nextConsumerWithRoom(group);
      if (!consumer) return;
      const delivery = group.retries.shift() ?? this.nextNew(group);
      if (!delivery) return;
      consumer.inFlight.set(answerId(delivery), { delivery, deadline: Date.now() + group.messageTimeoutMs });
      const record = (e: StoredEvent) => fillRecord(new ps.ReadResp.ReadEvent.RecordedEvent(), e, consumer.structuredIds);
      const read = new ps.ReadResp.ReadEvent().setRetryCount(delivery.retryCount);
      if (delivery.link) {
        // As PersistentSubscriptions.Read sends a resolved link: the event and its link, both
        // at the position of the link (the resolved event's OriginalPosition), not the event's own.
        const at = delivery.link.position;
        read.setLink(record(delivery.link)).setEvent(record({ ...delivery.event, position: at })).setCommitPosition(String(at));
      } else {
        read.setEvent(record(delivery.event)).setCommitPosition(String(delivery.event.position));
      }
      consumer.call.write(new ps.ReadResp().setEvent(read));
    }
  }

  private nextConsumerWithRoom(group: Group): Consumer | undefined {
    const n = group.consumers.length;
    for (let i = 0; i < n; i++) {
      const consumer = group.consumers[(group.nextConsumer + i) % n];
      if (consumer.inFlight.size >= consumer.bufferSize) continue;
      group.nextConsumer = (group.nextConsumer + i + 1) % n;
      return consumer;
    }
    return undefined;
  }

  private nextNew(group: Group): Delivery | undefined {
    const log = this.host.events;
    while (group.cursor < log.length) {
      const e = log[group.cursor++];
      if (group.filter(e)) return { event: e, retryCount: 0, seq: ++group.readSeq, cursor: group.cursor };
    }
    return undefined;
  }
}

/**
 * Options for a secured stand-in: a throw-away certificate authority and a node
 * certificate for 127.0.0.1 made with openssl in a temporary directory (the client's TLS,
 * rustls on its read path, refuses a self-signed certificate used as its own CA), and the
 * users given.
 */
export function securedOptions(users: Record<string, { password: string; roles: string[] }>): NonNullable<EsdbStandInOptions['secured']> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esdb-standin-tls-'));
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=esdb-standin-ca');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', at('node.key'), '-out', at('node.csr'), '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(at('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', at('node.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('node.pem'), '-days', '2', '-extfile', at('ext.cnf'));
  return { cert: fs.readFileSync(at('node.pem')), key: fs.readFileSync(at('node.key')), caFile: at('ca.pem'), users };
}
