// The resource table, one row per API resource (adding one is adding a row): the CLI's resource commands,
// links and completions, keys-check's probes and the sandbox's routes all come from it.

export type Verb = 'list' | 'get' | 'create' | 'update' | 'delete';
export type ScopeAction = 'read' | 'write' | 'delete';

/** A relationship sub-resource: `/{parent}/{id}/{relation}` (spec: Endpoints, version 2). */
export interface LinkRelation {
  /** path segment after the parent id, e.g. `contacts` in `/deals/{id}/contacts` */
  readonly relation: string;
  /** the resources a child may be (notes/records may point at several) */
  readonly childResources: readonly ResourceName[];
  /** the body field naming the child; the deal-contact body is the spec's, the others are CONTRACT §6's */
  readonly childKey: string;
  /** what else a link body may carry; `links list` shows each as a `link.<name>` column */
  readonly fields?: readonly LinkField[];
}

/** An optional field of a link body, set by a `crm links add` flag. */
export interface LinkField {
  readonly name: string;
  readonly flag: string;
  /** the allowed values; without them, any string */
  readonly values?: readonly string[];
  /** what `crm links add` sends when the flag is not given */
  readonly default?: string;
  /** the value names the child's kind (a singular, e.g. `company`), narrowing childResources */
  readonly namesChild?: boolean;
}

/** A meeting's single association: `/meetings/{id}/{name}` (GET, PUT, DELETE). */
export interface Association {
  readonly name: 'deal' | 'company';
  readonly target: ResourceName;
  /** the PUT body field (CONTRACT §6) */
  readonly bodyKey: string;
}

export interface ResourceDef {
  readonly name: ResourceName;
  readonly singular: string;
  /** prefix of ids the sandbox issues, e.g. `con_` */
  readonly idPrefix: string;
  readonly verbs: readonly Verb[];
  readonly batch: boolean;
  /** required on create (CONTRACT §10: the sandbox's choice) */
  readonly required: readonly string[];
  /** default table columns */
  readonly columns: readonly string[];
  readonly links?: readonly LinkRelation[];
  readonly associations?: readonly Association[];
  /** a record fetched by id carries a fresh tokenized link `url` when `flag` is true (spec: Recording) */
  readonly download?: { readonly flag: string; readonly url: string; readonly path: string };
  readonly description: string;
}

export const RESOURCE_NAMES = [
  'contacts',
  'companies',
  'deals',
  'pipelines',
  'tasks',
  'notes',
  'segments',
  'interactions',
  'meetings',
  'recordings',
  'bookings',
] as const;
export type ResourceName = (typeof RESOURCE_NAMES)[number];

/** Spec, "Deal-contact link (request)": the allowed `type` values. */
export const DEAL_CONTACT_TYPES: readonly string[] =
  `PRIMARY DECISION_MAKER CHAMPION INFLUENCER GATEKEEPER BLOCKER PROCUREMENT
  END_USER TECHNICAL_EVALUATOR ECONOMIC_BUYER EXECUTIVE_SPONSOR COACH`.split(/\s+/);

/** CONTRACT §6: `notes … records` names what kind of record it links. */
export const NOTE_RECORD_TYPES = ['contact', 'company', 'deal'] as const;

type Row = Omit<ResourceDef, 'verbs' | 'batch' | 'required'> & Partial<ResourceDef>;
/** Every verb and batch unless the row says otherwise. */
const crud = (r: Row): ResourceDef => ({
  verbs: ['list', 'get', 'create', 'update', 'delete'],
  batch: true,
  required: [],
  ...r,
});
const readOnly = (r: Row): ResourceDef => ({ verbs: ['list', 'get'], batch: false, required: [], ...r });

export const RESOURCES: readonly ResourceDef[] = [
  crud({
    name: 'contacts',
    singular: 'contact',
    idPrefix: 'con_',
    required: ['email'],
    columns: ['id', 'email', 'first_name', 'last_name', 'company_id', 'owner_id'],
    description: 'People you do business with (version 1: people)',
  }),
  crud({
    name: 'companies',
    singular: 'company',
    idPrefix: 'cmp_',
    required: ['name'],
    columns: ['id', 'name', 'domain', 'industry', 'owner_id'],
    description: 'Organizations your contacts belong to',
  }),
  crud({
    name: 'deals',
    singular: 'deal',
    idPrefix: 'deal_',
    required: ['name'],
    columns: ['id', 'name', 'amount', 'stage', 'pipeline_id', 'owner_id'],
    links: [
      {
        relation: 'contacts',
        childResources: ['contacts'],
        childKey: 'contact_id',
        fields: [
          { name: 'type', flag: 'type', values: DEAL_CONTACT_TYPES },
          { name: 'supervisor', flag: 'supervisor' },
        ],
      },
      { relation: 'companies', childResources: ['companies'], childKey: 'company_id' },
    ],
    description: 'Sales opportunities, linked to contacts and companies',
  }),
  crud({
    name: 'pipelines',
    singular: 'pipeline',
    idPrefix: 'pipe_',
    required: ['name'],
    columns: ['id', 'name', 'stages', 'owner_id'],
    description: 'Sales pipelines and their stages',
  }),
  crud({
    name: 'tasks',
    singular: 'task',
    idPrefix: 'task_',
    required: ['title'],
    columns: ['id', 'title', 'due_date', 'status', 'owner_id'],
    description: 'To-dos for you and your team',
  }),
  crud({
    name: 'notes',
    singular: 'note',
    idPrefix: 'note_',
    required: ['body'],
    columns: ['id', 'body', 'owner_id', 'created_at'],
    links: [
      {
        relation: 'records',
        childResources: ['contacts', 'companies', 'deals'],
        childKey: 'record_id',
        fields: [
          { name: 'record_type', flag: 'record-type', values: NOTE_RECORD_TYPES, default: 'contact', namesChild: true },
        ],
      },
    ],
    description: 'Free-text notes, linked to contacts, companies or deals',
  }),
  crud({
    name: 'segments',
    singular: 'segment',
    idPrefix: 'seg_',
    required: ['name'],
    columns: ['id', 'name', 'description', 'owner_id'],
    links: [{ relation: 'members', childResources: ['contacts'], childKey: 'contact_id' }],
    description: 'Lists of contacts',
  }),
  crud({
    name: 'interactions',
    singular: 'interaction',
    idPrefix: 'int_',
    verbs: ['list', 'get', 'create'],
    required: ['type'],
    columns: ['id', 'type', 'direction', 'title', 'interaction_date', 'owner_id'],
    description: 'Calls, emails and messages (no update, no delete)',
  }),
  readOnly({
    name: 'meetings',
    singular: 'meeting',
    idPrefix: 'mtg_',
    columns: ['id', 'title', 'starts_at', 'deal_id', 'company_id', 'owner_id'],
    associations: [
      { name: 'deal', target: 'deals', bodyKey: 'deal_id' },
      { name: 'company', target: 'companies', bodyKey: 'company_id' },
    ],
    description: 'Calendar meetings (read-only; can be associated with one deal and one company)',
  }),
  readOnly({
    name: 'recordings',
    singular: 'recording',
    idPrefix: 'rec_',
    columns: ['id', 'title', 'started_at', 'duration_seconds', 'has_transcript', 'owner_id'],
    download: { flag: 'has_transcript', url: 'transcript_url', path: '/transcripts/download/' },
    description: 'Call recordings and their transcripts (read-only)',
  }),
  readOnly({
    name: 'bookings',
    singular: 'booking',
    idPrefix: 'bkg_',
    columns: ['id', 'title', 'starts_at', 'status', 'owner_id'],
    description: 'Scheduling-page bookings (read-only)',
  }),
];

const BY_NAME = new Map<string, ResourceDef>(RESOURCES.map((r) => [r.name, r]));

export function findResource(name: string): ResourceDef | undefined {
  return BY_NAME.get(name);
}

export function isResourceName(name: string): name is ResourceName {
  return BY_NAME.has(name);
}

/**
 * The links a record of `resource` can be part of, which its fields do not hold (so a record created again
 * from a delete's backup comes back without them): its own links, other resources' links to it, and
 * meetings' associations with it; each as a path pattern and words (`deals/{id}/contacts`, `their contacts`).
 */
export function linksTo(resource: string): Array<{ path: string; words: string }> {
  const own = (findResource(resource)?.links ?? []).map((l) => ({
    path: `${resource}/{id}/${l.relation}`,
    words: `their ${l.relation}`,
  }));
  const from = RESOURCES.filter((r) => r.name !== resource).flatMap((r) => [
    ...(r.links ?? [])
      .filter((l) => l.childResources.includes(resource as ResourceName))
      .map((l) => ({ path: `${r.name}/{id}/${l.relation}`, words: `the ${r.name} that linked them` })),
    ...(r.associations ?? [])
      .filter((a) => a.target === resource)
      .map((a) => ({ path: `${r.name}/{id}/${a.name}`, words: `the ${r.name} associated with them` })),
  ]);
  return [...own, ...from];
}

/** Spec, Authentication rule 6: scopes are `resource:action`. */
export function scopeFor(resource: string, action: ScopeAction): string {
  return `${resource}:${action}`;
}

/** Every scope the API knows, in table order: what the sandbox's admin key holds. */
export function allScopes(): string[] {
  return RESOURCES.flatMap((r) => {
    const actions: ScopeAction[] = ['read'];
    if (r.verbs.includes('create') || r.verbs.includes('update') || r.associations) actions.push('write');
    if (r.verbs.includes('delete')) actions.push('delete');
    return actions.map((a) => scopeFor(r.name, a));
  });
}

export function readScopes(): string[] {
  return RESOURCES.map((r) => scopeFor(r.name, 'read'));
}

/** Fields the server sets and refuses in a body (`read_only`); `crm batch` leaves such exported columns out. */
export const READ_ONLY_FIELDS: readonly string[] = ['id', 'created_at', 'updated_at', 'owner_id'];

export const PAGE_SIZE_DEFAULT = 25;
export const PAGE_SIZE_MAX = 100;
export const BATCH_MAX = 100;

/** `email`, `work_email`, …: an address, compared case-insensitively, never with spaces around it. */
export function isEmailField(field: string): boolean {
  return field === 'email' || field.endsWith('_email');
}

/**
 * A field whose values compare in any case: an email (CONTRACT §7b) and, beyond it, a domain (case-free in DNS, RFC
 * 4343; the trial's export had `LITWARE.TEST` for the company at `litware.test`, and was refused as not found).
 */
export function isCaseFreeField(field: string): boolean {
  return isEmailField(field) || field === 'domain' || field.endsWith('_domain');
}
