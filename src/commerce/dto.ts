import { IsIn, IsInt, IsOptional, IsString, IsUrl, Length, Matches, MaxLength, Min } from 'class-validator';
import { MODES } from '../platform/mode';

import { MAX_REASON } from '../platform/request-context';

const WEB_URL = { protocols: ['http', 'https'], require_protocol: true, require_tld: false };

export class OpenPurchaseDto {
  /** The asset's id or slug. */
  @IsString()
  @Length(1, 200)
  asset: string;

  @IsOptional()
  @IsUrl(WEB_URL, { message: 'must be an http or https URL' })
  @MaxLength(2000)
  success_url?: string;

  @IsOptional()
  @IsUrl(WEB_URL, { message: 'must be an http or https URL' })
  @MaxLength(2000)
  cancel_url?: string;
}

export class CloseDisputeDto {
  @IsIn(['won', 'lost'])
  outcome: 'won' | 'lost';

  /** Why: kept in the events' metadata; a named operator must give one (recordReason). */
  @IsOptional()
  @IsString()
  @MaxLength(MAX_REASON)
  reason?: string;
}

export class RefundPurchaseDto {
  /** Part of the payment, in cents; absent: all of it that is not refunded yet. */
  @IsOptional()
  @IsInt()
  @Min(1)
  amount_cents?: number;

  /** Why: kept in the events' metadata; a named operator must give one (recordReason). */
  @IsOptional()
  @IsString()
  @MaxLength(MAX_REASON)
  reason?: string;
}

/** `svc ledger adopt`: a processor movement (as reconcile lists it) and why it is booked by hand. */
export class AdoptMovementDto {
  @IsIn(MODES)
  mode: 'test' | 'live';

  @IsString()
  @Matches(/^[A-Za-z0-9_]{1,200}$/, { message: 'must be the processor\'s id of a movement (re_..., a fee id), as svc ledger reconcile lists it' })
  processor_id: string;

  @IsString()
  @Length(1, 500)
  reason: string;
}
