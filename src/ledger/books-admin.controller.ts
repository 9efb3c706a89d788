import { Body, Controller, Get, HttpCode, Post, Query, UseGuards } from '@nestjs/common';
import { Allow, IsIn, IsString } from 'class-validator';
import { IdempotencyKey } from '../idempotency/idempotent-requests';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { currentActor, recordReason } from '../platform/request-context';
import { MODES, modeParam } from '../platform/mode';
import { AdjustingEntries } from './adjusting-entries';
import { Books } from './books';
import { LedgerReports, reportRange } from './ledger-report';

export class ClosePeriodDto {
  @IsIn(MODES)
  mode: 'test' | 'live';

  /** Checked by Books.close: the period's last day, yyyy-mm-dd. */
  @IsString()
  through: string;
}

/** `svc ledger adjust`: the fields are checked by AdjustingEntries, each error naming its field. */
export class AdjustDto {
  @IsIn(MODES)
  mode: 'test' | 'live';

  @Allow()
  debit_account: unknown;

  @Allow()
  credit_account: unknown;

  @Allow()
  amount_cents: unknown;

  @Allow()
  reason: unknown;
}

/** Closing the books (`svc ledger close|periods|verify --digests|report`), behind ADMIN_TOKEN (finance role). */
@Controller('admin/ledger')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class BooksAdminController {
  constructor(
    private readonly books: Books,
    private readonly adjusting: AdjustingEntries,
    private readonly reports: LedgerReports,
  ) {}

  /**
   * `svc ledger report`: the period [from, to)'s income statement, the balance sheet at `to`
   * (and at `from`), fee revenue reconciled with the creators' fees, and each payout with the
   * balance transactions it paid, all from the journal's postings.
   */
  @Get('report')
  report(@Query('mode') mode?: unknown, @Query('from') from?: unknown, @Query('to') to?: unknown) {
    const m = modeParam(mode, true)!;
    return this.reports.report(m, reportRange(from, to));
  }

  /** An adjusting entry: one debit and one credit between platform accounts or a creator's payable, with its reason. */
  @Post('adjust')
  @HttpCode(201)
  adjust(@Body() body: AdjustDto, @IdempotencyKey() key?: string) {
    recordReason(body.reason);
    return this.adjusting.adjust({ ...body, actor: currentActor()?.id ?? null, idempotency_key: key });
  }

  /** Closes the mode's books through a day: PeriodClosed with the trial balance and the chain digest. */
  @Post('close')
  @HttpCode(201)
  close(@Body() body: ClosePeriodDto, @IdempotencyKey() key?: string) {
    return this.books.close(body.mode, body.through, currentActor()?.id ?? null, new Date(), key);
  }

  /** The mode's closed periods, oldest first. */
  @Get('periods')
  periods(@Query('mode') mode?: unknown) {
    return this.books.periods(modeParam(mode, true)!);
  }

  /** The journal's hash chain recomputed from the log: the first entry that differs, per mode. */
  @Get('digests')
  digests(@Query('mode') mode?: unknown) {
    return this.books.verifyDigests({ mode: modeParam(mode, false) });
  }
}
