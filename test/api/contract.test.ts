import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_TYPES_FILE, renderApiTypes } from '../../scripts/api-types.ts';
import { openApiDocument } from '../../src/api/openapi.ts';

/**
 * The API contract (src/contract) is the single source of truth: the portal's types are generated from the OpenAPI
 * document its schemas produce, and the layers keep it importable by both the API and the use cases.
 */

const SRC = join(import.meta.dirname, '../../src');

/** Relative imports of every .ts file under `dir`, as paths relative to src/ (`core/types.ts`). */
function importsUnder(dir: string): { file: string; target: string }[] {
  const out: { file: string; target: string }[] = [];
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    for (const m of readFileSync(path, 'utf8').matchAll(/^\s*(?:import|export)\b(?:[^'"]*?\bfrom)?\s*'(\.{1,2}\/[^']+)'/gm)) {
      out.push({ file: relative(SRC, path), target: relative(SRC, resolve(dirname(path), m[1]!)) });
    }
  }
  return out;
}

/**
 * The operations docs/api.md's route table names, as `METHOD /path` with path parameters as `{}`. A row names one
 * operation and may add others after ` · `: a bare method (same path: `POST`), or a method with a suffix of the
 * first path (`DELETE /{keyId}`, `POST /lift`).
 */
function documentedOperations(markdown: string): string[] {
  const out: string[] = [];
  for (const row of markdown.matchAll(/^\| (`[A-Z]+ \/api\/v1[^`]*`(?: · `[^`]+`)*) \|/gm)) {
    const [first, ...more] = [...row[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const [method, path] = first!.split(' ') as [string, string];
    out.push(`${method} ${path}`);
    for (const m of more) {
      const [alsoMethod, suffix] = m.split(' ') as [string, string | undefined];
      out.push(`${alsoMethod} ${path}${suffix ?? ''}`);
    }
  }
  return out.map((op) => op.replaceAll(/\{\w+\}/g, '{}'));
}

describe('the API contract', () => {
  it("docs/api.md's route table names every operation of the OpenAPI document, and nothing else", async () => {
    const document = (await openApiDocument()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`.replaceAll(/\{\w+\}/g, '{}')),
    );
    const documented = documentedOperations(readFileSync(join(import.meta.dirname, '../../docs/api.md'), 'utf8'));
    expect(documentedOperations('| `GET /api/v1/a/{id}` · `POST` · `DELETE /{keyId}` | admin | x |')).toEqual([
      'GET /api/v1/a/{}',
      'POST /api/v1/a/{}',
      'DELETE /api/v1/a/{}/{}',
    ]);
    expect(
      operations.filter((op) => !documented.includes(op)),
      'operations missing from docs/api.md',
    ).toEqual([]);
    expect(
      documented.filter((op) => !operations.includes(op)),
      'rows of docs/api.md that are no operation',
    ).toEqual([]);
  });

  it('web/src/api-types.ts is generated from the current schemas (run `node --import tsx scripts/api-types.ts`)', async () => {
    expect(readFileSync(API_TYPES_FILE, 'utf8')).toBe(await renderApiTypes());
  }, 60_000);

  it('names the shapes the portal imports as components of the OpenAPI document', () => {
    const text = readFileSync(API_TYPES_FILE, 'utf8');
    for (const name of [
      'Finding',
      'FindingDetail',
      'Alert',
      'Run',
      'RunProgress',
      'Dashboard',
      'AgentDetail',
      'InventoryItem',
      'Integration',
      'IntegrationDetail',
      'Session',
      'LoginResult',
      'ApiError',
    ]) {
      expect(text, name).toContain(`export type ${name} = components['schemas']['${name}'];`);
    }
  });

  it('layers: the contract imports no entry point or composition root, and nothing outside api/ and main/ imports api/', () => {
    const entry = /^(api|cli|main)\//;
    const contract = importsUnder(join(SRC, 'contract')).filter((i) => entry.test(i.target));
    expect(contract, 'src/contract must not import api/, cli/ or main/').toEqual([]);
    const below = importsUnder(SRC).filter((i) => !/^(api|main)\//.test(i.file) && i.target.startsWith('api/'));
    expect(below, 'only api/ and main/ may import api/').toEqual([]);
  });
});
