import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { parseCursor, parseLimit } from '../platform/pagination';
import { ApproveGenerationJobCommand } from './commands/approve-job';
import { ClarifyGenerationJobCommand } from './commands/clarify-job';
import { CreateGenerationJobCommand } from './commands/create-job';
import { PublishGenerationJobCommand } from './commands/publish-job';
import { RegenerateGenerationJobCommand } from './commands/regenerate-job';
import { ClarifyJobDto, CreateJobDto, PublishJobDto } from './dto';
import { JobQueries } from './job-queries';
import { assertJobId } from './job-streams';

const PAGE = { fallback: 20, max: 100 };

/** Generation jobs of the caller's account in the key's mode (spec part 4, decisions section 7). */
@Controller('v1/factory/jobs')
@RequireScope('factory:run')
export class JobsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly jobs: JobQueries,
  ) {}

  @Post()
  create(@Auth() auth: AuthContext, @Body() body: CreateJobDto) {
    return this.commands.execute(new CreateGenerationJobCommand(auth, body.prompt));
  }

  @Get()
  list(@Auth() auth: AuthContext, @Query('limit') limit?: string, @Query('cursor') cursor?: string) {
    return this.jobs.list(auth, parseLimit(limit, PAGE), parseCursor(cursor));
  }

  @Get(':id')
  async get(@Auth() auth: AuthContext, @Param('id') id: string) {
    assertJobId(id);
    const job = await this.jobs.find(auth, id);
    if (!job) throw Errors.notFound('factory job');
    return job;
  }

  @Post(':id/clarify')
  @HttpCode(200)
  clarify(@Auth() auth: AuthContext, @Param('id') id: string, @Body() body: ClarifyJobDto) {
    return this.commands.execute(new ClarifyGenerationJobCommand(auth, id, body.answers));
  }

  @Post(':id/approve')
  @HttpCode(200)
  approve(@Auth() auth: AuthContext, @Param('id') id: string) {
    return this.commands.execute(new ApproveGenerationJobCommand(auth, id));
  }

  @Post(':id/regenerate')
  @HttpCode(200)
  regenerate(@Auth() auth: AuthContext, @Param('id') id: string, @Query('stage') stage?: string) {
    if (stage !== 'plan' && stage !== 'build') throw Errors.validationFailed('Invalid query parameter "stage": must be "plan" or "build".');
    return this.commands.execute(new RegenerateGenerationJobCommand(auth, id, stage));
  }

  @Post(':id/publish')
  @HttpCode(200)
  publish(@Auth() auth: AuthContext, @Param('id') id: string, @Body() body: PublishJobDto) {
    return this.commands.execute(new PublishGenerationJobCommand(auth, id, body.price_cents));
  }
}
