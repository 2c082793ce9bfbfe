// API paths with every caller-supplied segment percent-encoded: the one encoder is src/http/url.ts.
export { pathSegment as segment, recordPath } from '../../http/url.js';
