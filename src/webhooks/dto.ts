import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { MAX_PREVIOUS_SECRET_SECONDS } from './commands/rotate-secret';

export class CreateWebhookEndpointDto {
  @IsString()
  @Length(1, 2048)
  url: string;

  /** Unknown types are dropped by the handler (spec part 4), so any strings pass here. */
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  events: string[];

  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string;
}

export class UpdateWebhookEndpointDto {
  @IsOptional()
  @IsString()
  @Length(1, 2048)
  url?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  events?: string[];

  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string;

  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class RotateWebhookSecretDto {
  /** Seconds the old secret keeps signing beside the new one: 0 (it stops now) to 7 days; default 24 hours. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_PREVIOUS_SECRET_SECONDS)
  expires_in?: number;
}
