// A bulk run's V8 heap settings, for its peak RSS (`crm batch`, `crm links import` by natural key).
import { setFlagsFromString } from 'node:v8';

export function capHeap(): void {
  // a bulk run allocates fast but keeps a small live heap: cap V8's GC headroom, the bulk of its peak
  // RSS (bench/import.mjs: 107 MB instead of ~135 MB at 300 000 rows, no measurable CPU cost)
  setFlagsFromString('--heap-growing-percent=50');
  // and the young generation kept at its first size (it doubles under load up to 16 MB a half by default): a
  // reconcile's 1,000,000-record index peaked at 212 MB instead of 243 MB, the CPU the same (bench/reconcile.mjs)
  setFlagsFromString('--semi-space-growth-factor=1');
}
