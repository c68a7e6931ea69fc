import { VigilError } from '../core/errors.ts';
/**
 * Reads all of standard input once (a secret or password piped in), without its one trailing newline. Secrets are
 * read this way or from a named environment variable, never from an argument, which would show in the process list
 * and shell history.
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * Checks a count option such as `--limit`: a whole number of at least 1.
 * @throws VigilError `invalid-input` naming the option and the fix.
 */
export function requireCount(value: number, option: string): number {
  if (!Number.isInteger(value) || value < 1) throw new VigilError('invalid-input', 'INVALID_INPUT', `${option} '${value}' is not a positive whole number.`, { field: option, remediation: `Give a number such as 100, e.g. ${option} 100.` });
  return value;
}
