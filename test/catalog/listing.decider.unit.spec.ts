import type { ListingDetails, ListingDrafted, PublishedFile } from '../../src/catalog/events';
import { evolve, ListingCommand, listingDecider, ListingEvent, ListingState, toPublicObject } from '../../src/catalog/listing.decider';
import { deciderSpec } from '../support/decider-spec';

const NOW = '2026-01-01T00:00:00.000Z';
const LATER = '2026-01-01T00:05:00.000Z';
const SELLER = 'acct_seller';
const BUYER = 'acct_buyer';

const details = (): ListingDetails => ({
  title: 'Grasp Net',
  description: 'A grasping policy.',
  type: 'rl-policy',
  category: 'manipulation',
  license: 'MIT',
  version: '1.0.0',
  price: { amount: 500, currency: 'usd' },
  tags: ['grasp'],
  frameworks: ['onnx'],
  hardware: [],
  sensors: [],
  ros_compatible: false,
  jetson_compatible: false,
  isaac_sim_compatible: false,
  file: { name: 'grasp.onnx', size: 16, extension: '.onnx', storage_path: `user/${SELLER}/grasp.onnx` },
});

const draftedData = (): ListingDrafted => ({
  listing_id: 'lst_1',
  account_id: SELLER,
  mode: 'test',
  kind: 'model',
  slug: 'grasp-net',
  author: { slug: 'acme', name: 'Acme' },
  details: details(),
  created_at: NOW,
});
const files: PublishedFile[] = [{ name: 'grasp.onnx', size: 16, sha256: 'ab'.repeat(32), path: `published/${'ab'.repeat(32)}` }];

const drafted: ListingEvent = { type: 'ListingDrafted', data: draftedData() };
const draftState = evolve(undefined, drafted)!;
/** ListingPublished as a publish at `at` records it: the public object as it reads once published. */
const publishedAt = (at: string, state: ListingState = draftState): ListingEvent => {
  const published = { ...state, status: 'published' as const, validation_status: 'passed' as const, validation_errors: [], published_at: at, updated_at: at, published_files: files };
  return { type: 'ListingPublished', data: { listing_id: 'lst_1', account_id: SELLER, mode: 'test', listing: toPublicObject(published), files, published_at: at } };
};
const published = publishedAt(NOW);
const problem = { code: 'file_not_found', message: 'Nothing is stored at "user/acct_seller/grasp.onnx" yet; PUT the bytes to the upload_url first.' };
const failed = (errors = [problem]): ListingEvent => ({ type: 'ListingValidationFailed', data: { listing_id: 'lst_1', account_id: SELLER, mode: 'test', errors, failed_at: NOW } });

const publish = (account_id = SELLER): ListingCommand => ({ type: 'Publish', account_id, files, now: NOW });
const unpublish = (account_id = SELLER): ListingCommand => ({ type: 'Unpublish', account_id, now: LATER });
const update = (changes: Partial<ListingDetails>, account_id = SELLER): ListingCommand => ({ type: 'Update', account_id, changes, now: LATER });
const recordFailure = (problems = [problem]): ListingCommand => ({ type: 'RecordPublishFailure', account_id: SELLER, problems, now: NOW });
const download = (buyer: string): ListingCommand => ({ type: 'RecordDownload', buyer_account_id: buyer, now: LATER });

describe('listing decider', () => {
  describe('draft', () => {
    it('records the draft with its claimed slug', () => {
      deciderSpec(listingDecider).given([]).when({ type: 'Draft', drafted: draftedData(), publish: null }).then([drafted]);
    });

    it('drafts and publishes in one go (POST /v1/models), the publication at the draft time with the files it froze', () => {
      deciderSpec(listingDecider).given([]).when({ type: 'Draft', drafted: draftedData(), publish: files }).then([drafted, published]);
    });

    it('a listing id is drafted once: a second draft is a 409 conflict', () => {
      deciderSpec(listingDecider).given([drafted]).when({ type: 'Draft', drafted: draftedData(), publish: null }).thenRefuses({ status: 409, code: 'conflict' });
    });
  });

  describe('publish', () => {
    it('publishes a draft with the files it froze, carrying the public object as it then reads', () => {
      deciderSpec(listingDecider).given([drafted]).when(publish()).then([published]);
      expect((published.data as { listing: Record<string, unknown> }).listing).toMatchObject({ id: 'lst_1', slug: 'grasp-net', file: { sha256: 'ab'.repeat(32) } });
    });

    it('publishing a published listing records nothing', () => {
      deciderSpec(listingDecider).given([drafted, published]).when(publish()).then([]);
    });

    it('publishes an unpublished listing again', () => {
      const unpublished: ListingEvent = { type: 'ListingUnpublished', data: { listing_id: 'lst_1', account_id: SELLER, mode: 'test', listing: {}, unpublished_at: NOW } };
      const again = evolve(evolve(draftState, published), unpublished)!;
      deciderSpec(listingDecider).given([drafted, published, unpublished]).when({ ...publish(), now: LATER } as ListingCommand).then([publishedAt(LATER, again)]);
    });

    it("another account's listing is 404, never 403", () => {
      deciderSpec(listingDecider).given([drafted]).when(publish('acct_other')).thenRefuses({ status: 404, code: 'not_found', message: 'No such listing.' });
      deciderSpec(listingDecider).given([]).when(publish()).thenRefuses({ status: 404, code: 'not_found' });
    });
  });

  describe('a publish its checks refused', () => {
    it('is recorded, so the listing shows why', () => {
      deciderSpec(listingDecider).given([drafted]).when(recordFailure()).then([failed()]);
    });

    it('the same failure again records nothing', () => {
      deciderSpec(listingDecider).given([drafted, failed()]).when(recordFailure()).then([]);
    });

    it('a different failure is recorded', () => {
      const other = { code: 'validation_failed', message: 'Invalid field "file_size": the stored object has 5 bytes, not 16.' };
      deciderSpec(listingDecider).given([drafted, failed()]).when(recordFailure([other])).then([failed([other])]);
    });

    it('after a publish that passed, the same failure is recorded again', () => {
      const unpublished: ListingEvent = { type: 'ListingUnpublished', data: { listing_id: 'lst_1', account_id: SELLER, mode: 'test', listing: {}, unpublished_at: NOW } };
      deciderSpec(listingDecider).given([drafted, failed(), published, unpublished]).when(recordFailure()).then([failed()]);
    });
  });

  describe('unpublish', () => {
    it('unpublishes a published listing, carrying the public object', () => {
      const data = { listing_id: 'lst_1', account_id: SELLER, mode: 'test' as const, listing: {}, unpublished_at: LATER };
      data.listing = toPublicObject({ ...evolve(draftState, published)!, status: 'unpublished', updated_at: LATER });
      deciderSpec(listingDecider).given([drafted, published]).when(unpublish()).then([{ type: 'ListingUnpublished', data }]);
    });

    it('a draft that was never published stays a draft: nothing recorded', () => {
      deciderSpec(listingDecider).given([drafted]).when(unpublish()).then([]);
    });

    it("another account's listing is 404", () => {
      deciderSpec(listingDecider).given([drafted, published]).when(unpublish('acct_other')).thenRefuses({ status: 404, code: 'not_found' });
    });
  });

  describe('update', () => {
    it('records the changes', () => {
      const changes = { version: '1.0.1', price: { amount: 900, currency: 'usd' } };
      deciderSpec(listingDecider)
        .given([drafted, published])
        .when(update(changes))
        .then([{ type: 'ListingUpdated', data: { listing_id: 'lst_1', account_id: SELLER, mode: 'test', changes, updated_at: LATER } }]);
    });

    it('an update with no changes records nothing', () => {
      deciderSpec(listingDecider).given([drafted]).when(update({})).then([]);
    });

    it("another account's listing is 404", () => {
      deciderSpec(listingDecider).given([drafted]).when(update({ version: '2.0.0' }, 'acct_other')).thenRefuses({ status: 404, code: 'not_found' });
    });
  });

  describe('downloads', () => {
    it("a buyer's download is recorded for the seller, naming the asset", () => {
      deciderSpec(listingDecider)
        .given([drafted, published])
        .when(download(BUYER))
        .then([
          {
            type: 'AssetDownloaded',
            data: {
              listing_id: 'lst_1',
              account_id: SELLER,
              buyer_account_id: BUYER,
              mode: 'test',
              asset: { id: 'lst_1', slug: 'grasp-net', title: 'Grasp Net', type: 'rl-policy' },
              downloaded_at: LATER,
            },
          },
        ]);
    });

    it("the seller fetching their own file is not a download", () => {
      deciderSpec(listingDecider).given([drafted, published]).when(download(SELLER)).then([]);
    });

    it('counts downloads in the folded listing', () => {
      const downloaded = listingDecider.decide(download(BUYER), evolve(draftState, published));
      const state = [drafted, published, ...downloaded, ...downloaded].reduce<ListingState | undefined>(evolve, undefined);
      expect(state?.downloads).toBe(2);
    });
  });

  describe('background inspection (issue 40)', () => {
    const inspected: PublishedFile[] = [{ ...files[0], inspection: { format: 'onnx', parameters: 74 } }];
    const requested: ListingEvent = { type: 'ListingInspectionRequested', data: { listing_id: 'lst_1', account_id: SELLER, mode: 'test', files, requested_at: NOW } };
    const complete = (problems: { code: string; message: string }[] = [], requested_at = NOW): ListingCommand => ({ type: 'CompleteInspection', requested_at, files: inspected, problems, now: LATER });
    const bad = { code: 'invalid_format', message: '"grasp.onnx" is not an ONNX model: truncated' };

    it('a publish with files left for the worker records the request; the listing is pending and stays a draft', () => {
      deciderSpec(listingDecider).given([drafted]).when({ ...publish(), background: true } as ListingCommand).then([requested]);
      const state = [drafted, requested].reduce<ListingState | undefined>(evolve, undefined)!;
      expect([state.status, state.validation_status, state.pending_inspection]).toEqual(['draft', 'pending', { requested_at: NOW }]);
    });

    it('POST /v1/models drafts and requests the inspection in one append', () => {
      deciderSpec(listingDecider).given([]).when({ type: 'Draft', drafted: draftedData(), publish: files, background: true }).then([drafted, requested]);
    });

    it('publishing a pending listing again records nothing', () => {
      deciderSpec(listingDecider).given([drafted, requested]).when({ ...publish(), background: true } as ListingCommand).then([]);
      deciderSpec(listingDecider).given([drafted, requested]).when(publish()).then([]);
    });

    it('a pass publishes with the inspected files, and clears the pending request', () => {
      const passed = publishedAt(LATER, [drafted, requested].reduce<ListingState | undefined>(evolve, undefined)!);
      const data = { ...(passed.data as object), files: inspected, listing: toPublicObject({ ...[drafted, requested].reduce<ListingState | undefined>(evolve, undefined)!, status: 'published', validation_status: 'passed', validation_errors: [], published_at: LATER, updated_at: LATER, published_files: inspected }) };
      deciderSpec(listingDecider).given([drafted, requested]).when(complete()).then([{ type: 'ListingPublished', data } as ListingEvent]);
      const state = [drafted, requested, { type: 'ListingPublished', data } as ListingEvent].reduce<ListingState | undefined>(evolve, undefined)!;
      expect([state.status, state.validation_status, state.pending_inspection]).toEqual(['published', 'passed', null]);
    });

    it('a failure records ListingValidationFailed marked background, with the public object (the webhook payload)', () => {
      const [event] = listingDecider.decide(complete([bad]), [drafted, requested].reduce<ListingState | undefined>(evolve, undefined));
      expect(event).toMatchObject({ type: 'ListingValidationFailed', data: { errors: [bad], background: true, failed_at: LATER, listing: { id: 'lst_1', slug: 'grasp-net' } } });
      const state = [drafted, requested, event].reduce<ListingState | undefined>(evolve, undefined)!;
      expect([state.status, state.validation_status, state.validation_errors, state.pending_inspection]).toEqual(['draft', 'failed', [bad], null]);
    });

    it('an outcome for a request already decided, or for another request, records nothing (a replay after a crash)', () => {
      const [outcome] = listingDecider.decide(complete(), [drafted, requested].reduce<ListingState | undefined>(evolve, undefined));
      deciderSpec(listingDecider).given([drafted, requested, outcome]).when(complete()).then([]);
      deciderSpec(listingDecider).given([drafted, requested]).when(complete([], LATER)).then([]);
      deciderSpec(listingDecider).given([drafted]).when(complete()).then([]);
    });
  });
});
