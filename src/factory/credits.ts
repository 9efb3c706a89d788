import { Inject, Injectable } from '@nestjs/common';
import { EVENT_STORE, EventStore, RecordedEvent } from '../event-store/event-store';
import { ApiError } from '../platform/errors';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { CreditsRefunded, CreditsSpent, FactoryEvents } from './events';

export const insufficientCredits = () =>
  new ApiError(402, 'insufficient_credits', 'No generation credit left in this mode; an operator grants credits with `svc credits grant`.');

/**
 * Ten requests racing for the last credit all read the same revision; one appends, the
 * others reload and find none left. Each reload is a fresh decision, so a crowd only
 * costs attempts; enough of them that a 409 is a real pile-up, not a normal race.
 */
const SPEND_ATTEMPTS = 20;

const sameBuild = (jobId: string, build: number) => (e: RecordedEvent) => e.data.job_id === jobId && e.data.build === build;

/**
 * Generation credits on their stream credits-<mode>-<account> (the consistency boundary:
 * a balance is the `credits` of the stream's last event, whatever its type). A spend and a
 * refund are appended with the expected revision, and each is one per job and build, so a
 * retry after a crash neither doubles nor loses one.
 */
@Injectable()
export class Credits {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly writer: EventWriter,
  ) {}

  /**
   * Takes one credit for a build of a job; 402 with none left. Retried with the same
   * request (the creation's build 1, or a rebuild from the same job revision) it returns
   * the spend already recorded. A build number is never spent twice: a rebuild after one
   * that was refunded (its job moved on) takes the next number, so each build has at most
   * one spend and one refund.
   */
  spend(mode: Mode, accountId: string, spend: Pick<CreditsSpent, 'job_id' | 'build' | 'prompt' | 'job_revision'>): Promise<CreditsSpent> {
    const stream = Streams.credits(mode, accountId);
    return this.writer.retryOnConflict(async () => {
      const events = await this.store.readStream(stream);
      const spends = events.filter((e) => e.type === FactoryEvents.CreditsSpent && e.data.job_id === spend.job_id).map((e) => e.data as CreditsSpent);
      const earlier = spends.find((s) => s.build === spend.build && s.job_revision === spend.job_revision);
      if (earlier) return earlier;
      const build = Math.max(spend.build, ...spends.map((s) => s.build + 1));
      const last = events[events.length - 1];
      const balance = last ? (last.data.credits as number) : 0;
      if (balance < 1) throw insufficientCredits();
      const spent: CreditsSpent = { account_id: accountId, mode, amount: 1, credits: balance - 1, ...spend, build, spent_at: new Date().toISOString() };
      await this.writer.append(stream, [{ type: FactoryEvents.CreditsSpent, data: { ...spent } }], last.revision);
      return spent;
    }, SPEND_ATTEMPTS);
  }

  /** Gives back the credit of a job's build, once; nothing when that build was never paid for. */
  refund(mode: Mode, accountId: string, jobId: string, build: number, reason: string): Promise<void> {
    const stream = Streams.credits(mode, accountId);
    return this.writer.retryOnConflict(async () => {
      const events = await this.store.readStream(stream);
      const forBuild = events.filter(sameBuild(jobId, build));
      if (!forBuild.some((e) => e.type === FactoryEvents.CreditsSpent) || forBuild.some((e) => e.type === FactoryEvents.CreditsRefunded)) return;
      const last = events[events.length - 1];
      const refunded: CreditsRefunded = {
        account_id: accountId, mode, amount: 1, credits: (last.data.credits as number) + 1, job_id: jobId, build, reason, refunded_at: new Date().toISOString(),
      };
      await this.writer.append(stream, [{ type: FactoryEvents.CreditsRefunded, data: { ...refunded } }], last.revision);
    }, SPEND_ATTEMPTS);
  }
}
