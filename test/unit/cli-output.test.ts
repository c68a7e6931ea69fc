import { describe, expect, it } from 'vitest';
import { isVigilError } from '../../src/core/errors.ts';
import { idPrefix, normalizeGuid, pickByPrefix, shortIds } from '../../src/core/ids.ts';
import { limitRows, parseLimit } from '../../src/cli/input.ts';
import { colorEnabled, colors, fitWidths, NON_TTY_WIDTH, severityText, table, terminalWidth } from '../../src/cli/output.ts';
import { clock, createProgress, sliceEta } from '../../src/cli/progress.ts';
import { groupRunErrors, renderErrorGroups } from '../../src/cli/run-errors.ts';
import type { SliceError } from '../../src/sync/engine.ts';

const ESC = '\x1b[';

describe('tables fitted to the terminal', () => {
  const long = 'Access control policy is '.repeat(24); // 600 characters, as a finding reason can be
  const rows = [
    ['FINDING', 'SEVERITY', 'CHECK', 'RESOURCE', 'REASON'],
    ['fnd_616d3122', 'critical', 'agent_public_without_authentication', 'Customer Support Bot', long],
    ['fnd_91a6e036', 'low', 'dlp_no_policy', 'Tenant', 'short'],
  ];

  it('keeps every line within the width, cuts free text with an ellipsis, and leaves ids and check ids whole', () => {
    for (const width of [80, 120, 200]) {
      const lines = table(rows, { width, shrink: [3, 4] }).split('\n');
      expect(
        lines.every((l) => [...l].length <= width),
        `width ${width}`,
      ).toBe(true);
      expect(lines[1]).toMatch(/…$/);
      expect(lines[1]!.startsWith('fnd_616d3122  critical  agent_public_without_authentication  ')).toBe(true);
      expect(lines[2]).toMatch(/short$/);
    }
  });

  it('prints cells whole with --wide', () => {
    expect(table(rows, { width: 80, wide: true }).split('\n')[1]).toContain(long.trimEnd());
  });

  it('does not count colour codes as width', () => {
    const c = colors(true);
    const coloured = table(
      [
        ['A', 'SEVERITY'],
        ['x', severityText('critical', c)],
      ],
      { width: 40 },
    );
    expect(coloured).toContain(ESC);
    // eslint-disable-next-line no-control-regex
    expect(coloured.split('\n')[1]!.replace(/\x1b\[[0-9;]*m/g, '')).toBe('x  critical');
  });

  it('narrows the widest shrinkable column first and never below its floor', () => {
    expect(fitWidths([10, 50, 30], [10, 8, 8], 60, [1, 2])).toEqual([10, 23, 23]);
    expect(fitWidths([10, 50, 30], [10, 40, 25], 60, [1, 2])).toEqual([10, 40, 25]);
  });

  it('uses the terminal columns on a TTY, else COLUMNS, else 120', () => {
    expect(terminalWidth({ isTTY: true, columns: 93 }, {})).toBe(93);
    expect(terminalWidth({ isTTY: false }, { COLUMNS: '150' })).toBe(150);
    expect(terminalWidth({ isTTY: false }, {})).toBe(NON_TTY_WIDTH);
    expect(NON_TTY_WIDTH).toBe(120);
  });
});

describe('severity colour', () => {
  it('is off under NO_COLOR even on a terminal, and off when not a terminal', () => {
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: true }, { NO_COLOR: '1', FORCE_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ isTTY: false }, {})).toBe(false);
    expect(colorEnabled({ isTTY: false }, { CI: 'true' })).toBe(false);
    expect(severityText('high', colors(colorEnabled({ isTTY: false }, {})))).toBe('high');
  });
  it('is on on a terminal, or when FORCE_COLOR asks for it', () => {
    expect(colorEnabled({ isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
    expect(colorEnabled({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(severityText('high', colors(true))).toBe(`${ESC}31mhigh${ESC}39m`);
  });
});

describe('--limit', () => {
  it("refuses anything but a positive whole number with the option's name and exit code 2", () => {
    for (const bad of ['abc', '0', '-3', '1.5', '1e3', '']) {
      try {
        parseLimit(bad, 100);
        expect.unreachable(bad);
      } catch (e) {
        expect(isVigilError(e, 'invalid-input')).toBe(true);
        expect((e as Error).message).toBe(`--limit must be a positive whole number, got '${bad}'.`);
        expect((e as { field?: string }).field).toBe('--limit');
      }
    }
    expect(parseLimit('25', 100)).toBe(25);
    expect(parseLimit(undefined, 100)).toBe(100);
  });
  it('caps text lists at the default and says what was left out; JSON gets everything unless --limit is given', () => {
    const rows = Array.from({ length: 7 }, (_, i) => i);
    expect(limitRows(rows, {}, 5)).toEqual({ rows: [0, 1, 2, 3, 4], more: '… 2 more (showing 5 of 7; --limit 7 shows all)' });
    expect(limitRows(rows, { json: true }, 5).rows).toHaveLength(7);
    expect(limitRows(rows, { json: true, limit: '2' }, 5).rows).toEqual([0, 1]);
  });
});

describe('short ids', () => {
  it('shows the kind and 8 digits, more where two ids would look alike', () => {
    const a = 'fnd_616d3122f2924c66b0d1b8357196da6f';
    const b = 'fnd_616d3122aaaa4c66b0d1b8357196da6f';
    const c = 'fnd_91a6e0360000000000000000000000ff';
    expect(shortIds([a, c]).get(a)).toBe('fnd_616d3122');
    expect(shortIds([a, b, c])).toEqual(
      new Map([
        [a, 'fnd_616d3122f'],
        [b, 'fnd_616d3122a'],
        [c, 'fnd_91a6e0360'],
      ]),
    );
  });
  it('resolves a unique prefix, refuses an ambiguous one listing the candidates (exit 2), and returns nothing for none', () => {
    expect(idPrefix('616D3122', 'fnd')).toBe('fnd_616d3122');
    expect(idPrefix('fnd_61', 'fnd')).toBe('fnd_61');
    expect(idPrefix('fnd_nope', 'fnd')).toBeUndefined();
    expect(pickByPrefix('fnd_616d', ['fnd_616d3122f2924c66b0d1b8357196da6f'], { field: 'finding', kind: 'finding' })).toBe(
      'fnd_616d3122f2924c66b0d1b8357196da6f',
    );
    expect(pickByPrefix('fnd_616d', [], { field: 'finding', kind: 'finding' })).toBeUndefined();
    try {
      pickByPrefix('fnd_6', ['fnd_616d3122f2924c66b0d1b8357196da6f', 'fnd_62be9e7132924e9bb679173475a2fbfc'], { field: 'finding', kind: 'finding' });
      expect.unreachable();
    } catch (e) {
      expect(isVigilError(e, 'invalid-input')).toBe(true);
      expect((e as Error).message).toBe("'fnd_6' could be 2 findings: fnd_616d3122, fnd_62be9e71.");
    }
  });
});

describe('GUIDs as people paste them', () => {
  it('are normalised: no dashes, braces, upper case', () => {
    const g = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    for (const v of [
      '72f988bf86f141af91ab2d7cd011db47',
      '{72F988BF-86F1-41AF-91AB-2D7CD011DB47}',
      ` ${g.toUpperCase()} `,
      '{72f988bf86f141af91ab2d7cd011db47}',
    ])
      expect(normalizeGuid(v)).toBe(g);
    expect(normalizeGuid(' contoso ')).toBe('contoso');
  });
});

describe('errors of a partial run', () => {
  // The errors `vigil collect` recorded against the emulator (one environment without an application user, Power BI
  // refusing the service principal), as engine.describeError stores them.
  const env = '3fa6218d-1d33-4ab1-9fc9-a49035fdb9ab';
  const dv = (stream: string, set: string): SliceError => ({
    stream: stream as SliceError['stream'],
    slice: env,
    code: '0x80072560',
    message: `dataverse GET https://127.0.0.1:33395/dataverse/unqd56227cc23abee6e/api/data/v9.2/${set} answered 403 0x80072560: The user is not a member of the organization.`,
  });
  const errors: SliceError[] = [
    dv('dataverseUsers', 'systemusers'),
    dv('agents', 'bots'),
    dv('agentComponents', 'botcomponents'),
    dv('agentSettings', 'bots'),
    {
      stream: 'powerBiWorkspaces',
      slice: '*',
      code: 'POWER_BI_NOT_AUTHORIZED',
      message: 'Not collected: Power BI refused. Fix: Remove Tenant.Read.All.',
      reason: 'Not collected: Power BI refused.',
      fix: 'Remove Tenant.Read.All.',
    },
    dv('environmentSettings', 'organizations'),
  ];

  it('are grouped per environment by display name, one entry per problem with its streams and the fix', () => {
    const groups = groupRunErrors(errors, new Map([[env, 'Customer Service Production']]));
    expect(groups.map((g) => [g.scope, g.name, g.problems.map((p) => [p.streams.length, p.slices])])).toEqual([
      ['environment', 'Customer Service Production', [[5, 5]]],
      ['tenant', 'tenant', [[1, 1]]],
    ]);
    expect(groups[0]!.problems[0]!.reason).toBe('dataverse answered 403 0x80072560: The user is not a member of the organization.');
    expect(groups[0]!.problems[0]!.fix).toMatch(/no application user in this environment/);
    const text = renderErrorGroups(groups, { width: 100 }).join('\n');
    expect(text).not.toMatch(/https?:\/\//);
    expect(text).not.toContain(env);
    expect(text).toContain('environment Customer Service Production');
    expect(text.match(/fix: /g)).toHaveLength(2);
    expect(renderErrorGroups(groups, { width: 100, verbose: true }).join('\n')).toContain(env);
  });
});

describe('progress when not a terminal', () => {
  it('prints one plain line per finished stream and per phase, nothing animated', () => {
    let out = '';
    let t = 0;
    const stream = { isTTY: false, write: (s: string) => ((out += s), true) } as unknown as NodeJS.WriteStream;
    const p = createProgress(stream, { now: () => t });
    p.collect({ stream: 'users', streamIndex: 1, streamsTotal: 23, slicesDone: 0, slicesTotal: 1, records: 1000 });
    t = 1200;
    p.collect({
      stream: 'users',
      streamIndex: 1,
      streamsTotal: 23,
      slicesDone: 1,
      slicesTotal: 1,
      records: 3005,
      finished: { durationMs: 1200, erroredSlices: 0, incrementalSlices: 1 },
    });
    p.collect({
      stream: 'agents',
      streamIndex: 6,
      streamsTotal: 23,
      slicesDone: 7,
      slicesTotal: 7,
      records: 172,
      finished: { durationMs: 100, erroredSlices: 1, incrementalSlices: 0 },
    });
    p.evaluate(0, 46);
    t = 2000;
    p.evaluate(46, 46);
    p.done();
    expect(out.split('\n')).toEqual([
      '[ 1/23] users: 3,005 records (changes since the last run) in 1.2 s',
      '[ 6/23] agents: 172 records in 0.1 s, 1 errored slice',
      'evaluating 46 checks',
      'checks evaluated: 46 in 0.8 s',
      '',
    ]);
    expect(out).not.toContain('\r');
  });
  it('gives an ETA only from enough slices of a sliced stream', () => {
    expect(sliceEta(2, 100, 2000)).toBeUndefined();
    expect(sliceEta(1, 1, 2000)).toBeUndefined();
    expect(sliceEta(10, 100, 5000)).toBe(45_000);
    expect(clock(45_000)).toBe('0:45');
    expect(clock(3_725_000)).toBe('1:02:05');
  });
});
