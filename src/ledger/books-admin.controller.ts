import { Body, Controller, Get, HttpCode, Post, Query, Req, UseGuards } from '@nestjs/common';
import { Allow, IsIn, IsString } from 'class-validator';
import { modeParam } from '../admin/admin-params';
import { AdminGuard } from '../platform/auth/admin.guard';
import { WithoutApiKey } from '../platform/auth/auth-context';
import { MODES } from '../platform/mode';
import { AdjustingEntries } from './adjusting-entries';
import { Books } from './books';

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

/** Who asked, when the request says (named operators, issue 38 section 2); null otherwise. */
export function actorOf(request: unknown): string | null {
  const actor = (request as { actor?: unknown } | undefined)?.actor;
  if (typeof actor === 'string') return actor;
  if (actor && typeof actor === 'object' && typeof (actor as { name?: unknown }).name === 'string') return (actor as { name: string }).name;
  return null;
}

/** Closing the books (`svc ledger close|periods|verify --digests`), behind ADMIN_TOKEN. */
@Controller('admin/ledger')
@WithoutApiKey()
@UseGuards(AdminGuard)
export class BooksAdminController {
  constructor(
    private readonly books: Books,
    private readonly adjusting: AdjustingEntries,
  ) {}

  /** An adjusting entry: one debit and one credit between platform accounts or a creator's payable, with its reason. */
  @Post('adjust')
  @HttpCode(201)
  adjust(@Body() body: AdjustDto, @Req() request: unknown) {
    return this.adjusting.adjust({ ...body, actor: actorOf(request) });
  }

  /** Closes the mode's books through a day: PeriodClosed with the trial balance and the chain digest. */
  @Post('close')
  @HttpCode(201)
  close(@Body() body: ClosePeriodDto, @Req() request: unknown) {
    return this.books.close(body.mode, body.through, actorOf(request));
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
