import { IsIn, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { MODES } from '../platform/mode';
import { MAX_REASON } from '../platform/request-context';

export class RunPayoutsDto {
  @IsIn(MODES)
  mode: 'test' | 'live';

  @IsOptional()
  @IsString()
  @Length(1, 100)
  account?: string;
}

export class PayoutsAccountDto {
  @IsString()
  @Length(1, 100)
  account: string;

  @IsIn(MODES)
  mode: 'test' | 'live';
}

/** A pause takes a reason: kept in the event's metadata; a named operator must give one (recordReason). */
export class PausePayoutsDto extends PayoutsAccountDto {
  @IsOptional()
  @IsString()
  @MaxLength(MAX_REASON)
  reason?: string;
}

export class PayoutDestinationDto extends PayoutsAccountDto {
  @Matches(/^acct_[A-Za-z0-9]{1,64}$/, { message: 'must be a Stripe connected account id (acct_...)' })
  stripe_account: string;
}
