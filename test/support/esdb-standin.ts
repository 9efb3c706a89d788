/**
 * A wire-level stand-in for EventStoreDB (KurrentDB), for tests on machines where no
 * server can be installed: an in-process gRPC server on the Streams service definition the
 * client package itself ships, holding events in memory. The real client talks to it
 * unmodified (esdb://127.0.0.1:PORT?tls=false). It speaks only what the adapter uses:
 * Append, Read of a stream, Read of $all forward (backwards from its end) with a filter, and subscriptions to $all
 * (catch-up, then live). Every other service answers UNIMPLEMENTED, which the client
 * treats as "unknown server version" (ServerFeatures) and falls back to plain Append.
 *
 * Semantics kept from the server: expected-version checks answered as WrongExpectedVersion
 * (not a gRPC error), an append of event ids already at the stream's head is idempotent,
 * $all is one total order of (commit, prepare) positions, a read of $all from a position
 * includes the event at it while a subscription from a position starts after it, and the
 * log holds system events ($-prefixed streams) that readers must filter out.
 */
import * as grpc from '@grpc/grpc-js';
// The client ships its generated protobuf classes and service definitions (no "exports"
// map, so deep paths resolve); the stand-in serves exactly what the client sends.
import * as streamsGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb';
import * as pb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_pb';
import * as shared from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/shared_pb';

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

export class EsdbStandIn {
  private server = new grpc.Server();
  private readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StoredEvent[]>();
  private readonly live = new Set<Live>();
  private nextPosition = 0n;
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
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    return this;
  }

  /** Ends every open subscription with UNAVAILABLE, as a lost connection or a restarting node would. */
  dropSubscriptions(): void {
    for (const sub of [...this.live]) {
      this.live.delete(sub);
      sub.call.destroy(Object.assign(new Error('connection dropped by the stand-in'), { code: grpc.status.UNAVAILABLE }));
    }
  }

  /** A node restart: every connection is cut, the log is kept, the same port answers again. */
  async restart(downMs = 0): Promise<void> {
    await this.stop();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start(this.port);
  }

  async stop(): Promise<void> {
    this.dropSubscriptions();
    this.server.forceShutdown();
  }

  /** Appends (the server's checks having passed) and wakes the live subscriptions. */
  private write(stream: string, events: Omit<StoredEvent, 'stream' | 'revision' | 'created' | 'position'>[]): StoredEvent[] {
    const existing = this.streams.get(stream) ?? [];
    const written = events.map((e, i) => {
      this.nextPosition += 100n + BigInt(e.data.length);
      return { ...e, stream, revision: existing.length + i, created: BigInt(Date.now()) * 10000n, position: this.nextPosition };
    });
    this.streams.set(stream, [...existing, ...written]);
    this.log.push(...written);
    for (const sub of this.live) this.deliver(sub);
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

  private eventResponse(e: StoredEvent, structuredIds: boolean): pb.ReadResp {
    const recorded = new pb.ReadResp.ReadEvent.RecordedEvent()
      .setId(uuidMessage(e.id, structuredIds))
      .setStreamIdentifier(new shared.StreamIdentifier().setStreamName(Buffer.from(e.stream, 'utf8')))
      .setStreamRevision(String(e.revision))
      .setPreparePosition(String(e.position))
      .setCommitPosition(String(e.position))
      .setData(e.data)
      .setCustomMetadata(e.metadata);
    recorded.getMetadataMap().set('type', e.type).set('content-type', e.contentType).set('created', String(e.created));
    const read = new pb.ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(String(e.position));
    return new pb.ReadResp().setEvent(read);
  }

  private read(call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>): void {
    try {
      this.readNow(call);
    } catch (error: any) {
      call.destroy(Object.assign(new Error(error?.message ?? String(error)), { code: grpc.status.INVALID_ARGUMENT }));
    }
  }

  private readNow(call: grpc.ServerWritableStream<pb.ReadReq, pb.ReadResp>): void {
    const options = call.request.getOptions();
    if (!options) throw new Error('read without options');
    const backwards = options.getReadDirection() === pb.ReadReq.Options.ReadDirection.BACKWARDS;
    if (backwards && !(options.hasAll() && options.getAll()!.hasEnd())) throw new Error('the stand-in reads backwards only $all from its end');
    const structuredIds = options.getUuidOption()?.hasStructured() ?? false;
    const count = options.hasCount() ? Number(BigInt(options.getCount())) : Infinity;

    if (options.hasStream()) {
      if (options.hasSubscription()) throw new Error('the stand-in subscribes to $all only');
      const stream = options.getStream()!;
      const events = this.streams.get(streamName(stream.getStreamIdentifier()));
      if (!events) {
        call.write(new pb.ReadResp().setStreamNotFound(new pb.ReadResp.StreamNotFound().setStreamIdentifier(stream.getStreamIdentifier())));
        return void call.end();
      }
      const from = stream.hasRevision() ? Number(stream.getRevision()) : stream.hasEnd() ? events.length : 0;
      for (const e of events.slice(from, from + Math.min(count, events.length))) call.write(this.eventResponse(e, structuredIds));
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
        if ((!backwards && e.position < after) || !filter(e)) continue;
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
    const onStream = f.hasStreamIdentifier();
    const expression = onStream ? f.getStreamIdentifier()! : f.getEventType()!;
    const regex = expression.getRegex() ? new RegExp(expression.getRegex()) : null;
    const prefixes = expression.getPrefixList();
    return (e) => {
      const subject = onStream ? e.stream : e.type;
      if (regex && !regex.test(subject)) return false;
      return prefixes.length === 0 || prefixes.some((p) => subject.startsWith(p));
    };
  }
}
