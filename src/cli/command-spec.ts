/** What a `svc` command is: its usage, options, which client it calls, and how its result prints. */
import type { AdminClient, CliError } from './admin-client';
import type { ApiClient } from './api-client';

/** Each option says what it does in a sentence: `svc COMMAND --help` shows it (issue 44). */
export type OptionSpec = Record<string, { type: 'string' | 'boolean'; required?: boolean; description: string }>;
type Run<C> = (client: C, options: Record<string, any>, positionals: string[]) => Promise<unknown>;

interface CommandSpec {
  /** One line for the usage text. */
  usage: string;
  /** Command lines shown by `svc COMMAND --help`. */
  examples?: string[];
  options: OptionSpec;
  /** Names of the positional arguments it takes, in order. */
  positionals?: string[];
  /** Names of the positional arguments it may take after those. */
  optionalPositionals?: string[];
  /** Human-readable output; --json prints the result itself. */
  print?(result: any, options: Record<string, any>): string;
  /** A result that must still exit non-zero (after it is printed), such as a failed ledger verify. */
  failure?(result: any): CliError | undefined;
}

/**
 * Operator commands call /admin with the admin token; creator commands the public API with
 * an API key; 'local' ones work on the service's own database, given the CLI's environment.
 */
export type CliCommand = CommandSpec &
  ({ client?: 'admin'; run: Run<AdminClient> } | { client: 'api'; run: Run<ApiClient> } | { client: 'local'; run: Run<NodeJS.ProcessEnv> });
