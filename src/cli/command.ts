import { parseArgs } from 'node:util';

/** A failure the CLI reports as one line on stderr and exits with `exitCode` (1 failure, 2 usage). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** A mistake in how the command was called: its help is shown, exit code 2. */
export class UsageError extends CliError {
  constructor(
    message: string,
    readonly command?: Command,
  ) {
    super(message, 2);
  }
}

export interface OptionDef {
  type: 'string' | 'boolean';
  short?: string;
  description: string;
  /** Shown in the help as the value's name, e.g. `<id>`. */
  value?: string;
  /** The environment variable read when the option is not given. */
  env?: string;
  default?: string;
}

/** What every command receives: parsed options, streams and the terminal state. */
export interface CliContext {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  json: boolean;
  out: (text: string) => void;
  err: NodeJS.WritableStream & { isTTY?: boolean };
  stdinIsTTY: boolean;
  env: NodeJS.ProcessEnv;
}

/** One command (`init`, `keys create`, …): its help comes from these fields. */
export interface Command {
  name: string;
  summary: string;
  /** Positional arguments as shown in the usage line, e.g. `<workspace> <file>`. */
  args?: string;
  /** Extra help text (what is not available, how it behaves). */
  notes?: string;
  options: Record<string, OptionDef>;
  run(ctx: CliContext): Promise<void>;
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionDef> = {
  url: { type: 'string', value: '<url>', env: 'WKS_URL', default: 'http://localhost:8080', description: 'the running service' },
  'admin-token': { type: 'string', value: '<token>', env: 'WKS_ADMIN_TOKEN', description: 'the service ADMIN_TOKEN' },
  json: { type: 'boolean', description: 'machine-readable output on stdout' },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

/** Parses argv for one command (its options plus the global ones); unknown flags are usage errors. */
export function parseFor(command: Command, argv: string[]): { values: CliContext['values']; positionals: string[] } {
  const all = { ...command.options, ...GLOBAL_OPTIONS };
  const options = Object.fromEntries(
    Object.entries(all).map(([name, def]) => [name, def.short ? { type: def.type, short: def.short } : { type: def.type }]),
  );
  try {
    const parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: parsed.values, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
}

/** The option's value: the flag, else its environment variable, else its default. */
export function option(ctx: Pick<CliContext, 'values' | 'env'>, name: string, defs: Record<string, OptionDef>): string | undefined {
  const given = ctx.values[name];
  if (typeof given === 'string') return given;
  const def = defs[name] ?? GLOBAL_OPTIONS[name];
  return (def?.env ? ctx.env[def.env] : undefined) || def?.default;
}

/** The command's help text. */
export function helpOf(command: Command): string {
  const lines = [`Usage: wks ${command.name}${command.args ? ` ${command.args}` : ''} [options]`, '', command.summary];
  if (command.notes) lines.push('', command.notes);
  const describe = (defs: Record<string, OptionDef>) =>
    Object.entries(defs).map(([name, def]) => {
      const flag = `${def.short ? `-${def.short}, ` : ''}--${name}${def.value ? ` ${def.value}` : ''}`;
      const extra = [def.env ? `env ${def.env}` : '', def.default ? `default ${def.default}` : ''].filter(Boolean).join(', ');
      return `  ${flag.padEnd(30)} ${def.description}${extra ? ` (${extra})` : ''}`;
    });
  if (Object.keys(command.options).length) lines.push('', 'Options:', ...describe(command.options));
  lines.push('', 'Global options:', ...describe(GLOBAL_OPTIONS));
  return lines.join('\n');
}

/** Exactly `count` positional arguments (after the command words), else a usage error. */
export function positionals(ctx: CliContext, command: Command, min: number, max = min): string[] {
  if (ctx.positionals.length < min || ctx.positionals.length > max)
    throw new UsageError(`expected ${min === max ? min : `${min} to ${max}`} argument(s): ${command.args ?? '(none)'}`, command);
  return ctx.positionals;
}
