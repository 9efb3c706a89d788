import * as path from 'node:path';
import { CliError } from './admin-client';
import type { ApiBody, ApiClient } from './api-client';
import type { CliCommand } from './command-spec';
import { sha256Of } from '../../clients/typescript/src/downloads';
import { Grant, localFile, parallelOf, readJsonObject, sendFile, uploaderOf } from './transfer-options';

type PublishModelBody = ApiBody<'/v1/models', 'post'>;
/** The file fields of a model publish, as an upload fills them in. */
type UploadResult = Required<Pick<PublishModelBody, 'storage_path' | 'file_name' | 'file_size' | 'file_extension'>>;

/**
 * Mint a grant, PUT the bytes to it (in parts above the multipart threshold, resuming an
 * earlier run's parts), then confirm with the API that they landed whole.
 */
async function uploadFile(client: ApiClient, file: string, parallel: number, quiet: boolean): Promise<UploadResult> {
  const local = localFile(file);
  // Bound to the file's sha256: storage refuses other bytes (a file changed while it was being sent).
  const sha256 = await sha256Of(local.path);
  const mint = () => client.request<Grant>('POST', '/v1/uploads', { file_name: path.basename(file), file_size: local.size, sha256 });
  const grant = await sendFile(uploaderOf(client, local.size, parallel, quiet), local.path, 'upload', mint);
  const landed = await client.call('put', '/v1/uploads', { storage_path: grant.storage_path });
  if (!landed.exists || landed.size !== local.size) {
    throw new CliError(`the upload did not land whole (${landed.size} of ${local.size} bytes stored); run the command again`, 'upload_incomplete');
  }
  return { storage_path: grant.storage_path, file_name: grant.file_name!, file_size: local.size, file_extension: grant.file_extension! };
}

export const CATALOG_COMMANDS: Record<string, CliCommand> = {
  upload: {
    usage: 'upload FILE [--parallel N]   (a large file goes in parts, N at a time; run it again after an interruption to resume)',
    examples: ['SVC_API_KEY=svc_test_... svc upload ./policy.onnx', 'SVC_API_KEY=svc_test_... svc upload ./big-policy.safetensors --parallel 8'],
    client: 'api',
    options: { parallel: { type: 'string', description: 'How many parts of a large file are sent at once, 1 to 32; 4 when not given.' } },
    positionals: ['FILE'],
    run: (client, o, [file]) => uploadFile(client, file, parallelOf(o), Boolean(o.json)),
    // Every field the publish body needs, each on its own line, so the hint below is true as printed.
    print: (r: UploadResult) =>
      [
        `uploaded ${r.file_name} (${r.file_size} bytes)`,
        `storage_path: ${r.storage_path}`,
        `file_name: ${r.file_name}`,
        `file_size: ${r.file_size}`,
        `file_extension: ${r.file_extension}`,
        'publish it with "svc models publish BODY.json" giving storage_path, file_name, file_size and file_extension as above',
      ].join('\n'),
  },
  'models publish': {
    usage: 'models publish BODY.json [--file FILE [--parallel N]]   (--file uploads FILE first, as svc upload does, and fills in the file fields)',
    examples: ['SVC_API_KEY=svc_test_... svc models publish ./model.json --file ./policy.onnx'],
    client: 'api',
    options: {
      file: { type: 'string', description: 'The model file to upload first; its storage_path, file_name, file_size and file_extension fill the body.' },
      parallel: { type: 'string', description: 'With --file: how many parts of a large file are sent at once, 1 to 32; 4 when not given.' },
    },
    positionals: ['BODY.json'],
    run: async (client, o, [bodyFile]) => {
      // The file's fields are the caller's to get right; the API validates them (400 names the field).
      const body = readJsonObject(bodyFile) as PublishModelBody;
      if (o.file) Object.assign(body, await uploadFile(client, o.file, parallelOf(o), Boolean(o.json)));
      return client.call('post', '/v1/models', body);
    },
    print: (r) => `published ${r.slug} (${r.id}): ${r.title}, ${r.price.amount ? `${r.price.amount} ${r.price.currency} cents` : 'free'}`,
  },
};
