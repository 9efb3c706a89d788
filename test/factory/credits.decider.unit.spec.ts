import { CreditsCommand, creditsDecider, CreditsEvent, SpendRequest } from '../../src/factory/credits.decider';
import { deciderSpec } from '../support/decider-spec';

const NOW = '2026-01-01T00:00:00.000Z';
const who = { account_id: 'acct_1', mode: 'test' as const };

const granted = (amount: number, credits: number): CreditsEvent => ({ type: 'CreditsGranted', data: { ...who, amount, credits, granted_at: NOW } });
const spent = (credits: number, spend: SpendRequest): CreditsEvent => ({ type: 'CreditsSpent', data: { ...who, amount: 1, credits, ...spend, spent_at: NOW } });
const refunded = (credits: number, job_id: string, build: number): CreditsEvent => ({ type: 'CreditsRefunded', data: { ...who, amount: 1, credits, job_id, build, reason: 'build failed', refunded_at: NOW } });
const spend = (request: SpendRequest): CreditsCommand => ({ type: 'Spend', ...who, spend: request, now: NOW });
const refund = (job_id: string, build: number): CreditsCommand => ({ type: 'Refund', ...who, job_id, build, reason: 'build failed', now: NOW });

const creation = { job_id: 'job_1', build: 1, prompt: 'a 6-DoF arm' };
const rebuild = { job_id: 'job_1', build: 2, job_revision: 5 };

describe('credits decider', () => {
  const grant = (amount: number): CreditsCommand => ({ type: 'Grant', ...who, amount, now: NOW });

  it('a first grant is the balance; a later one adds to what the last event left, spends and refunds included', () => {
    deciderSpec(creditsDecider).given([]).when(grant(5)).then([granted(5, 5)]);
    deciderSpec(creditsDecider).given([granted(10, 10), spent(9, creation)]).when(grant(5)).then([granted(5, 14)]);
    deciderSpec(creditsDecider).given([granted(10, 10), spent(9, creation), refunded(10, 'job_1', 1)]).when(grant(5)).then([granted(5, 15)]);
  });

  it('a spend takes one credit and states the balance after it', () => {
    deciderSpec(creditsDecider).given([granted(3, 3)]).when(spend(creation)).then([spent(2, creation)]);
  });

  it('with none left, a spend is 402 insufficient_credits', () => {
    deciderSpec(creditsDecider).given([]).when(spend(creation)).thenRefuses({ status: 402, code: 'insufficient_credits' });
    deciderSpec(creditsDecider).given([granted(1, 1), spent(0, creation)]).when(spend({ job_id: 'job_2', build: 1, prompt: 'a gripper' })).thenRefuses({ status: 402, code: 'insufficient_credits' });
  });

  it('the same spend asked again records nothing, even with no credit left', () => {
    deciderSpec(creditsDecider).given([granted(1, 1), spent(0, creation)]).when(spend(creation)).then([]);
  });

  it('a rebuild after a refunded one takes the next build number: no build is spent twice', () => {
    const again = { ...rebuild, job_revision: 8 };
    deciderSpec(creditsDecider)
      .given([granted(3, 3), spent(2, creation), spent(1, rebuild), refunded(2, 'job_1', 2)])
      .when(spend(again))
      .then([spent(1, { ...again, build: 3 })]);
  });

  it("refunds a build's credit once", () => {
    deciderSpec(creditsDecider).given([granted(2, 2), spent(1, creation), spent(0, rebuild)]).when(refund('job_1', 2)).then([refunded(1, 'job_1', 2)]);
    deciderSpec(creditsDecider).given([granted(2, 2), spent(1, creation), spent(0, rebuild), refunded(1, 'job_1', 2)]).when(refund('job_1', 2)).then([]);
  });

  it('a build no credit was spent on is not refunded', () => {
    deciderSpec(creditsDecider).given([granted(2, 2), spent(1, creation)]).when(refund('job_1', 2)).then([]);
  });
});
