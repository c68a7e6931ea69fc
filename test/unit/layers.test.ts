import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * DESIGN.md's layers as a test: arrows point down only, and the trust rules that follow from them (no SQL outside
 * store/, no upstream client outside platform/, sources/ never touch the store, core/ imports nothing, the product
 * never imports the emulator except from main/). Every import counts: static, dynamic, and type-only (a type is a
 * dependency too). A failure names the file, the import and the rule.
 */

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Layer of each top-level folder of src/ (higher may import lower or equal, never higher). */
const LAYER: Record<string, number> = {
  main: 7, // composition roots
  cli: 6,
  api: 6, // entry points
  onboarding: 4,
  sync: 4,
  integration: 4, // a stored integration as onboarding and collection both use it
  checks: 4,
  detections: 4,
  protection: 4,
  reporting: 4,
  access: 4,
  exports: 4,
  sinks: 4,
  contract: 4, // use cases, outbound formats, the API contract
  sources: 3,
  store: 3,
  jobs: 3, // ports and parts
  platform: 2,
  inspection: 2,
  config: 2, // platform
  core: 1,
};

interface Import {
  file: string;
  spec: string;
  /** Folder under src/ of the importing file and of the target (`emulator` for the emulator). */
  from: string;
  to: string | undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?\sfrom\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const from = relative(SRC, file).split('/')[0]!;
  return [...text.matchAll(IMPORT)].map((m) => {
    const spec = (m[1] ?? m[2] ?? m[3])!;
    let to: string | undefined;
    if (spec.startsWith('.')) {
      const target = relative(SRC, normalize(join(dirname(file), spec)));
      to = target.startsWith('..') ? target.split('/')[1] : target.split('/')[0];
    }
    return { file: relative(join(SRC, '..'), file), spec, from, to };
  });
}

const imports = sourceFiles(SRC).flatMap(importsOf);

describe('layers (DESIGN.md): arrows point down only', () => {
  it('every folder of src/ has a layer', () => {
    const folders = readdirSync(SRC).filter((f) => statSync(join(SRC, f)).isDirectory());
    expect(folders.filter((f) => LAYER[f] === undefined)).toEqual([]);
  });

  it('no import points to a higher layer', () => {
    const up = imports.filter((i) => i.to && i.to !== 'emulator' && LAYER[i.to] !== undefined && LAYER[i.to]! > LAYER[i.from]!);
    expect(up.map((i) => `${i.file} imports ${i.spec} (${i.from} → ${i.to})`)).toEqual([]);
  });

  it('core/ imports nothing but core/ and Node built-ins', () => {
    const out = imports.filter((i) => i.from === 'core' && (i.to ? i.to !== 'core' : !i.spec.startsWith('node:')));
    expect(out.map((i) => `${i.file} imports ${i.spec}`)).toEqual([]);
  });

  it('only main/ imports the emulator (an independent witness of the wire format)', () => {
    expect(imports.filter((i) => i.to === 'emulator' && i.from !== 'main').map((i) => `${i.file} imports ${i.spec}`)).toEqual([]);
  });

  it('collection (sync/) never imports onboarding/, and the integration module they share imports neither', () => {
    // Both are use cases of layer 4: what both need (loading an integration, its credentials, its stream context, the
    // record of a refusal) lives in integration/, and onboarding's environment grant is handed to collection by the
    // entry point (collectAndEvaluate's grantAccess), so a change to onboarding cannot break collection.
    const banned: Record<string, string[]> = { sync: ['onboarding'], integration: ['onboarding', 'sync'] };
    const out = imports.filter((i) => i.to !== undefined && banned[i.from]?.includes(i.to));
    expect(out.map((i) => `${i.file} imports ${i.spec} (${i.from} → ${i.to})`)).toEqual([]);
  });

  it('sources/ never touch the store', () => {
    expect(imports.filter((i) => i.from === 'sources' && i.to === 'store').map((i) => `${i.file} imports ${i.spec}`)).toEqual([]);
  });

  it('SQL lives only in store/: no query builder value import or query outside it', () => {
    const files = sourceFiles(SRC).filter((f) => !relative(SRC, f).startsWith('store/'));
    const offenders = files.flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      const hits: string[] = [];
      if (/^\s*import\s+(?!type\b)[^;]*from\s+'kysely'/m.test(text)) hits.push('imports values from kysely');
      if (/\.(selectFrom|insertInto|updateTable|deleteFrom)\(|\bsql`/.test(text)) hits.push('builds a query');
      return hits.map((h) => `${relative(join(SRC, '..'), f)} ${h}`);
    });
    expect(offenders).toEqual([]);
  });

  it('upstream HTTP clients (undici, MSAL) are used only in platform/', () => {
    const out = imports.filter((i) => ['undici', '@azure/msal-node'].includes(i.spec) && i.from !== 'platform');
    expect(out.map((i) => `${i.file} imports ${i.spec}`)).toEqual([]);
  });
});
