import { readFileSync } from 'node:fs';

/**
 * The Node flags Vigil runs with (bin/vigil.mjs's shebang, the Dockerfile, the npm scripts): benchmark children use
 * them. None since issue 18 (memory goals are met by not allocating, not by V8 flags); kept so a benchmark names them.
 */
export const PRODUCT_NODE_FLAGS: readonly string[] = [];

/**
 * This process's peak resident memory, MiB: `VmHWM` from /proc/self/status (Linux). Not `resourceUsage().maxRSS`:
 * getrusage keeps the forking parent's peak across exec, so a benchmark child started by a large emulator process
 * would report the parent's size. Falls back to maxRSS where /proc is absent.
 */
export function peakRssMiB(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return Number(m[1]) / 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS / 1024;
}
