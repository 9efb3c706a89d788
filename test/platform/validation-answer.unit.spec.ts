import 'reflect-metadata';
import { createValidationPipe } from '../../src/platform/http';
import { CompleteUploadDto } from '../../src/catalog/uploads.controller';
import { CreateDatasetDto, PublishModelDto } from '../../src/catalog/dto';
import { ClarifyJobDto } from '../../src/factory/dto';
import { CreateKeyDto } from '../../src/admin/admin.dto';
import { SetPriceDto } from '../../src/inference/inference-admin.dto';
import { ApiError } from '../../src/platform/errors';

const pipe = createValidationPipe();
async function refusal(metatype: any, value: unknown): Promise<{ status: number; code: string; message: string; errors: unknown }> {
  try {
    await pipe.transform(value, { type: 'body', metatype });
  } catch (e) {
    const error = e as ApiError;
    return { status: error.status, code: error.code, message: error.message, errors: error.extra.errors };
  }
  throw new Error('accepted');
}

/** Issue 39: every problem of a body at once, one per field, in our words, with a stable code. */
describe('whole validation answers', () => {
  it('names every missing field of a body in one message, and lists them', async () => {
    expect(await refusal(PublishModelDto, { title: 'x' })).toEqual({
      status: 400,
      code: 'validation_failed',
      message: 'Invalid request: "type" is required; "license" is required; "storage_path" is required; "file_name" is required; "file_size" is required.',
      errors: ['type', 'license', 'storage_path', 'file_name', 'file_size'].map((field) => ({ field, code: 'required', message: `"${field}" is required.` })),
    });
  });

  it('gives each field its most basic problem: unknown, the wrong type, out of a set', async () => {
    const answer = await refusal(CreateDatasetDto, { title: 'Wrong', type: 'onnx-model', tittle: 1, tags: ['a', 5], price_cents: 1.5, description: 5 });
    expect(answer.message).toBe(
      'Invalid request: unknown parameter "tittle"; "type" must be one of dataset, telemetry, calibration; "description" must be a string; "price_cents" must be an integer; "tags" must be a list of strings.',
    );
    expect(answer.errors).toEqual([
      { field: 'tittle', code: 'not_allowed', message: 'Unknown parameter "tittle".' },
      { field: 'type', code: 'invalid', message: '"type" must be one of dataset, telemetry, calibration.' },
      { field: 'description', code: 'wrong_type', message: '"description" must be a string.' },
      { field: 'price_cents', code: 'wrong_type', message: '"price_cents" must be an integer.' },
      { field: 'tags', code: 'wrong_type', message: '"tags" must be a list of strings.' },
    ]);
  });

  it('names nested fields by their path, with the decorators’ own limits', async () => {
    const answer = await refusal(CompleteUploadDto, { storage_path: 'a', upload_id: 'b', parts: [{ part_number: 0, etag: '' }, 'x'] });
    expect(answer.errors).toEqual([
      { field: 'parts[0].part_number', code: 'too_small', message: '"parts[0].part_number" must be at least 1.' },
      { field: 'parts[0].etag', code: 'too_short', message: '"parts[0].etag" must not be empty.' },
      { field: 'parts[1]', code: 'wrong_type', message: '"parts[1]" must be an object.' },
    ]);
    const clarify = await refusal(ClarifyJobDto, { answers: [{ id: 'a', answer: '  ', extra: 1 }] });
    expect(clarify.message).toBe('Invalid request: unknown parameter "answers[0].extra"; "answers[0].answer" must not be blank.');
    expect((await refusal(ClarifyJobDto, { answers: 'x' })).errors).toEqual([{ field: 'answers', code: 'wrong_type', message: '"answers" must be an array.' }]);
  });

  it('says too long and too short with the lengths, and keeps a message written on a decorator', async () => {
    expect((await refusal(CreateDatasetDto, { title: '', license: 'x'.repeat(101) })).errors).toEqual([
      { field: 'title', code: 'too_short', message: '"title" must not be empty.' },
      { field: 'license', code: 'too_long', message: '"license" must be at most 100 characters.' },
    ]);
    expect((await refusal(SetPriceDto, { model: 'm', input_usd_per_million: 1e-7, output_usd_per_million: 'x' })).message).toBe(
      'Invalid request: "input_usd_per_million" must have at most 6 decimal places; "output_usd_per_million" must be a number.',
    );
    const key = await refusal(CreateKeyDto, { account: 'a', mode: 'staging', scopes: ['bogus'] });
    expect(key.errors).toEqual([
      { field: 'mode', code: 'invalid', message: '"mode" must be one of test, live.' },
      { field: 'scopes', code: 'invalid', message: expect.stringMatching(/^"scopes" must list only these scopes: models:read, /) },
    ]);
  });

  it('answers only unknown parameters as such', async () => {
    const answer = await refusal(ClarifyJobDto, { answers: [{ id: 'a', answer: 'b' }], tittle: 1, other: 2 });
    expect([answer.message, answer.errors]).toEqual([
      'Unknown parameters "tittle", "other".',
      [
        { field: 'tittle', code: 'not_allowed', message: 'Unknown parameter "tittle".' },
        { field: 'other', code: 'not_allowed', message: 'Unknown parameter "other".' },
      ],
    ]);
  });
});
