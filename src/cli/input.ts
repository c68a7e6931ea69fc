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
