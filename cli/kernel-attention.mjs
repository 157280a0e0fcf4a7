#!/usr/bin/env node
// The `kernel-attention` command: fit, predict, select-bandwidth, lowess, loess and attention (cli/commands.mjs). Input errors are
// printed as `file:line:column: message` with exit code 1, command-line mistakes with exit code 2; never a stack trace
// (set KA_DEBUG=1 to see one). A reader that stops early (`… | head -1`) ends the command quietly, with exit code 0.
import { readFileSync } from 'node:fs';
import { FileError, UsageError } from './args.mjs';
import { COMMANDS } from './commands.mjs';
import { InputError } from './csv.mjs';

const HELP = `Usage: kernel-attention COMMAND [options]   (kernel-attention COMMAND --help for each)

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(18)}${c.summary}`)
  .join('\n')}

Columns are named by the file's header or by 1-based index; output is CSV or JSON, to stdout or --output FILE.
A data file may be - (stdin). kernel-attention --version prints the version.`;

// The reader of stdout went away (a closed pipe): what it wanted has been written, so this is no failure.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(0);
  process.stderr.write(`kernel-attention: cannot write to stdout: ${error.message}\n`);
  process.exit(1);
});

async function main(argv) {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(HELP + '\n');
    return 2;
  }
  if (name === '--version' || name === '-V') {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    process.stdout.write(`kernel-attention ${version}\n`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP + '\n');
    return 0;
  }
  const command = COMMANDS[name];
  if (!command)
    throw new UsageError(`unknown command ${JSON.stringify(name)}; commands: ${Object.keys(COMMANDS).join(', ')}`);
  // The package is loaded only once the input is read and checked, so help and input errors answer at once.
  const api = () => import('../web/src/index.js').then((m) => m.init());
  const text = await command.run(rest, api);
  if (typeof text === 'string') process.stdout.write(text + '\n');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    if (process.env.KA_DEBUG) console.error(error);
    if (error instanceof FileError) {
      // A path that cannot be used: --help would not help, so one line.
      process.stderr.write(`kernel-attention: ${error.message}\n`);
      process.exitCode = 2;
    } else if (error instanceof UsageError) {
      const command = COMMANDS[process.argv[2]] ? ` ${process.argv[2]}` : '';
      process.stderr.write(`kernel-attention: ${error.message}\nTry 'kernel-attention${command} --help'.\n`);
      process.exitCode = 2;
    } else if (error instanceof InputError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    } else {
      // KernelAttentionError (bad data the API rejected) or anything unexpected: the message, no stack.
      process.stderr.write(`kernel-attention: ${error?.message ?? error}\n`);
      process.exitCode = 1;
    }
  },
);
