// The request log of the control endpoint: what reached the sandbox, with the auth headers'
// values replaced so that tests can assert what was sent without the log holding keys.

export interface LogEntry {
  index: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  status: number | null;
  fault: string | null;
  replayed: boolean;
  request_id: string;
  /** the listener that received it: the API's origin, or the transcript download origin */
  listener: 'api' | 'download';
}

const SECRET_HEADERS = new Set(['authorization', 'x-service-api-key', 'cookie']);
const MAX_ENTRIES = 50_000;

export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? '<present>' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export class RequestLog {
  private entries: LogEntry[] = [];
  /** index of entries[0]: old entries are dropped past MAX_ENTRIES, indices stay absolute */
  private offset = 0;
  total = 0;

  add(entry: Omit<LogEntry, 'index'>): LogEntry {
    const full = { index: this.total++, ...entry };
    this.entries.push(full);
    if (this.entries.length > MAX_ENTRIES) {
      const drop = this.entries.length - MAX_ENTRIES;
      this.entries.splice(0, drop);
      this.offset += drop;
    }
    return full;
  }

  since(index: number): LogEntry[] {
    return this.entries.slice(Math.max(0, index - this.offset));
  }
}
