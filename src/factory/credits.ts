import { Injectable } from '@nestjs/common';
import type { StreamCommands } from '../event-store/stream-commands';
import type { Mode } from '../platform/mode';
import { Streams } from '../platform/streams';
import { EventWriter } from '../projection-runner/event-writer';
import { CreditsCommand, creditsDecider, CreditsEvent, CreditsState, earlierSpend, SpendRequest } from './credits.decider';
import type { CreditsSpent } from './events';

/**
 * Ten requests racing for the last credit all read the same revision; one appends, the
 * others reload and find none left. Each reload is a fresh decision, so a crowd only
 * costs attempts; enough of them that a 409 is a real pile-up, not a normal race.
 */
const SPEND_ATTEMPTS = 20;

/** Generation credits: the credits decider (credits.decider.ts) run on credits-<mode>-<account>. */
@Injectable()
export class Credits {
  private readonly commands: StreamCommands<CreditsCommand, CreditsEvent, CreditsState>;

  constructor(writer: EventWriter) {
    this.commands = writer.commands(creditsDecider, { attempts: SPEND_ATTEMPTS });
  }

  /** Adds credits (an operator's grant); returns the balance after. */
  async grant(mode: Mode, accountId: string, amount: number): Promise<number> {
    const handled = await this.commands.handle(Streams.credits(mode, accountId), () => ({ type: 'Grant', account_id: accountId, mode, amount, now: new Date().toISOString() }));
    return handled.state.balance;
  }

  /**
   * Takes one credit for a build of a job; 402 with none left. Retried with the same
   * request (the creation's build 1, or a rebuild from the same job revision) it returns
   * the spend already recorded.
   */
  async spend(mode: Mode, accountId: string, spend: SpendRequest): Promise<CreditsSpent> {
    const handled = await this.commands.handle(Streams.credits(mode, accountId), () => ({ type: 'Spend', account_id: accountId, mode, spend, now: new Date().toISOString() }));
    const [spent] = handled.recorded;
    return spent?.type === 'CreditsSpent' ? spent.data : earlierSpend(handled.state, spend)!;
  }

  /** Gives back the credit of a job's build, once; nothing when that build was never paid for. */
  async refund(mode: Mode, accountId: string, jobId: string, build: number, reason: string): Promise<void> {
    await this.commands.handle(Streams.credits(mode, accountId), () => ({ type: 'Refund', account_id: accountId, mode, job_id: jobId, build, reason, now: new Date().toISOString() }));
  }
}
