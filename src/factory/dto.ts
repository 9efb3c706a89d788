import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';

/** Spec part 4 and issue 12's list: a prompt is a non-blank string of at most 4,000 characters. */
export const MAX_PROMPT_LENGTH = 4000;

export class CreateJobDto {
  @IsString()
  @Length(1, MAX_PROMPT_LENGTH)
  @Matches(/\S/, { message: 'must not be blank' })
  prompt: string;
}

export class AnswerDto {
  @IsString()
  @Length(1, 64)
  id: string;

  @IsString()
  @Length(1, 2000)
  @Matches(/\S/, { message: 'must not be blank' })
  answer: string;
}

export class ClarifyJobDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @ValidateNested({ each: true })
  @Type(() => AnswerDto)
  answers: AnswerDto[];
}

export class PublishJobDto {
  /** 1-99 passes here and is refused by the catalog's own rule (price_too_low). */
  @IsInt()
  @Min(0)
  @Max(100_000_000)
  price_cents: number;
}
