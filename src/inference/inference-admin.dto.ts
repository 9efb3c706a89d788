import { IsNumber, IsString, Length, Max, Min, ValidateBy } from 'class-validator';

/**
 * At most 6 decimal places, for any number JavaScript can hold: class-validator's own
 * maxDecimalPlaces reads the decimal point of the number's text and throws on one printed in
 * exponent form (1e-7), which reached clients as a 500.
 */
const AtMostSixDecimals = () =>
  ValidateBy({
    name: 'atMostSixDecimals',
    validator: {
      validate: (value: unknown) => typeof value === 'number' && Number(value.toFixed(6)) === value,
      defaultMessage: () => '$property must have at most 6 decimal places',
    },
  });

export class SetPriceDto {
  @IsString()
  @Length(1, 100)
  model: string;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @AtMostSixDecimals()
  @Min(0)
  @Max(1_000_000)
  input_usd_per_million: number;

  @IsNumber({ allowNaN: false, allowInfinity: false })
  @AtMostSixDecimals()
  @Min(0)
  @Max(1_000_000)
  output_usd_per_million: number;
}
