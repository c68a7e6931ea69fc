/**
 * The crash-recovery suite's hook (test/reliability): a callback for the engine's `afterPage` / the audit's `afterBlob`
 * that sends this process SIGKILL right after the `n`th stored page or content blob, i.e. right after that page's
 * transaction committed — the abrupt death a power cut or the OOM killer gives, with nothing flushed or released.
 *
 * Set only by `VIGIL_TEST_KILL_AFTER_PAGES` (config `testKillAfterPages`). Unset — always, outside that suite — it
 * returns undefined and the commands run exactly as without it. Not a security concern: it can only end the very
 * process whose environment sets it (which whoever sets that environment can do anyway); it reads, writes and sends
 * nothing.
 */
export function killAfterPages(n: number | undefined): (() => void) | undefined {
  if (n === undefined) return undefined;
  let stored = 0;
  return () => {
    if (++stored >= n) process.kill(process.pid, 'SIGKILL');
  };
}
