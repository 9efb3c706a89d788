import { Type } from 'class-transformer';
import { ArrayUnique, IsArray, IsEmail, IsIn, IsInt, IsISO8601, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { SCOPES } from '../accounts/scopes';
import { MODES } from '../platform/mode';
import { SLUG_SHAPE } from '../platform/slug';

export class CreateAccountDto {
  @IsString()
  @Length(1, 200)
  name: string;

  @IsEmail()
  email: string;

  @IsOptional()
  @Matches(SLUG_SHAPE, { message: 'must be lowercase letters and digits separated by hyphens' })
  @Length(1, 60)
  slug?: string;
}

export class CreateKeyDto {
  @IsString()
  @Length(1, 100)
  account: string;

  @IsIn(MODES)
  mode: 'test' | 'live';

  @IsOptional()
  @IsIn(['free', 'premium'])
  tier?: 'free' | 'premium';

  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(SCOPES, { each: true, message: `must list only these scopes: ${SCOPES.join(', ')}` })
  scopes?: string[];

  @IsOptional()
  @IsString()
  @Length(0, 100)
  name?: string;

  @IsOptional()
  @IsISO8601({ strict: true })
  expires_at?: string;
}

export class GrantCreditsDto {
  @IsString()
  @Length(1, 100)
  account: string;

  @IsIn(MODES)
  mode: 'test' | 'live';

  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000_000)
  amount: number;
}
