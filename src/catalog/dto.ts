import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import type { ListingDetails } from './events';
import { CURRENCY, DATASET_TYPES } from './listing';
import { extensionOf, normalizeExtension } from './upload-policy';
import { assertValidLicense } from './license';
import { Errors } from '../platform/errors';

/** The model card's bound (issue 40): 64 KiB of UTF-8. */
export const README_MAX_BYTES = 64 * 1024;

/** 400 naming readme when the model card is larger than README_MAX_BYTES. */
export function assertReadme(readme: string | undefined): void {
  if (readme === undefined || readme === null) return;
  const bytes = Buffer.byteLength(readme, 'utf8');
  if (bytes > README_MAX_BYTES) {
    throw Errors.validationFailed(`Invalid field "readme": at most ${README_MAX_BYTES} bytes (64 KiB) of UTF-8 Markdown; got ${bytes}.`);
  }
}

const MAX_PRICE = 100_000_000;
const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

/**
 * Metadata every listing body shares, all optional. Subclasses add the fields whose
 * presence differs (class-validator merges a parent's @IsOptional into a child, so a
 * field is declared once, in the class that knows whether it is required).
 */
export class ListingMetadataDto {
  @IsOptional() @IsString() @MaxLength(20000)
  description?: string;

  @IsOptional() @IsString() @MaxLength(64)
  category?: string;

  @IsOptional() @IsString() @Transform(trim) @Length(1, 64)
  version?: string;

  /** Fractions fail here (validation_failed); 1-99 fail later with price_too_low. */
  @IsOptional() @IsInt() @Max(MAX_PRICE)
  price_cents?: number;

  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(64, { each: true })
  tags?: string[];

  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(64, { each: true })
  frameworks?: string[];

  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(64, { each: true })
  hardware?: string[];

  @IsOptional() @IsArray() @ArrayMaxSize(50) @IsString({ each: true }) @MaxLength(64, { each: true })
  sensors?: string[];

  @IsOptional() @IsBoolean()
  ros_compatible?: boolean;

  @IsOptional() @IsBoolean()
  jetson_compatible?: boolean;

  @IsOptional() @IsBoolean()
  isaac_sim_compatible?: boolean;

  /** The model card, Markdown; its 64 KiB bound is in bytes of UTF-8 (assertReadme; the body limit stops the absurd first). */
  @IsOptional() @IsString()
  readme?: string;
}

/** PATCH of a model, dataset or listing: price, version, metadata; the file is fixed. */
export class UpdateListingDto extends ListingMetadataDto {
  @IsOptional() @IsString() @Transform(trim) @Length(1, 200)
  title?: string;

  @IsOptional() @IsString() @MaxLength(100)
  license?: string;
}

/** A draft from POST /v1/listings: everything but the title may default. */
export class DraftListingDto extends ListingMetadataDto {
  @IsString() @Transform(trim) @Length(1, 200)
  title: string;

  @IsOptional() @IsString() @Length(1, 64)
  type?: string;

  @IsOptional() @IsString() @MaxLength(100)
  license?: string;

  @IsOptional() @IsString() @Length(1, 1024)
  storage_path?: string;

  @IsOptional() @IsString() @Length(1, 255)
  file_name?: string;

  @IsOptional() @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER)
  file_size?: number;

  @IsOptional() @IsString() @Length(1, 20)
  file_extension?: string;
}

/** POST /v1/models (decisions section 5 names the required fields). */
export class PublishModelDto extends ListingMetadataDto {
  @IsString() @Transform(trim) @Length(1, 200)
  title: string;

  @IsString() @Length(1, 64)
  type: string;

  @IsString() @Length(1, 100)
  license: string;

  @IsString() @Length(1, 1024)
  storage_path: string;

  @IsString() @Length(1, 255)
  file_name: string;

  @IsInt() @Min(1) @Max(Number.MAX_SAFE_INTEGER)
  file_size: number;

  @IsOptional() @IsString() @Length(1, 20)
  file_extension?: string;
}

/** POST /v1/datasets: a draft whose data arrives as shards. */
export class CreateDatasetDto extends ListingMetadataDto {
  @IsString() @Transform(trim) @Length(1, 200)
  title: string;

  @IsOptional() @IsIn(DATASET_TYPES)
  type?: string;

  @IsOptional() @IsString() @MaxLength(100)
  license?: string;
}

export function metadataChanges(body: UpdateListingDto): Partial<Omit<ListingDetails, 'file'>> {
  assertValidLicense(body.license);
  assertReadme(body.readme);
  const changes: Partial<Omit<ListingDetails, 'file'>> = {};
  const fields = [
    'title', 'description', 'category', 'license', 'version', 'tags', 'frameworks', 'hardware', 'sensors',
    'ros_compatible', 'jetson_compatible', 'isaac_sim_compatible', 'readme',
  ] as const;
  for (const field of fields) {
    if (body[field] !== undefined && body[field] !== null) (changes as Record<string, unknown>)[field] = body[field];
  }
  if (body.price_cents !== undefined && body.price_cents !== null) changes.price = { amount: body.price_cents, currency: CURRENCY };
  return changes;
}

export function listingDetails(body: DraftListingDto | PublishModelDto | CreateDatasetDto, defaults: { type: string }): ListingDetails {
  assertValidLicense(body.license);
  assertReadme(body.readme);
  const f = body as DraftListingDto;
  const file =
    f.storage_path && f.file_name && f.file_size
      ? {
          name: f.file_name,
          size: f.file_size,
          extension: f.file_extension ? normalizeExtension(f.file_extension) : extensionOf(f.file_name),
          storage_path: f.storage_path,
        }
      : null;
  return {
    title: body.title,
    description: body.description ?? '',
    type: body.type ?? defaults.type,
    category: body.category ?? '',
    license: body.license ?? '',
    version: body.version ?? '1.0.0',
    price: { amount: body.price_cents ?? 0, currency: CURRENCY },
    tags: body.tags ?? [],
    frameworks: body.frameworks ?? [],
    hardware: body.hardware ?? [],
    sensors: body.sensors ?? [],
    ros_compatible: body.ros_compatible ?? false,
    jetson_compatible: body.jetson_compatible ?? false,
    isaac_sim_compatible: body.isaac_sim_compatible ?? false,
    file,
    // Only when given: drafts without a model card record what they recorded before it existed.
    ...(body.readme !== undefined && body.readme !== null ? { readme: body.readme } : {}),
  };
}
