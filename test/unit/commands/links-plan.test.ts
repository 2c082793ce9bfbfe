import { describe, expect, it } from 'vitest';
import { DEAL_CONTACT_TYPES } from '../../../src/api/resources.js';
import {
  linkBody,
  linkListColumns,
  linkPairNames,
  normalizeChoice,
  resolveAssociation,
  resolveLink,
} from '../../../src/commands/links/plan.js';
import { alreadyLinked } from '../../../src/commands/links/run.js';

describe('link pairs', () => {
  it('are generated from the resource table', () => {
    expect(linkPairNames()).toEqual(['deals contacts', 'deals companies', 'notes records', 'segments members']);
  });
  it('an unknown pair names the valid ones', () => {
    expect(() => resolveLink('deals', 'notes')).toThrow(
      /valid pairs: deals contacts, deals companies, notes records, segments members/,
    );
    expect(() => resolveLink('contacts', 'deals')).toThrow(/unknown link 'contacts deals'/);
  });
  it('a meeting association used with links add points to get/set/clear', () => {
    expect(() => resolveLink('meetings', 'deal')).toThrow(/crm links get\|set\|clear meetings ID deal/);
  });
  it('associations exist only for meetings deal/company', () => {
    expect(resolveAssociation('meetings', 'deal').bodyKey).toBe('deal_id');
    expect(resolveAssociation('meetings', 'company').bodyKey).toBe('company_id');
    expect(() => resolveAssociation('meetings', 'contact')).toThrow(/valid: meetings deal, meetings company/);
    expect(() => resolveAssociation('deals', 'company')).toThrow(/unknown association/);
  });
});

describe('deal-contact type', () => {
  const normalizeDealContactType = (t: string) => normalizeChoice(resolveLink('deals', 'contacts').fields![0]!, t);
  it.each(DEAL_CONTACT_TYPES)('accepts %s', (t) => expect(normalizeDealContactType(t)).toBe(t));
  it.each([
    ['champion', 'CHAMPION'],
    ['decision-maker', 'DECISION_MAKER'],
    ['end user', 'END_USER'],
  ])('normalizes %s', (input, out) => expect(normalizeDealContactType(input)).toBe(out));
  it('refuses others, listing the twelve values', () => {
    expect(() => normalizeDealContactType('BOSS')).toThrow(/allowed: PRIMARY, DECISION_MAKER, .*COACH/);
  });
});

describe('linkBody', () => {
  const rel = (p: string, r: string) => resolveLink(p, r);
  it('deals contacts carries type and supervisor', () => {
    expect(
      linkBody(
        { parent: 'deals', relation: 'contacts', childId: 'con_1', type: 'coach', supervisor: 'con_2' },
        rel('deals', 'contacts'),
      ),
    ).toEqual({
      contact_id: 'con_1',
      type: 'COACH',
      supervisor: 'con_2',
    });
  });
  it('deals companies, segments members', () => {
    expect(linkBody({ parent: 'deals', relation: 'companies', childId: 'cmp_1' }, rel('deals', 'companies'))).toEqual({
      company_id: 'cmp_1',
    });
    expect(linkBody({ parent: 'segments', relation: 'members', childId: 'con_1' }, rel('segments', 'members'))).toEqual(
      { contact_id: 'con_1' },
    );
  });
  it('notes records default to contact', () => {
    expect(linkBody({ parent: 'notes', relation: 'records', childId: 'con_1' }, rel('notes', 'records'))).toEqual({
      record_id: 'con_1',
      record_type: 'contact',
    });
    expect(
      linkBody(
        { parent: 'notes', relation: 'records', childId: 'cmp_1', recordType: 'company' },
        rel('notes', 'records'),
      ),
    ).toEqual({
      record_id: 'cmp_1',
      record_type: 'company',
    });
  });
  it('refuses flags that do not belong to the pair', () => {
    expect(() =>
      linkBody({ parent: 'deals', relation: 'companies', childId: 'x', type: 'COACH' }, rel('deals', 'companies')),
    ).toThrow(/only to deals contacts/);
    expect(() =>
      linkBody({ parent: 'deals', relation: 'contacts', childId: 'x', recordType: 'deal' }, rel('deals', 'contacts')),
    ).toThrow(/only to notes records/);
  });
});

describe('alreadyLinked', () => {
  const body = (created: string, now: string) => ({ data: { created_at: created }, meta: { timestamp: now } });
  it('a link created during the request is new', () => {
    expect(alreadyLinked(201, body('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.004Z'), 30)).toBe(false);
    expect(alreadyLinked(201, body('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.060Z'), 30)).toBe(false);
  });
  it('a link created before the request already existed', () => {
    expect(alreadyLinked(201, body('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.400Z'), 30)).toBe(true);
    expect(alreadyLinked(201, body('2025-12-31T10:00:00.000Z', '2026-01-01T00:00:00.000Z'), 30)).toBe(true);
  });
  it('without times it says nothing; a 200 answer is a no-op', () => {
    expect(alreadyLinked(201, { data: {} }, 30)).toBe(false);
    expect(alreadyLinked(200, { data: {} }, 30)).toBe(true);
  });
});

describe('links list columns', () => {
  it("the linked id, then what the link says, then the child's own columns", () => {
    expect(linkListColumns(resolveLink('deals', 'contacts'))).toEqual([
      'id',
      'link.type',
      'link.supervisor',
      'email',
      'first_name',
      'last_name',
      'company_id',
      'owner_id',
    ]);
    expect(linkListColumns(resolveLink('notes', 'records')).slice(0, 3)).toEqual(['id', 'link.record_type', 'email']);
    expect(linkListColumns(resolveLink('segments', 'members'))[0]).toBe('id');
  });
});
