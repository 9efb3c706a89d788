import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { MODES } from '../platform/mode';

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

export class PayoutDestinationDto extends PayoutsAccountDto {
  @Matches(/^acct_[A-Za-z0-9]{1,64}$/, { message: 'must be a Stripe connected account id (acct_...)' })
  stripe_account: string;
}
