import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/main';
import { COMMANDS } from '../../src/cli/commands';
import { ADMIN_TOKEN, startTestApp, TestApp } from '../support/app';
import { freePort } from '../support/cli';
import { onnxModel } from '../support/asset-files';

/**
 * Issue 44, the CLI's answers: every command's --help describes each option in a sentence,
 * `svc upload` prints every field it says the publish body needs (file_extension too), and a
 * failed call prints the API's request_id.
 */
describe('svc answers: option help, upload fields, request ids (issue 44)', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  let dir: string;

  beforeAll(async () => {
    const port = await freePort();
    t = await startTestApp({ env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
    await t.app.listen(port, '127.0.0.1');
    const { key } = await t.accountWithKey({ scopes: ['models:upload', 'models:read'] });
    env = { SVC_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN, SVC_API_KEY: key };
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-answers-'));
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const svc = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, (s) => (stdout += s), (s) => (stderr += s), env);
    return { code, stdout, stderr };
  };

  /** A sentence: starts with a capital letter or a value, has a few words, ends with a full stop. */
  const SENTENCE = /^[A-Za-z0-9].*\s\S+.*\s\S+.*\.$/;

  it('every command listed by svc --help describes each of its options, --json and --help in a sentence', async () => {
    const listed = JSON.parse((await svc('--help', '--json')).stdout).commands.map((c: { command: string }) => c.command);
    expect(listed.sort()).toEqual(Object.keys(COMMANDS).sort());
    for (const name of listed as string[]) {
      const text = await svc(...name.split(' '), '--help');
      expect({ name, code: text.code, stderr: text.stderr }).toEqual({ name, code: 0, stderr: '' });
      const lines = text.stdout.split('\n');
      const optionNames = [...Object.keys(COMMANDS[name].options), 'json', 'help'];
      for (const option of optionNames) {
        // The option's own line: the flag, then two spaces, then the sentence.
        const line = lines.find((l) => new RegExp(`^  --${option}( VALUE)?( \\(required\\))?\\s`).test(l));
        const sentence = line?.replace(/^\s+--\S+( VALUE)?( \(required\))?\s+/, '');
        expect({ name, option, sentence: sentence && SENTENCE.test(sentence) ? 'a sentence' : sentence }).toEqual({ name, option, sentence: 'a sentence' });
      }
      // --help --json carries the same descriptions.
      const json = JSON.parse((await svc(...name.split(' '), '--help', '--json')).stdout);
      for (const option of optionNames) expect({ name, option, description: typeof json.options[option]?.description }).toEqual({ name, option, description: 'string' });
    }
    // The text of one command, as an operator reads it.
    expect((await svc('payouts', 'pause', '--help')).stdout).toContain('  --account VALUE (required)  The account whose payouts to hold, by id or slug.\n');
  });

  it('svc upload prints storage_path, file_name, file_size and file_extension, and those fields publish the model', async () => {
    const file = path.join(dir, 'policy.onnx');
    const model = onnxModel();
    fs.writeFileSync(file, model);
    const uploaded = await svc('upload', file);
    expect(uploaded.code).toBe(0);
    const printed = Object.fromEntries(
      uploaded.stdout
        .split('\n')
        .map((l) => /^(storage_path|file_name|file_size|file_extension): (.*)$/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1], m[2]]),
    );
    expect(printed).toEqual({ storage_path: expect.stringMatching(/policy\.onnx$/), file_name: 'policy.onnx', file_size: String(model.length), file_extension: '.onnx' });
    expect(uploaded.stdout).toContain('giving storage_path, file_name, file_size and file_extension as above');

    // As the hint says: a body with those four fields publishes.
    const body = path.join(dir, 'model.json');
    fs.writeFileSync(body, JSON.stringify({ title: 'Printed Fields', type: 'onnx-model', license: 'MIT', ...printed, file_size: Number(printed.file_size) }));
    const published = await svc('models', 'publish', body, '--json');
    expect(published.code).toBe(0);
    expect(JSON.parse(published.stdout)).toMatchObject({ slug: 'printed-fields', file: { name: 'policy.onnx', size: model.length, extension: '.onnx' } });
  });

  it('a failed call prints the API’s request_id, the one its error body and x-request-id header give', async () => {
    const text = await svc('keys', 'create', '--account', 'no-such-account', '--mode', 'test');
    expect(text.code).toBe(1);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/^svc: not_found: .+ \(request req_[0-9a-f]+\)\n$/);

    const json = await svc('keys', 'create', '--account', 'no-such-account', '--mode', 'test', '--json');
    expect(json.code).toBe(1);
    const error = JSON.parse(json.stderr).error;
    expect(error).toEqual({ code: 'not_found', message: expect.any(String), request_id: expect.stringMatching(/^req_[0-9a-f]+$/) });
    // Each call is its own request, and nothing was created by either.
    expect(error.request_id).not.toBe(/\(request (req_[0-9a-f]+)\)/.exec(text.stderr)![1]);
    expect((await t.admin('GET', '/admin/accounts/no-such-account')).status).toBe(404);

    // A public API call's failure (the creator commands) carries it too.
    fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify({ title: 'No File', type: 'onnx-model', license: 'MIT' }));
    const bad = await svc('models', 'publish', path.join(dir, 'bad.json'));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^svc: validation_failed: .+ \(request req_[0-9a-f]+\)\n$/);
    // A usage error never reached the API: no request id.
    const usage = await svc('keys', 'create', '--account', 'x');
    expect(usage).toMatchObject({ code: 2, stderr: expect.not.stringContaining('request') });
  });
});
