import { Body, Controller, Get, HttpCode, Inject, Post, Put } from '@nestjs/common';
import { IsInt, IsString, Length, Max, Min } from 'class-validator';
import { SETTINGS, Settings } from '../config/settings';
import { Auth, AuthContext, RequireScope } from '../platform/auth/auth-context';
import { BLOB_STORE, BlobStore, UPLOAD_URL_TTL_SECONDS } from '../storage/blob-store';
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

export class CreateUploadDto {
  @IsString()
  @Length(1, 255)
  file_name: string;

  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  file_size: number;
}

export class CheckUploadDto {
  @IsString()
  @Length(1, 1024)
  storage_path: string;
}

/** Upload grants (spec part 4): the bytes go straight to storage through the signed URL. */
@Controller('v1/uploads')
@RequireScope('models:upload', 'datasets:upload')
export class UploadsController {
  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(BLOB_STORE) private readonly store: BlobStore,
  ) {}

  @Get()
  limits() {
    return { max_bytes: this.settings.uploadMaxBytes, extensions: ALLOWED_EXTENSIONS };
  }

  /** The URL accepts at most the declared size, so the declaration is also the cap. */
  @Post()
  @HttpCode(200)
  async grant(@Auth() auth: AuthContext, @Body() body: CreateUploadDto) {
    const fileName = sanitizeFileName(body.file_name);
    const extension = extensionOf(fileName);
    assertAllowedExtension(extension, 'file_name');
    assertWithinMaxBytes(body.file_size, this.settings.uploadMaxBytes, 'file_size');
    const storagePath = uploadPath(auth.accountId, fileName);
    const signed = await blobsOfMode(this.store, auth.mode).signUpload(storagePath, { expiresIn: UPLOAD_URL_TTL_SECONDS, maxBytes: body.file_size });
    return {
      storage_path: storagePath,
      upload_url: signed.url,
      token: signed.token,
      expires_in: signed.expiresIn,
      file_name: fileName,
      file_size: body.file_size,
      file_extension: extension,
    };
  }

  @Put()
  async check(@Auth() auth: AuthContext, @Body() body: CheckUploadDto) {
    assertOwnStoragePath(auth.accountId, body.storage_path);
    const object = await blobsOfMode(this.store, auth.mode).stat(body.storage_path);
    return { exists: Boolean(object), size: object?.size ?? 0 };
  }
}
