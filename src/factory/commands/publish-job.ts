import { Command, CommandBus, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DraftListingCommand } from '../../catalog/commands/draft-listing';
import type { ListingDetails } from '../../catalog/events';
import { CURRENCY, ListingState, toListingObject } from '../../catalog/listing';
import { ListingStore } from '../../catalog/listing-store';
import type { AuthContext } from '../../platform/auth/auth-context';
import { assertPublishable, PublicJob, toPublicJob } from '../job.decider';
import { JobStreams } from '../job-streams';

/** publish { price_cents }: the draft becomes a published model listing of the creator. */
export class PublishGenerationJobCommand extends Command<PublicJob> {
  constructor(readonly auth: AuthContext, readonly jobId: string, readonly priceCents: number) {
    super();
  }
}

@CommandHandler(PublishGenerationJobCommand)
export class PublishGenerationJobHandler implements ICommandHandler<PublishGenerationJobCommand> {
  constructor(
    private readonly jobs: JobStreams,
    private readonly commands: CommandBus,
    private readonly listings: ListingStore,
  ) {}

  async execute({ auth, jobId, priceCents }: PublishGenerationJobCommand): Promise<PublicJob> {
    const job = await this.jobs.loadOwn(auth, jobId);
    const { state } = job;
    assertPublishable(state);
    const { draft, artifact } = state;
    const details: ListingDetails = {
      title: draft.title,
      description: draft.description,
      type: draft.type,
      category: draft.category,
      license: draft.license,
      version: '0.1.0',
      price: { amount: priceCents, currency: CURRENCY },
      tags: draft.tags,
      frameworks: artifact.file_name.endsWith('.onnx') ? ['onnx'] : ['urdf'],
      hardware: [],
      sensors: [],
      // A robot package is a ROS 2 package (package.xml format 3, ament_cmake, a launch file
      // for robot_state_publisher), checked as such before it was stored (issue 40 item 6).
      ros_compatible: artifact.file_name.endsWith('.zip'),
      jetson_compatible: false,
      isaac_sim_compatible: false,
      file: { name: artifact.file_name, size: artifact.size, extension: artifact.file_name.slice(artifact.file_name.lastIndexOf('.')), storage_path: artifact.storage_path },
    };
    // One listing per job, whatever happens between the two appends: its id follows from
    // the job's, so a publish racing this one loses on the listing stream (409), and a
    // publish retried after a crash that left the listing but not GenerationJobPublished
    // finds that listing and finishes the move.
    const listingId = `lst_${state.id.slice('job_'.length)}`;
    const earlier = await this.listings.find(auth.mode, listingId);
    let created: ListingState;
    if (earlier && earlier.state.account_id === auth.accountId) created = earlier.state;
    // The catalog's own command: its price rules (price_too_low), file checks and freezing
    // apply as to any listing, and a failure there leaves the job in review untouched.
    else created = await this.commands.execute(new DraftListingCommand(auth, 'model', details, true, listingId));
    const listing = toListingObject(created);
    // Recorded only if the job is still where the listing was made from (a move since: 409 conflict).
    const published = await this.jobs.handle(auth.mode, state.id, { type: 'Publish', account_id: auth.accountId, listing, from_revision: job.revision, now: new Date().toISOString() });
    return toPublicJob(published.job!.state);
  }
}
