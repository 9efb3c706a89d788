import { parseArgs } from 'node:util';
import { AdminClient, CliError } from './admin-client';
import { ApiClient } from './api-client';
import type { CliCommand } from './command-spec';
import { COMMANDS } from './commands';

const USAGE = `usage: svc <command> [options] [--json]\n\ncommands:\n${Object.values(COMMANDS)
  .map((c) => `  svc ${c.usage}`)
  .join('\n')}\n\nglobal options: --idempotency-key KEY (sent on the command's POSTs: run the command again with the same key and nothing is done twice; a second POST of one command sends KEY-2, and so on)\n\nenvironment: SVC_URL (default http://127.0.0.1:3000), ADMIN_TOKEN (default: read DATA_DIR/admin_token), SVC_API_KEY (upload, models publish), DATABASE_URL or DATA_DIR (events copy: the service's own database)`;

/** The command's words: the leading arguments before the first option (`svc keys create --json`). */
function findCommand(argv: string[]): { command: CliCommand; rest: string[] } {
  const firstOption = argv.findIndex((a) => a.startsWith('-'));
  const words = firstOption === -1 ? argv : argv.slice(0, firstOption);
  const name = words.slice(0, 2).join(' ');
  const command = words.length >= 2 && COMMANDS[name];
  if (command) return { command, rest: argv.slice(2) };
  // One-word commands ("svc upload FILE").
  if (words.length && COMMANDS[words[0]]) return { command: COMMANDS[words[0]], rest: argv.slice(1) };
  throw new CliError(words.length ? `unknown command "${name}"; run "svc --help"` : 'no command given; run "svc --help"', 'usage', 2);
}

/** Options every command takes, described as the command's own are. */
const COMMON_OPTIONS = {
  json: { type: 'boolean', description: 'Print exactly one JSON document (the result, or on stderr the error) instead of text.' },
  help: { type: 'boolean', description: 'Show this help and run nothing.' },
} as const;

/** `svc COMMAND --help`: its usage line, each option with the sentence describing it, and examples. */
function commandHelp(name: string, command: CliCommand): string {
  const options = [...Object.entries(command.options), ...Object.entries(COMMON_OPTIONS)].map(([option, spec]) => ({
    flag: `--${option}${spec.type === 'string' ? ' VALUE' : ''}${'required' in spec && spec.required ? ' (required)' : ''}`,
    description: spec.description,
  }));
  const width = Math.max(...options.map((o) => o.flag.length));
  const examples = (command.examples ?? []).map((e) => `  ${e}`);
  return [
    `usage: svc ${command.usage} [--json]`,
    '',
    'options:',
    ...options.map((o) => `  ${o.flag.padEnd(width)}  ${o.description}`),
    ...(examples.length ? ['', 'examples:', ...examples] : []),
  ].join('\n');
}

function parse(command: CliCommand, rest: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...command.options, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new CliError((error as Error).message.split('\n')[0].split('. To specify')[0], 'usage', 2);
  }
  const expected = command.positionals ?? [];
  const most = expected.length + (command.optionalPositionals?.length ?? 0);
  if (parsed.positionals.length > most) {
    throw new CliError(`unexpected argument "${parsed.positionals[most]}"; usage: svc ${command.usage}`, 'usage', 2);
  }
  const values = parsed.values as Record<string, any>;
  for (const [name, spec] of Object.entries(command.options)) {
    if (spec.required && (values[name] === undefined || values[name] === '')) {
      throw new CliError(`missing --${name}; usage: svc ${command.usage}`, 'usage', 2);
    }
  }
  if (expected.length && !command.options.all && parsed.positionals.length < expected.length) {
    throw new CliError(`missing ${expected[parsed.positionals.length]}; usage: svc ${command.usage}`, 'usage', 2);
  }
  return { values, positionals: parsed.positionals };
}

/** Takes the global --idempotency-key KEY (or --idempotency-key=KEY) out of the arguments. */
function takeIdempotencyKey(argv: string[]): { key?: string; rest: string[] } {
  const at = argv.findIndex((a) => a === '--idempotency-key' || a.startsWith('--idempotency-key='));
  if (at === -1) return { rest: argv };
  const inline = argv[at].startsWith('--idempotency-key=');
  const key = inline ? argv[at].slice('--idempotency-key='.length) : argv[at + 1];
  if (!key || (!inline && key.startsWith('-'))) throw new CliError('--idempotency-key needs a value (1 to 255 characters)', 'usage', 2);
  if (key.length > 255) throw new CliError(`--idempotency-key is at most 255 characters, got ${key.length}`, 'usage', 2);
  return { key, rest: [...argv.slice(0, at), ...argv.slice(at + (inline ? 1 : 2))] };
}

export async function runCli(
  argv: string[],
  out: (text: string) => void,
  err: (text: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let json = argv.includes('--json');
  const help = argv.includes('--help') || argv.includes('-h');
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    out(json ? `${JSON.stringify({ commands: Object.entries(COMMANDS).map(([name, c]) => ({ command: name, usage: `svc ${c.usage}` })) }, null, 2)}\n` : `${USAGE}\n`);
    return 0;
  }
  try {
    const { key: idempotencyKey, rest: args } = takeIdempotencyKey(argv);
    const { command, rest } = findCommand(args);
    if (help) {
      const name = Object.keys(COMMANDS).find((n) => COMMANDS[n] === command)!;
      const options = { ...command.options, ...COMMON_OPTIONS };
      out(json ? `${JSON.stringify({ command: name, usage: `svc ${command.usage}`, options, examples: command.examples ?? [] }, null, 2)}\n` : `${commandHelp(name, command)}\n`);
      return 0;
    }
    const { values, positionals } = parse(command, rest);
    json = Boolean(values.json);
    if (idempotencyKey !== undefined && command.client === 'local') throw new CliError('--idempotency-key applies to commands that call the service', 'usage', 2);
    const keyed = <C extends AdminClient>(client: C) => (idempotencyKey === undefined ? client : client.withIdempotencyKey(idempotencyKey));
    const result =
      command.client === 'api'
        ? await command.run(keyed(ApiClient.fromEnvironment(env)), values, positionals)
        : command.client === 'local'
          ? await command.run(env, values, positionals)
          : await command.run(keyed(AdminClient.fromEnvironment(env)), values, positionals);
    out(`${json || !command.print ? JSON.stringify(result, null, json ? 2 : 0) : command.print(result, values)}\n`);
    const failure = command.failure?.(result);
    if (failure) throw failure;
    return 0;
  } catch (error) {
    const e = error instanceof CliError ? error : new CliError((error as Error).message);
    // The API's request_id (as its error body gives it) lets an operator find the request in the service's logs.
    const requestId = e.requestId ? { request_id: e.requestId } : {};
    err(
      json
        ? `${JSON.stringify({ error: { code: e.code, message: e.message, ...requestId } })}\n`
        : `svc: ${e.code === 'usage' ? '' : `${e.code}: `}${e.message}${e.requestId ? ` (request ${e.requestId})` : ''}\n`,
    );
    return e.exitCode;
  }
}

