import { Body, Controller, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidateNested } from 'class-validator';
import { SETTINGS, Settings } from '../config/settings';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { BLOB_STORE, BlobStore, MAX_PARTS, SHA256_HEX } from '../storage/blob-store';
import { blobsOfMode } from '../storage/mode-staging';
import {
  ALLOWED_EXTENSIONS,
  assertAllowedExtension,
  assertOwnStoragePath,
  assertWithinMaxBytes,
  extensionOf,
  sanitizeFileName,
  uploadPath,
} from './upload-policy';
import { PART_URLS_PER_ANSWER, UploadGrants } from './upload-grants';
import { LongRunning } from '../platform/long-running';

export class CreateUploadDto {
  @IsString()
  @Length(1, 255)
  file_name: string;

  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  file_size: number;

  /** Lowercase hex SHA-256 of the bytes: the upload URL then takes those bytes only (issue 41). */
  @IsOptional()
  @Matches(SHA256_HEX, { message: 'sha256 must be 64 lowercase hexadecimal characters' })
  sha256?: string;
}

export class CheckUploadDto {
  @IsString()
  @Length(1, 1024)
  storage_path: string;
}

export class MultipartDto extends CheckUploadDto {
  @IsString()
  @Length(1, 2048)
  upload_id: string;
}

export class ResignPartsDto extends MultipartDto {
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(PART_URLS_PER_ANSWER)
  @IsInt({ each: true })
  @Min(1, { each: true })
  part_numbers?: number[];
}

export class CompletedPartDto {
  @IsInt()
  @Min(1)
  @Max(MAX_PARTS)
  part_number: number;

  @IsString()
  @Length(1, 200)
  etag: string;
}

export class CompleteUploadDto extends MultipartDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PARTS)
  @ValidateNested({ each: true })
  @Type(() => CompletedPartDto)
  parts: CompletedPartDto[];
}

/** Upload grants (spec part 4): the bytes go straight to storage through the signed URL. */
@Controller('v1/uploads')
@RequireScope('models:upload', 'datasets:upload')
export class UploadsController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(BLOB_STORE) private readonly store: BlobStore,
    private readonly grants: UploadGrants,
  ) {}

  @Get()
  limits() {
    return { max_bytes: this.settings.uploads.maxBytes, extensions: ALLOWED_EXTENSIONS };
  }

  /**
   * The URL accepts exactly the declared size, so the declaration is also the cap. Above the
   * multipart threshold, a multipart upload too, with its first part URLs.
   */
  @Post()
  @HttpCode(200)
  async grant(@Auth() auth: AuthContext, @Body() body: CreateUploadDto) {
    const fileName = sanitizeFileName(body.file_name);
    const extension = extensionOf(fileName);
    assertAllowedExtension(extension, 'file_name');
    assertWithinMaxBytes(body.file_size, this.settings.uploads.maxBytes, 'file_size');
    const storagePath = uploadPath(auth.accountId, fileName);
    const grant = await this.grants.grant(blobsOfMode(this.store, auth.mode), auth.mode, storagePath, body.file_size, body.sha256);
    const { multipart, ...single } = grant;
    return {
      storage_path: storagePath, ...single, file_name: fileName, file_size: body.file_size, file_extension: extension,
      ...(body.sha256 && { sha256: body.sha256 }), ...(multipart && { multipart }),
    };
  }

  /** Part URLs of a multipart upload in progress, PART_URLS_PER_ANSWER at most: the part_numbers asked for, or the first ones. */
  @Post('parts')
  @HttpCode(200)
  parts(@Auth() auth: AuthContext, @Body() body: ResignPartsDto) {
    assertOwnStoragePath(auth.accountId, body.storage_path);
    return this.grants.resign(blobsOfMode(this.store, auth.mode), auth.mode, body.storage_path, body.upload_id, body.part_numbers);
  }

  /** Joins the parts: the file is at storage_path whole, or (400 naming the part) nothing changed. */
  @Post('complete')
  @LongRunning()
  @HttpCode(200)
  complete(@Auth() auth: AuthContext, @Body() body: CompleteUploadDto) {
    assertOwnStoragePath(auth.accountId, body.storage_path);
    return this.grants.complete(blobsOfMode(this.store, auth.mode), auth.mode, body.storage_path, body.upload_id, body.parts);
  }

  @Post('abort')
  @HttpCode(200)
  abort(@Auth() auth: AuthContext, @Body() body: MultipartDto) {
    assertOwnStoragePath(auth.accountId, body.storage_path);
    return this.grants.abort(blobsOfMode(this.store, auth.mode), auth.mode, body.storage_path, body.upload_id);
  }

  @Put()
  async check(@Auth() auth: AuthContext, @Body() body: CheckUploadDto) {
    assertOwnStoragePath(auth.accountId, body.storage_path);
    const object = await blobsOfMode(this.store, auth.mode).stat(body.storage_path);
    return { exists: Boolean(object), size: object?.size ?? 0 };
  }
}
