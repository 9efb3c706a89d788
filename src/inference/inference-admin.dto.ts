import { IsNumber, IsString, Length, Max, Min } from 'class-validator';

export class SetPriceDto {
  @IsString()
  @Length(1, 100)
  model: string;

  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 6 })
  @Min(0)
  @Max(1_000_000)
  input_usd_per_million: number;

  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 6 })
  @Min(0)
  @Max(1_000_000)
  output_usd_per_million: number;
}
