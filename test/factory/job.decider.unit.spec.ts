import { draftFor } from '../../src/factory/draft';
import type { JobArtifact } from '../../src/factory/events';
import { evolveJob, JobCommand, jobDecider, JobEvent, JobMovedOn, JobState, toPublicJob } from '../../src/factory/job.decider';
import { deciderSpec } from '../support/decider-spec';
import { robotPlan } from './fixtures';

const T0 = '2026-01-01T00:00:00.000Z';
const NOW = '2026-01-01T00:05:00.000Z';
const CREATOR = 'acct_creator';
const fact = (at = T0) => ({ job_id: 'job_1', account_id: CREATOR, mode: 'test' as const, at });
const plan = robotPlan();
const artifact: JobArtifact = { storage_path: `user/${CREATOR}/factory/job_1/build-1/arm.urdf`, file_name: 'arm.urdf', size: 100, sha256: 'cd'.repeat(32), companions: [] };

// A job's history, event by event (revisions 0, 1, 2, ...).
const created: JobEvent = { type: 'GenerationJobCreated', data: { ...fact(), prompt: 'a two link arm' } };
const analysisStarted: JobEvent = { type: 'GenerationJobAnalysisStarted', data: fact() };
const questionsAsked: JobEvent = { type: 'GenerationJobQuestionsAsked', data: { ...fact(), questions: [{ id: 'payload', question: 'What payload?' }] } };
const planningStarted: JobEvent = { type: 'GenerationJobPlanningStarted', data: fact() };
const planned: JobEvent = { type: 'GenerationJobPlanned', data: { ...fact(), plan } };
const approved = (build: number, paid: boolean): JobEvent => ({ type: 'GenerationJobApproved', data: { ...fact(), build, paid } });
const completed = (history: JobEvent[], build = 1): JobEvent => {
  const data = { ...fact(), build, artifact, draft: draftFor(plan), job: {} as Record<string, unknown> };
  const job = history.reduce<JobState | undefined>(evolveJob, undefined)!;
  data.job = toPublicJob({ ...job, stage: 'review', artifact, draft: draftFor(plan) });
  return { type: 'GenerationJobCompleted', data };
};
const awaitingApproval = [created, analysisStarted, planningStarted, planned];
const generating = [...awaitingApproval, approved(1, true)];
const review = [...generating, completed(generating)];

const own = { account_id: CREATOR, now: NOW };
const moved = (from_revision: number) => ({ from_revision, now: NOW });

describe('job decider', () => {
  describe('creation', () => {
    const create: JobCommand = { type: 'Create', job_id: 'job_1', account_id: CREATOR, mode: 'test', prompt: 'a two link arm', now: T0 };

    it('creates the job from its spend', () => {
      deciderSpec(jobDecider).given([]).when(create).then([created]);
    });

    it('a repeat (the request and the worker both creating from one spend) records nothing', () => {
      deciderSpec(jobDecider).given([created]).when(create).then([]);
    });
  });

  describe("the worker's moves", () => {
    it('records what the stage found: no questions moves analysis on to planning', () => {
      deciderSpec(jobDecider).given([created, analysisStarted]).when({ type: 'RecordAnalysis', ...moved(1), questions: [] }).then([{ type: 'GenerationJobPlanningStarted', data: fact(NOW) }]);
    });

    it('asks the questions analysis found', () => {
      const questions = [{ id: 'payload', question: 'What payload?' }];
      deciderSpec(jobDecider).given([created, analysisStarted]).when({ type: 'RecordAnalysis', ...moved(1), questions }).then([{ type: 'GenerationJobQuestionsAsked', data: { ...fact(NOW), questions } }]);
    });

    it('a move worked out on a job that moved since is not made', () => {
      deciderSpec(jobDecider).given([created, analysisStarted]).when({ type: 'StartAnalysis', ...moved(0) }).thenRefuses(JobMovedOn);
    });

    it('a finished build enters review with the draft made from its plan and the job as it then reads', () => {
      const data = { ...fact(NOW), build: 1, artifact, draft: draftFor(plan), job: {} as Record<string, unknown> };
      data.job = toPublicJob({ ...generating.reduce<JobState | undefined>(evolveJob, undefined)!, stage: 'review', artifact, draft: draftFor(plan), updated_at: NOW });
      deciderSpec(jobDecider).given(generating).when({ type: 'CompleteBuild', ...moved(4), artifact }).then([{ type: 'GenerationJobCompleted', data }]);
    });

    it('a failed build names its build (its credit goes back); a failed analysis names none', () => {
      const error = { code: 'artifact_invalid', message: 'bad URDF' };
      deciderSpec(jobDecider).given(generating).when({ type: 'FailStage', ...moved(4), error }).then([{ type: 'GenerationJobFailed', data: { ...fact(NOW), stage: 'generating', error, build: 1 } }]);
      const engine = { code: 'engine_failed', message: 'upstream down' };
      deciderSpec(jobDecider).given([created, analysisStarted]).when({ type: 'FailStage', ...moved(1), error: engine }).then([{ type: 'GenerationJobFailed', data: { ...fact(NOW), stage: 'analyzing', error: engine } }]);
    });
  });

  describe('clarify', () => {
    const clarifying = [created, analysisStarted, questionsAsked];

    it('records one answer per question', () => {
      const answers = [{ id: 'payload', answer: '2 kg' }];
      deciderSpec(jobDecider).given(clarifying).when({ type: 'Clarify', ...own, answers }).then([{ type: 'GenerationJobClarified', data: { ...fact(NOW), answers } }]);
    });

    it('refuses an answer to no question, a question answered twice, and a question left out', () => {
      const when = (answers: { id: string; answer: string }[]) => deciderSpec(jobDecider).given(clarifying).when({ type: 'Clarify', ...own, answers });
      when([{ id: 'colour', answer: 'red' }]).thenRefuses({ status: 400, code: 'validation_failed', message: 'Invalid field "answers": "colour" is not a question of this job (payload).' });
      when([{ id: 'payload', answer: '1 kg' }, { id: 'payload', answer: '2 kg' }]).thenRefuses({ status: 400, code: 'validation_failed', message: 'Invalid field "answers": a question is answered twice.' });
      when([]).thenRefuses({ status: 400, code: 'validation_failed', message: 'Invalid field "answers": question "payload" has no answer.' });
    });

    it('only while questions wait', () => {
      deciderSpec(jobDecider)
        .given(awaitingApproval)
        .when({ type: 'Clarify', ...own, answers: [] })
        .thenRefuses({ status: 400, code: 'invalid_request', message: 'This job is in stage "awaiting_approval"; clarify is only possible in "awaiting_clarification".' });
    });
  });

  describe('approve', () => {
    it('starts build 1, the one paid for at creation', () => {
      deciderSpec(jobDecider).given(awaitingApproval).when({ type: 'Approve', ...own }).then([{ type: 'GenerationJobApproved', data: { ...fact(NOW), build: 1, paid: true } }]);
    });

    it('a later plan approved starts the next build, paid for by no credit', () => {
      const replanned: JobEvent = { type: 'GenerationJobReplanRequested', data: fact() };
      deciderSpec(jobDecider).given([...review, replanned, planned]).when({ type: 'Approve', ...own }).then([{ type: 'GenerationJobApproved', data: { ...fact(NOW), build: 2, paid: false } }]);
    });

    it('approving twice is refused: the job is generating', () => {
      deciderSpec(jobDecider)
        .given(generating)
        .when({ type: 'Approve', ...own })
        .thenRefuses({ status: 400, code: 'invalid_request', message: 'This job is in stage "generating"; approve is only possible in "awaiting_approval".' });
    });

    it("another account's job is 404, like a missing one", () => {
      deciderSpec(jobDecider).given(awaitingApproval).when({ type: 'Approve', account_id: 'acct_other', now: NOW }).thenRefuses({ status: 404, code: 'not_found', message: 'No such factory job.' });
      deciderSpec(jobDecider).given([]).when({ type: 'Approve', ...own }).thenRefuses({ status: 404, code: 'not_found' });
    });
  });

  describe('regenerate', () => {
    it('replans from review', () => {
      deciderSpec(jobDecider).given(review).when({ type: 'RequestReplan', ...own }).then([{ type: 'GenerationJobReplanRequested', data: fact(NOW) }]);
    });

    it('not while a build runs, but from a failed build', () => {
      deciderSpec(jobDecider)
        .given(generating)
        .when({ type: 'RequestReplan', ...own })
        .thenRefuses({ status: 400, code: 'invalid_request', message: 'This job is in stage "generating"; regenerate?stage=plan is only possible in "awaiting_approval" or "review" (or a failed analysis or plan).' });
      const failedPlan: JobEvent = { type: 'GenerationJobFailed', data: { ...fact(), stage: 'planning', error: { code: 'engine_failed', message: 'down' } } };
      deciderSpec(jobDecider).given([created, analysisStarted, planningStarted, failedPlan]).when({ type: 'RequestReplan', ...own }).then([{ type: 'GenerationJobReplanRequested', data: fact(NOW) }]);
    });

    it('a paid rebuild starts from the revision its credit was spent for', () => {
      deciderSpec(jobDecider).given(review).when({ type: 'StartRebuild', ...moved(5), build: 2 }).then([{ type: 'GenerationJobRebuildRequested', data: { ...fact(NOW), build: 2 } }]);
    });

    it('a rebuild already started records nothing (the request and the worker both settle it)', () => {
      const rebuilding: JobEvent = { type: 'GenerationJobRebuildRequested', data: { ...fact(), build: 2 } };
      deciderSpec(jobDecider).given([...review, rebuilding]).when({ type: 'StartRebuild', ...moved(5), build: 2 }).then([]);
    });

    it('a job that moved on after the credit was spent is not rebuilt (its credit goes back)', () => {
      const replanned: JobEvent = { type: 'GenerationJobReplanRequested', data: fact() };
      deciderSpec(jobDecider).given([...review, replanned]).when({ type: 'StartRebuild', ...moved(5), build: 2 }).thenRefuses(JobMovedOn);
    });
  });

  describe('publish', () => {
    const listing = { id: 'lst_1', object: 'listing', status: 'published' };

    it('records the listing made from the job in review, and the job as it then reads', () => {
      const data = { ...fact(NOW), listing, job: {} as Record<string, unknown> };
      data.job = toPublicJob({ ...review.reduce<JobState | undefined>(evolveJob, undefined)!, stage: 'published', listing, updated_at: NOW });
      deciderSpec(jobDecider).given(review).when({ type: 'Publish', ...own, ...moved(5), listing }).then([{ type: 'GenerationJobPublished', data }]);
    });

    it('only from review: a published job is not published twice', () => {
      const publishedEvent: JobEvent = { type: 'GenerationJobPublished', data: { ...fact(), listing, job: {} } };
      deciderSpec(jobDecider)
        .given([...review, publishedEvent])
        .when({ type: 'Publish', ...own, ...moved(6), listing })
        .thenRefuses({ status: 400, code: 'invalid_request', message: 'This job is in stage "published"; publish is only possible in "review".' });
    });

    it('a job that moved since its listing was made is a lost race (409)', () => {
      deciderSpec(jobDecider).given(review).when({ type: 'Publish', ...own, ...moved(4), listing }).thenRefuses(JobMovedOn);
    });
  });

  it('folds credits_spent: a rebuild costs one, a failed paid build gives it back', () => {
    const rebuilding: JobEvent = { type: 'GenerationJobRebuildRequested', data: { ...fact(), build: 2 } };
    const failed: JobEvent = { type: 'GenerationJobFailed', data: { ...fact(), stage: 'generating', error: { code: 'artifact_invalid', message: 'bad' }, build: 2 } };
    const fold = (events: JobEvent[]) => events.reduce(jobDecider.evolve, jobDecider.initialState());
    expect(fold([...review, rebuilding]).job?.credits_spent).toBe(2);
    expect(fold([...review, rebuilding, failed])).toMatchObject({ job: { credits_spent: 1, build_paid: false }, revision: 7, rebuilds: [2] });
  });
});
