import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { VigilError } from '../core/errors.ts';
import { isEstateStream } from '../store/stream-tables.ts';
import { SEVERITIES } from '../core/types.ts';
import { CORE_INVENTORY_PARTS, RESOURCE_TYPES, type CheckFunction, type CheckMetadata, type LoadedCheck } from './types.ts';

/**
 * Loads checks from `checks/<area>/<check_id>/{metadata.json,check.ts}` (`check.js` when compiled). Metadata is data, validated here; the id
 * must equal the folder name and the area its parent folder, or loading fails. Model: prowler `lib/check/models.py`.
 */

const metadataSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9_]+$/, 'lower-case letters, digits and underscores'),
    title: z.string().min(5),
    area: z.string().min(1),
    severity: z.enum(SEVERITIES),
    resourceType: z.enum(RESOURCE_TYPES),
    risk: z.string().min(20),
    remediation: z.string().min(20),
    references: z.array(z.string().url()).min(1),
    frameworks: z.record(z.string(), z.array(z.string())).default({}),
    /**
     * The open-source peer checks this one matches or exceeds, e.g. `Maester MT.1114 (exceeds: every environment)`;
     * empty when no peer checks it (docs/checks.md shows "none").
     */
    peers: z.array(z.string().min(3)).default([]),
    /**
     * Inventory read whole (`environments`, `agents`, `dataverseUsers`, `directoryUsers`, estate streams). The names
     * are checked against the stream registry when the check's code is loaded ({@link inventoryNames}).
     */
    reads: z.array(z.string()).default([]),
    /** Estate streams read page by page (too large to load whole); checked like `reads`. */
    paged: z.array(z.string()).default([]),
  })
  .strict();

/** Folder of the built-in checks (`src/checks`, or `dist/src/checks` compiled, where the build copies metadata.json). */
const CHECKS_DIR = import.meta.dirname;

/** Extension of the check modules beside this loader: `.ts` from source (tests, tsx), `.js` compiled. */
const MODULE_EXT = import.meta.filename.endsWith('.ts') ? '.ts' : '.js';

/**
 * Loads and validates every check under `dir`.
 * @throws VigilError `internal` / `CHECK_INVALID` naming the folder and the field.
 */
export async function loadChecks(dir: string = CHECKS_DIR): Promise<LoadedCheck[]> {
  return (await readChecks(dir, true)) as LoadedCheck[];
}

/**
 * The validated metadata of every check under `dir`, without loading their code: the catalogue that shows findings
 * (titles, risk, remediation), read faster than {@link loadChecks} by commands that evaluate nothing. The inventory
 * names of `reads` and `paged` are not checked here (only an evaluation uses them, and checking them loads every
 * stream module): {@link loadChecks} checks them.
 * @throws VigilError `internal` / `CHECK_INVALID` naming the folder and the field.
 */
export async function loadCheckMetadata(dir: string = CHECKS_DIR): Promise<CheckMetadata[]> {
  return (await readChecks(dir, false)).map((c) => c.metadata);
}

/** Reads every check under `dir`: metadata always, the code when `withCode`. */
async function readChecks(dir: string, withCode: boolean): Promise<(Omit<LoadedCheck, 'run'> & { run?: CheckFunction })[]> {
  const checks: (Omit<LoadedCheck, 'run'> & { run?: CheckFunction })[] = [];
  const names = withCode ? await inventoryNames() : undefined;
  for (const area of readdirSync(dir).sort()) {
    const areaDir = join(dir, area);
    if (!statSync(areaDir).isDirectory()) continue;
    for (const id of readdirSync(areaDir).sort()) {
      const folder = join(areaDir, id);
      if (!statSync(folder).isDirectory()) continue;
      const fail = (why: string) => new VigilError('CHECK_INVALID', `Check ${area}/${id}: ${why}`);
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(join(folder, 'metadata.json'), 'utf8'));
      } catch (e) {
        throw fail(`metadata.json unreadable: ${(e as Error).message}`);
      }
      const parsed = metadataSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw fail(`metadata field '${issue.path.join('.')}' ${issue.message}`);
      }
      if (parsed.data.id !== id) throw fail(`metadata id '${parsed.data.id}' does not match the folder name '${id}'`);
      if (parsed.data.area !== area) throw fail(`metadata area '${parsed.data.area}' does not match the folder '${area}'`);
      // `reads` and `paged` hold inventory names: checked against the registry below when the code is loaded.
      const metadata = parsed.data as CheckMetadata;
      if (!names) {
        checks.push({ metadata });
        continue;
      }
      const unknownRead = parsed.data.reads.find((r) => !names.reads.has(r));
      if (unknownRead) throw fail(`metadata field 'reads' names '${unknownRead}', neither an inventory part nor an estate stream`);
      const unknownPaged = parsed.data.paged.find((r) => !names.paged.has(r));
      if (unknownPaged) throw fail(`metadata field 'paged' names '${unknownPaged}', which is not an estate stream`);
      const mod = (await import(pathToFileURL(join(folder, `check${MODULE_EXT}`)).href)) as { check?: CheckFunction };
      if (typeof mod.check !== 'function') throw fail(`check${MODULE_EXT} does not export a function named \`check\``);
      checks.push({ metadata, run: mod.check });
    }
  }
  return checks;
}

/**
 * The names a check's `reads` may hold (the core parts and every estate stream) and those `paged` may hold (the
 * estate streams), from the stream registry. Imported here, when check code is loaded (an evaluation, `vigil checks`),
 * so that reading the catalogue alone (`vigil findings`) never loads every stream module.
 */
async function inventoryNames(): Promise<{ reads: ReadonlySet<string>; paged: ReadonlySet<string> }> {
  const { STREAMS } = await import('../sources/index.ts');
  const estate = Object.keys(STREAMS).filter(isEstateStream);
  return { reads: new Set([...CORE_INVENTORY_PARTS, ...estate]), paged: new Set(estate) };
}
