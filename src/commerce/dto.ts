import { IsIn, IsInt, IsOptional, IsString, IsUrl, Length, MaxLength, Min } from 'class-validator';

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
