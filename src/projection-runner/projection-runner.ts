import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import * as os from 'node:os';
import { DATABASE, Database } from '../database/database';
import { EVENT_STORE, EventStore, Position } from '../event-store/event-store';
import { ensureCheckpoint } from './checkpoint';
import { Consumer, ConsumerSpec } from './consumer';
import { AppendMinute, appendsPerMinute } from './append-rate';
import { LagMinute, lagPerMinute, LagSample, LagSampler } from './lag-samples';
import { Leases } from './leases';
import { listParked, ParkedEvent, retryParked } from './parked-events';
import { ProgressWaits } from './progress-waits';
import { EVERY_EVENT, PROJECTIONS, Projection } from './projection';
import { Build, ReadModelBuilds } from './read-model-builds';
import { Lag, lagAfter, ProjectionStatus, readStatus, SubscriberStatus } from './status';

export interface RunnerOptions {
  /** A crashed leader's consumers move to another instance this long after its last renewal. */
  leaseTtlMs: number;
  /** Failures on one event before it is parked, or its money consumer reports a stall. */
  maxAttempts: number;
  /** How long a replaced build's tables stay before they are dropped. */
  retiredGraceMs: number;
  /** A rebuild beside the live build of its version pauses this percentage of each batch's time after it (0: full speed). */
  rebuildPausePercent: number;
}

export const RUNNER_OPTIONS = Symbol('RunnerOptions');
const DEFAULTS: RunnerOptions = { leaseTtlMs: 5000, maxAttempts: 5, retiredGraceMs: 5000, rebuildPausePercent: 0 };

export class UnknownProjectionError extends Error {}

const BATCH_SIZE = 500;
/** A build catching up (a rebuild, a new version) reads and applies larger batches: still short transactions, far fewer of them. */
const CATCH_UP_BATCH_SIZE = 2000;
/**
 * A paced rebuild (beside live traffic) reads and applies small batches: a request that lands
 * on one waits for its share of the event loop and of the database (docs/decisions.md).
 */
const PACED_BATCH_SIZE = 100;
/** How often a rebuild the operator waits for is looked at. */
const REBUILD_POLL_MS = 25;

/**
 * Runs every consumer of the event log: a build of each read model in projections/ (the
 * live one, and a new one while it catches up) and the subscribers that register
 * (fulfilment, webhook fan-out). Each consumer runs on one instance at a time, the holder
 * of its lease; a supervisor round (at start, every fraction of the lease, and on demand)
 * renews leases, starts what this instance may run and stops what it lost.
 */
@Injectable()
export class ProjectionRunner {
  private readonly logger = new Logger('Projections');
  private readonly builds: ReadModelBuilds;
  private readonly leases: Leases;
  private readonly options: RunnerOptions;
  private readonly running = new Map<string, Consumer>();
  private readonly subscribers = new Map<string, ConsumerSpec>();
  private readonly waits: ProgressWaits;
  private readonly lagSampler: LagSampler;
  /** Each projection's live build, as the last supervisor round read them (the sampler's read models). */
  private liveBuilds = new Map<string, string>();
  private started = false;
  private timer?: NodeJS.Timeout;
  private round: Promise<void> = Promise.resolve();
  private roundQueued = false;

  constructor(
    @Inject(DATABASE) private readonly db: Database,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(PROJECTIONS) private readonly projections: readonly Projection[],
    @Optional() @Inject(RUNNER_OPTIONS) options?: Partial<RunnerOptions>,
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.builds = new ReadModelBuilds(db);
    this.leases = new Leases(db, this.options.leaseTtlMs, `${os.hostname()}:${process.pid}`);
    this.waits = new ProgressWaits(db, {
      position: (name) => this.running.get(name)?.position,
      stalled: (name) => this.running.get(name)?.stalled === true,
      versionOf: (projection) => this.versionOf(projection),
    });
    this.lagSampler = new LagSampler(db, () => this.localLags());
  }

  names(): string[] {
    return this.projections.map((p) => p.name);
  }

  /** The version of a projection this code builds. */
  versionOf(name: string): number | undefined {
    return this.projections.find((p) => p.name === name)?.version;
  }

  /** The projections that handle any of these event types by name (what an append's read-your-writes waits for). */
  handling(types: readonly string[]): string[] {
    return this.projections.filter((p) => p.handles !== EVERY_EVENT && types.some((t) => p.handles.includes(t))).map((p) => p.name);
  }

  /** Gives every projection a build of its version (see ReadModelBuilds.prepare). */
  prepare(): Promise<void> {
    return this.builds.prepareAll(this.projections);
  }

  /** Starts running the consumers this instance can lead. */
  async start(): Promise<void> {
    this.started = true;
    await this.kick();
    const every = Math.max(50, Math.min(1000, Math.floor(this.options.leaseTtlMs / 4)));
    this.timer = setInterval(() => void this.kick(), every);
    this.timer.unref();
    this.lagSampler.start();
  }

  async stop(): Promise<void> {
    this.started = false;
    clearInterval(this.timer);
    await this.lagSampler.stop();
    await this.round;
    const names = [...this.running.keys()];
    await Promise.all([...this.running.values()].map((c) => c.stop()));
    this.running.clear();
    await this.leases.release(names).catch(() => undefined);
  }

  /** Adds a subscriber (fulfilment, fan-out): a consumer with its own checkpoint, never rebuilt. */
  async subscribe(spec: ConsumerSpec): Promise<void> {
    await ensureCheckpoint(this.db, spec.name);
    this.subscribers.set(spec.name, spec);
    await this.kick();
  }

  async unsubscribe(name: string): Promise<void> {
    this.subscribers.delete(name);
    await this.kick();
  }

  /** Runs a supervisor round soon; resolves when a round that started after this call ends. */
  kick(): Promise<void> {
    if (!this.roundQueued) {
      this.roundQueued = true;
      this.round = this.round.then(async () => {
        this.roundQueued = false;
        await this.supervise().catch((error) => this.logger.error(`supervisor: ${(error as Error).message}`));
      });
    }
    return this.round;
  }

  private async supervise(): Promise<void> {
    const held = await this.leases.renew([...this.running.keys()]);
    const { specs: wanted, background } = this.started ? await this.wanted() : { specs: new Map<string, ConsumerSpec>(), background: new Set<string>() };
    for (const [name, consumer] of this.running) {
      if (held.has(name) && wanted.has(name)) continue;
      await consumer.stop();
      this.running.delete(name);
      if (held.has(name)) await this.leases.release([name]);
      else this.logger.warn(`${name}: lease lost; another instance runs it now`);
    }
    for (const [name, spec] of wanted) {
      if (this.running.has(name)) continue;
      // Builds beside a live one are background work: one at a time on each instance.
      if (background.has(name) && [...this.running.keys()].some((running) => background.has(running))) continue;
      if (!(await this.leases.tryAcquire(name))) continue;
      // Every consumer's progress wakes local waiters at once (waitFor), not on their next poll.
      const onCommitted: ConsumerSpec['onCommitted'] = (events) => {
        spec.onCommitted?.(events);
        this.waits.advanced();
      };
      const consumer = new Consumer(this.db, this.store, { ...spec, onCommitted }, { maxAttempts: this.options.maxAttempts });
      // Known before its first batch, whose onCaughtUp may ask for its position.
      this.running.set(name, consumer);
      await consumer.start().catch((error) => {
        this.running.delete(name);
        throw error;
      });
    }
    if (this.started) await this.builds.dropRetired(this.options.retiredGraceMs);
  }

  /**
   * The consumers this code can run: its projections' current builds, and its subscribers;
   * and which of them are background work: rebuilds beside a live build of their version.
   */
  private async wanted(): Promise<{ specs: Map<string, ConsumerSpec>; background: Set<string> }> {
    const specs = new Map(this.subscribers);
    const background = new Set<string>();
    const builds = await this.builds.list();
    this.liveBuilds = new Map(builds.filter((b) => b.state === 'live').map((b) => [b.projection, b.id]));
    for (const build of builds) {
      const projection = this.projections.find((p) => p.name === build.projection);
      if (!projection || projection.version !== build.version || build.state === 'retired') continue;
      // A rebuild beside a live build of its own version: the live one keeps moving meanwhile.
      // (A new version catches up at full speed: once the old code is gone, nothing moves the old build.)
      const rebuild = build.state === 'building' && builds.some((b) => b.projection === build.projection && b.state === 'live' && b.version === build.version);
      if (rebuild) background.add(build.id);
      specs.set(build.id, this.buildSpec(projection, build, rebuild));
    }
    return { specs, background };
  }

  private buildSpec(projection: Projection, build: Build, background: boolean): ConsumerSpec {
    let promoted = build.state === 'live';
    let analyzed = false;
    // Beside a live build of its version, a rebuild yields to the live system: live-sized
    // batches with pauses between them, unless the operator lets it run at full speed.
    const paced = background && this.options.rebuildPausePercent > 0;
    return {
      name: build.id,
      batchSize: paced ? PACED_BATCH_SIZE : build.state === 'live' ? BATCH_SIZE : CATCH_UP_BATCH_SIZE,
      pausePercent: () => (paced && !promoted ? this.options.rebuildPausePercent : 0),
      whenFailing: projection.whenFailing,
      types: projection.handles === EVERY_EVENT ? undefined : projection.handles,
      apply: (tx, events) =>
        // The subscription hands over only the types the projection handles.
        this.builds.withSchema(tx, build, async () => {
          if (projection.applyBatch) await projection.applyBatch(tx, events);
          else for (const event of events) await projection.apply(tx, event);
        }),
      onCaughtUp: async () => {
        if (promoted) return;
        if (!analyzed) await this.builds.analyze(projection, build);
        analyzed = true;
        const readTo = this.running.get(build.id)?.position;
        if (!readTo) return;
        const outcome = await this.builds.promote(projection, build.id, readTo);
        if (outcome === 'behind') return; // the live build applied newer events: when this one has them too
        // Either way it is no longer building: live now, or retired, or promoted elsewhere.
        promoted = true;
        if (outcome === 'live') {
          this.liveBuilds.set(projection.name, build.id);
          this.logger.log(`${build.id} caught up and now serves ${projection.name}`);
          this.waits.advanced();
          void this.kick();
        }
      },
    };
  }

  /**
   * Read-your-writes: resolves true once the named projections' live builds (default: all)
   * and subscribers have processed `position`; false after timeoutMs, or at once when one
   * of them is stalled.
   */
  waitFor(position: Position, options: { timeoutMs?: number; projections?: string[] } = {}): Promise<boolean> {
    return this.waits.waitFor(position, options.projections ?? this.names(), options.timeoutMs);
  }

  async status(): Promise<{ items: ProjectionStatus[]; subscribers: SubscriberStatus[] }> {
    const status = await readStatus({ db: this.db, store: this.store, projections: this.projections, builds: this.builds, localPosition: (name) => this.running.get(name)?.position });
    // Every lag this instance computes counts for its minute's sample (see LagSampler).
    this.lagSampler.observe(status.items.map((p) => ({ read_model: p.name, lag_seconds: p.lag_seconds })));
    return status;
  }

  /**
   * Writes this minute's lag sample now (the sampler does every minute while the runner
   * runs): how many rows it wrote, 0 when this instance runs no consumer.
   */
  sampleLag(now = Date.now()): Promise<number> {
    return this.lagSampler.sample(now);
  }

  /** Read-model lag per minute since an instant (the overview's chart): the largest of any read model. */
  lagPerMinute(since: Date): Promise<LagMinute[]> {
    return lagPerMinute(this.db, since);
  }

  /** Events appended to the log per minute since an instant (the events_per_minute read model). */
  appendsPerMinute(since: Date): Promise<AppendMinute[]> {
    return appendsPerMinute(this.db, since);
  }

  /**
   * The lag of each read model whose live build runs here, from where its consumer has read
   * to (one read of the log per distinct position: one when all are at its end); undefined
   * when this instance runs no consumer at all.
   */
  private async localLags(): Promise<LagSample[] | undefined> {
    if (!this.started || !this.running.size) return undefined;
    const lags = new Map<Position, Promise<Lag>>();
    const samples: LagSample[] = [];
    for (const [projection, buildId] of this.liveBuilds) {
      const position = this.running.get(buildId)?.position;
      if (position === undefined) continue;
      if (!lags.has(position)) lags.set(position, lagAfter(this.store, position));
      samples.push({ read_model: projection, lag_seconds: (await lags.get(position)!).lag_seconds });
    }
    return samples;
  }

  private projection(name: string): Projection {
    const projection = this.projections.find((p) => p.name === name);
    if (!projection) throw new UnknownProjectionError(`unknown projection "${name}"; known: ${this.names().join(', ')}`);
    return projection;
  }

  /**
   * Rebuilds read models beside the live ones: a new build of each replays the log in short
   * batches while the live build keeps serving, and takes over once it has caught up (builds
   * beside live ones run one at a time on each instance). Resolves with the projections'
   * status once every new build serves, or when timeoutMs passes: those still on their way
   * then show as `rebuilding`.
   */
  async rebuild(names: readonly string[], options: { timeoutMs?: number } = {}): Promise<ProjectionStatus[]> {
    const projections = names.map((name) => this.projection(name));
    const requested: string[] = [];
    // One after another: a burst of schema changes slows every commit on the server.
    for (const projection of projections) requested.push((await this.builds.requestRebuild(projection)).id);
    await this.kick();
    const deadline = Date.now() + (options.timeoutMs ?? 10 * 60_000);
    while (Date.now() < deadline) {
      const building = (await this.builds.list()).filter((b) => requested.includes(b.id) && b.state === 'building');
      if (!building.length) break;
      await new Promise((resolve) => setTimeout(resolve, REBUILD_POLL_MS));
    }
    const { items } = await this.status();
    return names.map((name) => items.find((s) => s.name === name)!);
  }

  parked(): Promise<ParkedEvent[]> {
    return listParked(this.db);
  }

  /**
   * Applies a consumer's parked events again (a fix deployed, a row repaired), oldest first;
   * each one that succeeds leaves the list. NAME is a projection (its live build) or a
   * subscriber running on this instance.
   */
  async retryParked(name: string): Promise<{ retried: number; still_parked: number }> {
    const spec = await this.retrySpec(name);
    const outcome = await retryParked(this.db, spec.name, spec.apply);
    if (outcome.retried) this.waits.advanced();
    return outcome;
  }

  private async retrySpec(name: string): Promise<ConsumerSpec> {
    const subscriber = this.subscribers.get(name);
    if (subscriber) return subscriber;
    if (name.startsWith('subscriber:')) throw new UnknownProjectionError(`${name} does not run on this instance; retry on a worker (WORKERS=true)`);
    const projection = this.projection(name);
    const live = (await this.builds.list(name)).find((b) => b.state === 'live' && b.version === projection.version);
    if (!live) throw new UnknownProjectionError(`projection "${name}" has no live build of version ${projection.version} here`);
    return this.buildSpec(projection, live, false);
  }
}
