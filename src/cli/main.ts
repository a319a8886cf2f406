/**
 * `wks`: the command line of the Workspace Knowledge Service. It talks to a running service
 * (`--url`, `--admin-token`), so it works the same on the embedded database and on PostgreSQL;
 * `embeddings backfill` is the one command that opens the database itself.
 */
import { ADMIN_COMMANDS } from './admin.js';
import { ARCHIVE_COMMANDS } from './archive.js';
import { CliError, GLOBAL_OPTIONS, helpOf, parseFor, UsageError, type CliContext, type Command } from './command.js';
import { EMBEDDINGS_COMMANDS } from './embeddings.js';
import { initCommand } from './init.js';
import { SPEC_COMMANDS } from './spec.js';

export const COMMANDS: Command[] = [initCommand, ...ADMIN_COMMANDS, ...SPEC_COMMANDS, ...EMBEDDINGS_COMMANDS, ...ARCHIVE_COMMANDS];

/** The overview shown by `wks --help` and on an unknown command. */
export function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const first = (text: string) => text.split(/(?<=\.) /)[0];
  return [
    'Usage: wks <command> [arguments] [options]',
    '',
    'Talks to a running Workspace Knowledge Service (admin operations with its ADMIN_TOKEN).',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${first(c.summary)}`),
    '',
    'Global options: --url <url> (env WKS_URL, default http://localhost:8080), --admin-token <token> (env WKS_ADMIN_TOKEN),',
    '                --json (machine-readable output), -h/--help (help of any command).',
    'Exit codes: 0 success, 1 the service or the work failed, 2 the command was called wrongly.',
  ].join('\n');
}

/** The leading words of argv that are not options (skipping the values of global value options). */
function commandWords(argv: string[]): { words: string[]; rest: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let seekingWords = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('-') && arg !== '-') {
      rest.push(arg);
      const name = arg.replace(/^--?/, '');
      const global = GLOBAL_OPTIONS[name] ?? Object.values(GLOBAL_OPTIONS).find((o) => o.short === name);
      // Command words come before the command's own options (whose values could look like words).
      if (!global && !arg.includes('=')) seekingWords = false;
      if (global?.type === 'string' && i + 1 < argv.length) rest.push(argv[++i]);
      continue;
    }
    if (seekingWords && words.length < 2) words.push(arg);
    else rest.push(arg);
  }
  return { words, rest };
}

/** Finds the command named by argv; the remaining arguments are its own. */
function resolve(argv: string[]): { command: Command; args: string[] } | { group: string; help: boolean } | null {
  const { words, rest } = commandWords(argv);
  const two = COMMANDS.find((c) => words.length >= 2 && c.name === `${words[0]} ${words[1]}`);
  if (two) return { command: two, args: [...rest] };
  const one = COMMANDS.find((c) => c.name === words[0]);
  if (one) return { command: one, args: [...words.slice(1), ...rest] };
  if (words[0] && COMMANDS.some((c) => c.name.startsWith(`${words[0]} `)) && words.length === 1)
    return { group: words[0], help: rest.includes('--help') || rest.includes('-h') };
  return null;
}

function groupHelp(group: string): string {
  const commands = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  return [`Usage: wks ${group} <${commands.map((c) => c.name.split(' ')[1]).join('|')}> [options]`, '']
    .concat(commands.map((c) => `  wks ${c.name}${c.args ? ` ${c.args}` : ''}\n      ${c.summary}`))
    .concat(['', `Run wks ${group} <command> --help for its options.`])
    .join('\n');
}

/** Runs the CLI; resolves with the exit code. */
export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const err = process.stderr;
  const out = (text: string) => void process.stdout.write(`${text}\n`);
  if (!argv.length || (argv.length === 1 && ['--help', '-h', 'help'].includes(argv[0]))) {
    (argv.length ? process.stdout : err).write(`${overview()}\n`);
    return argv.length ? 0 : 2;
  }
  const found = resolve(argv);
  if (!found) {
    const name = commandWords(argv).words.join(' ') || argv.join(' ');
    err.write(`wks: unknown command "${name}"\n\n${overview()}\n`);
    return 2;
  }
  if ('group' in found) {
    (found.help ? process.stdout : err).write(`${groupHelp(found.group)}\n`);
    return found.help ? 0 : 2;
  }
  const { command, args } = found;
  try {
    const { values, positionals } = parseFor(command, args);
    if (values.help) {
      out(helpOf(command));
      return 0;
    }
    const ctx: CliContext = { values, positionals, json: Boolean(values.json), out, err, stdinIsTTY: Boolean(process.stdin.isTTY), env };
    await command.run(ctx);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      err.write(`wks ${command.name}: ${error.message}\n\n${helpOf(error.command ?? command)}\n`);
      return 2;
    }
    if (error instanceof CliError) {
      err.write(`wks ${command.name}: ${error.message}\n`);
      return error.exitCode;
    }
    err.write(`wks ${command.name}: unexpected failure: ${(error as Error)?.stack ?? String(error)}\n`);
    return 1;
  }
}
