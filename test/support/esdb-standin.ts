/**
 * A wire-level stand-in for EventStoreDB (KurrentDB), for tests on machines where no
 * server can be installed: an in-process gRPC server on the service definitions the client
 * package itself ships, holding everything in memory. The real client talks to it
 * unmodified (esdb://127.0.0.1:PORT?tls=false). It speaks only what the adapter uses:
 * Append, Read of a stream (resolving links when asked), Read of $all forward (and backwards,
 * from its end or before a position) with a filter, subscriptions to $all (catch-up, then live), persistent
 * subscriptions to $all (Create, Read, GetInfo, ReplayParked) and ServerFeatures, which lists just those
 * methods, as the server does, so the client enables persistent subscriptions to $all and
 * still appends with plain Append (no BatchAppend listed). Every other method answers
 * UNIMPLEMENTED.
 *
 * Semantics kept from the server: expected-version checks answered as WrongExpectedVersion
 * (not a gRPC error), an append of event ids already at the stream's head is idempotent,
 * $all is one total order of (commit, prepare) positions, a read of $all from a position
 * includes the event at it while a subscription from a position starts after it, and the
 * log holds system events ($-prefixed streams) that readers must filter out.
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
 * Not kept: checkpoints (a group's state lives in memory and survives restart()), the
 * server's exact clock tick (timeouts are checked every 100 ms), other consumer
 * strategies, stream-sourced groups, truncation of the parked stream without a replay
 * (TruncateParked), metadata other than $tb, the parked stream's ACL (written, not checked).
 */
import { randomUUID } from 'node:crypto';
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
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'Create', ['stream', 'all']],
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'Read', ['stream', 'all']],
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'GetInfo', ['stream', 'all']],
  // The client asks for ReplayParked with feature "all" before replaying a group on $all.
  ['event_store.client.persistent_subscriptions.PersistentSubscriptions', 'ReplayParked', ['stream', 'all']],
];

export class EsdbStandIn {
  private server = new grpc.Server();
  private readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly live = new Set<Live>();
  private nextPosition = 0n;
  readonly persistent = new PersistentGroups(this);
  port = 0;

  get url(): string {
    return `esdb://127.0.0.1:${this.port}?tls=false`;
  }

  /** Every event held, system events included (tests inspect it). */
  get events(): readonly StoredEvent[] {
    return this.log;
  }

  async start(port = 0): Promise<this> {
    // A real log never starts empty: the server writes system events first.
    if (this.log.length === 0) {
      this.write('$epoch-information', [{ id: '00000000-0000-4000-8000-000000000001', type: '$epoch-information', contentType: 'application/json', data: Buffer.from('{}'), metadata: new Uint8Array() }]);
    }
    this.server = new grpc.Server();
    this.server.addService(streamsGrpc.StreamsService as any, {
      append: (call: any, callback: any) => this.append(call, callback),
      read: (call: any) => this.read(call),
    });
    this.server.addService(psGrpc.PersistentSubscriptionsService as any, {
      create: (call: any, callback: any) => this.persistent.create(call, callback),
      read: (call: any) => this.persistent.read(call),
      getInfo: (call: any, callback: any) => this.persistent.getInfo(call, callback),
      replayParked: (call: any, callback: any) => this.persistent.replayParked(call, callback),
    });
    this.server.addService(featuresGrpc.ServerFeaturesService as any, {
      getSupportedMethods: (_call: any, callback: any) => callback(null, this.supportedMethods()),
    });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
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
    const methods = SUPPORTED.map(([service, method, list]) =>
      new features.SupportedMethod().setServiceName(service.toLowerCase()).setMethodName(method.toLowerCase()).setFeaturesList(list),
    );
    return new features.SupportedMethods().setEventStoreServerVersion('25.0.0').setMethodsList(methods);
  }

  /** A node restart: every connection is cut, the log is kept, the same port answers again. */
  async restart(downMs = 0): Promise<void> {
    await this.stop();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start(this.port);
  }

  async stop(): Promise<void> {
    this.dropSubscriptions();
    this.persistent.stopClock();
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
  write(stream: string, events: Omit<StoredEvent, 'stream' | 'revision' | 'created' | 'position'>[]): StoredEvent[] {
    const existing = this.streams.get(stream) ?? [];
    const written = events.map((e, i) => {
      this.nextPosition += 100n + BigInt(e.data.length);
      return { ...e, stream, revision: existing.length + i, created: BigInt(Date.now()) * 10000n, position: this.nextPosition };
    });
    this.streams.set(stream, [...existing, ...written]);
    this.log.push(...written);
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

  private append(call: grpc.ServerReadableStream<pb.AppendReq, pb.AppendResp>, callback: grpc.sendUnaryData<pb.AppendResp>): void {
    let options: pb.AppendReq.Options | undefined;
    const proposed: pb.AppendReq.ProposedMessage[] = [];
    call.on('data', (req: pb.AppendReq) => {
      if (req.hasOptions()) options = req.getOptions();
      else if (req.hasProposedMessage()) proposed.push(req.getProposedMessage()!);
    });
    call.on('error', () => undefined);
    call.on('end', () => {
      if (!options) return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'append without options' });
      callback(null, this.appendNow(streamName(options.getStreamIdentifier()), options, proposed));
    });
  }

  private appendNow(stream: string, options: pb.AppendReq.Options, proposed: pb.AppendReq.ProposedMessage[]): pb.AppendResp {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length - 1;
    const events = proposed.map((m) => {
      const meta = m.getMetadataMap();
      return { id: uuidString(m.getId()), type: meta.get('type') ?? '', contentType: meta.get('content-type') ?? 'application/json', data: m.getData_asU8(), metadata: m.getCustomMetadata_asU8() };
    });
    const resp = new pb.AppendResp();
    // Idempotence: the same ids already written together in this stream are acknowledged
    // again with their original result, whatever the expected version now says.
    const first = existing.findIndex((e) => e.id === events[0]?.id);
    if (first >= 0 && events.every((e, i) => existing[first + i]?.id === e.id)) {
      return resp.setSuccess(this.success(existing[first + events.length - 1]));
    }
    const C = pb.AppendReq.Options.ExpectedStreamRevisionCase;
    const expectedCase = options.getExpectedStreamRevisionCase();
    const ok =
      expectedCase === C.ANY ||
      (expectedCase === C.NO_STREAM && current < 0) ||
      (expectedCase === C.STREAM_EXISTS && current >= 0) ||
      (expectedCase === C.REVISION && BigInt(options.getRevision()) === BigInt(current));
    if (!ok) {
      const wrong = new pb.AppendResp.WrongExpectedVersion();
      if (current >= 0) wrong.setCurrentRevision(String(current));
      else wrong.setCurrentNoStream(empty());
      if (expectedCase === C.REVISION) wrong.setExpectedRevision(options.getRevision());
      else if (expectedCase === C.NO_STREAM) wrong.setExpectedNoStream(empty());
      else wrong.setExpectedStreamExists(empty());
      return resp.setWrongExpectedVersion(wrong);
    }
    if (events.length === 0) {
      const success = new pb.AppendResp.Success().setNoPosition(empty());
      return resp.setSuccess(current >= 0 ? success.setCurrentRevision(String(current)) : success.setNoStream(empty()));
    }
    const written = this.write(stream, events);
    return resp.setSuccess(this.success(written[written.length - 1]));
  }

  private success(last: StoredEvent): pb.AppendResp.Success {
    const position = new pb.AppendResp.Position().setCommitPosition(String(last.position)).setPreparePosition(String(last.position));
    return new pb.AppendResp.Success().setCurrentRevision(String(last.revision)).setPosition(position);
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
    if (backwards && !options.hasAll()) throw new Error('the stand-in reads backwards only $all');
    const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
    const count = options.hasCount() ? Number(BigInt(options.getCount())) : Infinity;

    if (options.hasStream()) {
      if (options.hasSubscription()) throw new Error('the stand-in subscribes to $all only');
      const stream = options.getStream()!;
      const name = streamName(stream.getStreamIdentifier());
      const events = this.streams.get(name);
      if (!events) {
        call.write(new pb.ReadResp().setStreamNotFound(new pb.ReadResp.StreamNotFound().setStreamIdentifier(stream.getStreamIdentifier())));
        return void call.end();
      }
      // Events before the stream's $tb are gone to readers; a read from before it starts at it.
      const from = Math.max(this.truncateBefore(name), stream.hasRevision() ? Number(stream.getRevision()) : stream.hasEnd() ? events.length : 0);
      const resolveLinks = options.getResolveLinks();
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
  retries: Delivery[];
  consumers: Consumer[];
  nextConsumer: number;
  /** A replay of its parked events has started and not yet truncated the parked stream. */
  replaying: boolean;
}

/** Where the server parks a $all group's events (PersistentSubscriptionMessageParker). */
const parkedStreamOf = (group: string) => `$persistentsubscription-$all::${group}-parked`;

/** How often message timeouts are checked. */
const CLOCK_MS = 100;
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
    this.groups.set(name, { name, filter, startFrom, maxRetryCount: settings.getMaxRetryCount(), messageTimeoutMs, cursor, retries: [], consumers: [], nextConsumer: 0, replaying: false });
    this.startClock();
    callback(null, new ps.CreateResp());
  }

  getInfo(call: grpc.ServerUnaryCall<ps.GetInfoReq, ps.GetInfoResp>, callback: grpc.sendUnaryData<ps.GetInfoResp>): void {
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
      if (group.filter(e)) return { event: e, retryCount: 0 };
    }
    return undefined;
  }
}
