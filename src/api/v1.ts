// The version 1 operations (spec: "Version 1 shapes"; CONTRACT §9): two queries that show version 2
// contacts and interactions in camelCase, and a company update. `crm v1` and the sandbox read them here.
import type { ResourceName } from './resources.js';

export type V1FieldType = 'string' | 'string[]' | 'integer';

/** `'a b:c'` (spaces or line breaks between) → `{ a: otherwise(a), b: 'c' }`, in the order given. */
const pairs = <T extends string>(spec: string, otherwise: (name: string) => T) =>
  Object.fromEntries(
    spec
      .split(/\s+/)
      .map((token) => token.split(':'))
      .map(([name, value]) => [name!, (value as T) ?? otherwise(name!)]),
  );

/** Spec, "Company update fields (version 1)": strings unless noted; this order is the order of the flags. */
export const V1_COMPANY_FIELDS: Readonly<Record<string, V1FieldType>> = pairs(
  `domain description name altIndustries:string[] tags:string[] foundedYear:integer
    address city state country linkedin twitter facebook instagram crunchbase phone remarks`,
  () => 'string',
);

/** Spec, "Person (version 1)": version 2 contact field → version 1 person field (the same unless given). */
export const V1_PERSON_FIELDS: Readonly<Record<string, string>> = pairs(
  `id company_id:companyId email first_name:firstName last_name:lastName linkedin owner_id:owner phone source title
    created_by:createdBy created_at:creationTime last_interaction_at:lastInteraction`,
  (name) => name,
);

/** Spec, "Interaction (version 1)": version 2 interaction field → version 1 field. */
export const V1_INTERACTION_FIELDS: Readonly<Record<string, string>> = pairs(
  `id company_ids:companies contact_ids:contacts direction sentiment source summary title type
    created_by:createdBy created_at:creationTime interaction_date:interactionDate`,
  (name) => name,
);

/** One version 1 operation: `POST /{kind}/query`, or `PATCH /companies/{id}`. */
export interface V1Operation {
  readonly kind: 'people' | 'interactions' | 'companies';
  /** the version 2 resource behind it, and the version 2 verb to use instead */
  readonly resource: ResourceName;
  readonly instead: 'list' | 'update';
}

export interface V1Query extends V1Operation {
  readonly kind: 'people' | 'interactions';
  /** version 2 field → version 1 field; every scalar version 1 field is an exact-match filter */
  readonly fields: Readonly<Record<string, string>>;
  /** filters matching one element of an array field: filter → version 1 field */
  readonly arrayFilters: Readonly<Record<string, string>>;
  /** default table columns */
  readonly columns: readonly string[];
  /** `always`: answers carry `nextCursor`; `optional`: only a server that pages them sends one */
  readonly nextCursor: 'always' | 'optional';
}

export const V1_QUERIES: readonly V1Query[] = [
  {
    kind: 'people',
    resource: 'contacts',
    instead: 'list',
    fields: V1_PERSON_FIELDS,
    arrayFilters: {},
    columns: ['id', 'email', 'firstName', 'lastName', 'companyId', 'owner'],
    nextCursor: 'always',
  },
  {
    kind: 'interactions',
    resource: 'interactions',
    instead: 'list',
    fields: V1_INTERACTION_FIELDS,
    arrayFilters: { companyId: 'companies', contactId: 'contacts' },
    columns: ['id', 'type', 'direction', 'title', 'interactionDate', 'createdBy'],
    nextCursor: 'optional',
  },
];

export const V1_COMPANY_UPDATE: V1Operation & { readonly fields: typeof V1_COMPANY_FIELDS } = {
  kind: 'companies',
  resource: 'companies',
  instead: 'update',
  fields: V1_COMPANY_FIELDS,
};

export function findV1Query(kind: string): V1Query | undefined {
  return V1_QUERIES.find((q) => q.kind === kind);
}
