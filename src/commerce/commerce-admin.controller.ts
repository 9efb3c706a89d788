import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { modeParam } from '../platform/mode';
import { IdempotencyKey } from '../idempotency/idempotent-requests';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { Errors } from '../platform/errors';
import { parseCursor, parseLimit } from '../platform/pagination';
import { BOOTSTRAP_OPERATOR, currentActor, recordReason } from '../platform/request-context';
import { AdoptMovementCommand, adoptionReason } from './commands/adopt-movement';
import { CloseDisputeCommand } from './commands/dispute-purchase';
import { RefundPurchaseCommand } from './commands/refund-purchase';
import { DisputeQueries } from './dispute-queries';
import { ParkedProcessorEvents } from './parked-processor-events';
import { AdoptMovementDto, CloseDisputeDto, RefundPurchaseDto } from './dto';

const DISPUTE_STATUSES = ['open', 'won', 'lost'] as const;

/** Operator API of commerce (`svc purchases refund`, `svc disputes ...`), behind ADMIN_TOKEN. */
@Controller('admin')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class CommerceAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly disputes: DisputeQueries,
    private readonly parked: ParkedProcessorEvents,
  ) {}

  /**
   * All of the purchase that is not refunded yet, or `amount_cents` of it. With an
   * `Idempotency-Key`, a retry under the same key is the same processor refund (issue 38): the
   * key as the idempotency hook took it (issue 39), which has already answered a replay.
   */
  @Post('purchases/:id/refund')
  @HttpCode(200)
  refund(@Param('id') id: string, @Body() body: RefundPurchaseDto, @IdempotencyKey() key?: string) {
    if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
      throw Errors.validationFailed('Invalid header "Idempotency-Key": must be 1-255 printable characters without spaces.');
    }
    recordReason(body?.reason);
    return this.commands.execute(new RefundPurchaseCommand(id, body?.amount_cents, key));
  }

  /**
   * `svc ledger adopt`: books a refund or fee the processor has and the books do not (issue 38,
   * defect 5), with who adopted it (the operator signed in; the bootstrap ADMIN_TOKEN is `admin`) and why.
   */
  @Post('ledger/adopt')
  @HttpCode(200)
  adopt(@Body() body: AdoptMovementDto) {
    const reason = adoptionReason(body.reason);
    recordReason(reason);
    return this.commands.execute(new AdoptMovementCommand(body.mode, body.processor_id, reason, currentActor()?.id ?? BOOTSTRAP_OPERATOR));
  }

  /** Disputes of one mode, newest first, optionally of one status. */
  @Get('disputes')
  list(@Query('mode') mode?: unknown, @Query('status') status?: unknown, @Query('limit') limit?: unknown, @Query('cursor') cursor?: unknown) {
    if (status !== undefined && !DISPUTE_STATUSES.includes(status as never)) {
      throw Errors.validationFailed(`Invalid field "status": must be one of ${DISPUTE_STATUSES.join(', ')}.`);
    }
    return this.disputes.list(modeParam(mode, true)!, {
      status: status as (typeof DISPUTE_STATUSES)[number] | undefined,
      limit: parseLimit(limit, { fallback: 100, max: 1000 }),
      cursor: parseCursor(cursor),
    });
  }

  /** Processor events no purchase took (a dispute or partial refund of an unknown payment), kept for an operator (`svc ledger parked`). */
  @Get('ledger/parked')
  async parkedEvents(@Query('mode') mode?: unknown) {
    return { items: await this.parked.list(modeParam(mode, true)!) };
  }

  /** Settles a dispute at the processor (the sandbox's; Stripe settles its own) and records the outcome. */
  @Post('disputes/:id/close')
  @HttpCode(200)
  close(@Param('id') id: string, @Body() body: CloseDisputeDto) {
    recordReason(body.reason);
    return this.commands.execute(new CloseDisputeCommand(id, body.outcome));
  }
}
