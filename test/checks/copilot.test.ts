import { describe, expect, it } from 'vitest';
import type { CopilotInteractionAttrs } from '../../src/sources/graph/streams/copilotInteractions.ts';
import { checkContext, estateRow, resultFor, runCheck, sliceError, streamError, userRow } from '../support/checks.ts';

function interaction(id: string, userId: string, inspection: Partial<CopilotInteractionAttrs['inspection']> = {}) {
  return estateRow(
    'copilotInteractions',
    `${userId}/${id}`,
    {
      userId,
      sessionId: '19:abc@thread.v2',
      requestId: id,
      appClass: 'IPM.SkypeTeams.Message.Copilot.BizChat',
      interactionType: 'userPrompt',
      conversationType: 'bizchat',
      createdDateTime: '2026-11-20T10:00:00Z',
      from: { type: 'user', id: userId },
      contexts: 0,
      attachments: 0,
      links: 0,
      bodyLength: 120,
      inspection: { secrets: 0, personal: 0, types: [], excerpts: [], ...inspection },
    } as CopilotInteractionAttrs,
    { sliceKey: userId },
  );
}
const users = [
  userRow({ id: 'u1', user_principal_name: 'ann@contoso.com' }),
  userRow({ id: 'g1', user_type: 'Guest', user_principal_name: 'eve_fabrikam.com#EXT#@contoso.onmicrosoft.com' }),
];
const noPermission = streamError(
  'copilotInteractions',
  'MISSING_PERMISSION',
  'Not collected: the Microsoft Graph application permission AiEnterpriseInteraction.Read.All is not granted.',
);

describe('copilot_interaction_secret_leak', () => {
  it('passes the tenant when no interaction held a secret', async () => {
    const r = await runCheck(
      'copilot_interaction_secret_leak',
      checkContext({
        users,
        estate: { copilotInteractions: [interaction('1', 'u1'), interaction('2', 'u1', { personal: 1, types: ['card_number'] as never })] },
      }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceType: 'tenant', status: 'pass' })]);
  });
  it('fails once per user whose interactions held secrets, with redacted excerpts only', async () => {
    const r = await runCheck(
      'copilot_interaction_secret_leak',
      checkContext({
        users,
        estate: {
          copilotInteractions: [
            interaction('1', 'u1', { secrets: 1, types: ['aws_access_key'] as never, excerpts: ['key AKIA…(20)'] }),
            interaction('2', 'u1', { secrets: 2, types: ['jwt'] as never }),
          ],
        },
      }),
    );
    expect(r).toHaveLength(1);
    expect(resultFor(r, 'u1')).toMatchObject({
      status: 'fail',
      resourceType: 'user',
      reason: expect.stringMatching(/2 Copilot interaction\(s\) of ann@contoso.com.*aws_access_key, jwt/),
    });
  });
  it('is not evaluated without AiEnterpriseInteraction.Read.All, and per user batch that failed', async () => {
    expect(await runCheck('copilot_interaction_secret_leak', checkContext({ checkpoints: [noPermission] }))).toEqual([
      expect.objectContaining({ status: 'not_evaluated', reason: expect.stringContaining('AiEnterpriseInteraction.Read.All') }),
    ]);
    const r = await runCheck(
      'copilot_interaction_secret_leak',
      checkContext({ checkpoints: [sliceError('copilotInteractions', 'u1', 'Authorization_RequestDenied')] }),
    );
    expect(r.find((x) => x.status === 'not_evaluated')).toMatchObject({ resourceName: 'u1' });
  });
});

describe('copilot_interaction_personal_data', () => {
  it('passes the tenant when no interaction held personal data', async () => {
    const r = await runCheck(
      'copilot_interaction_personal_data',
      checkContext({ users, estate: { copilotInteractions: [interaction('1', 'u1', { secrets: 1 })] } }),
    );
    expect(r).toEqual([expect.objectContaining({ status: 'pass' })]);
  });
  it('fails the user whose interactions held card numbers', async () => {
    const r = await runCheck(
      'copilot_interaction_personal_data',
      checkContext({ users, estate: { copilotInteractions: [interaction('1', 'u1', { personal: 1, types: ['card_number'] as never })] } }),
    );
    expect(resultFor(r, 'u1')).toMatchObject({ status: 'fail', reason: expect.stringContaining('card_number') });
  });
  it('is not evaluated without the permission', async () => {
    expect((await runCheck('copilot_interaction_personal_data', checkContext({ checkpoints: [noPermission] })))[0]?.status).toBe('not_evaluated');
  });
});

describe('copilot_used_by_guest', () => {
  it('passes when only members use Copilot', async () => {
    expect(await runCheck('copilot_used_by_guest', checkContext({ users, estate: { copilotInteractions: [interaction('1', 'u1')] } }))).toEqual([
      expect.objectContaining({ status: 'pass' }),
    ]);
  });
  it('fails the guest with interaction history', async () => {
    const r = await runCheck(
      'copilot_used_by_guest',
      checkContext({ users, estate: { copilotInteractions: [interaction('1', 'u1'), interaction('2', 'g1')] } }),
    );
    expect(r).toEqual([expect.objectContaining({ resourceId: 'g1', status: 'fail', reason: expect.stringContaining('eve_fabrikam.com#EXT#') })]);
  });
  it('is not evaluated without directory users', async () => {
    expect((await runCheck('copilot_used_by_guest', checkContext({ checkpoints: [streamError('users')] })))[0]?.status).toBe('not_evaluated');
  });
});
