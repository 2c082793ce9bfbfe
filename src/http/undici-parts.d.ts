// Types for the two undici files transport.ts imports directly (undici has no "exports" map, so
// its lib/ files are importable; its typings cover only the package root). Importing the root
// would load all of undici (fetch, WebSocket, cookies, caches, mocks) and, through its cookies
// module, Node's own bundled undici as well: about 60 ms more for every command that sends a request.
declare module 'undici/lib/dispatcher/pool.js' {
  import type { Pool } from 'undici';
  const PoolClass: typeof Pool;
  export default PoolClass;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  /** Dispatcher.prototype.request, unbound: call it with the dispatcher as `this`. */
  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export default request;
}

declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}

// Loaded only when a proxy variable names a proxy for the request (src/http/transport.ts).
declare module 'undici/lib/dispatcher/proxy-agent.js' {
  import type { ProxyAgent } from 'undici';
  const ProxyAgentClass: typeof ProxyAgent;
  export default ProxyAgentClass;
}

declare module 'undici/lib/api/api-connect.js' {
  import type { Dispatcher } from 'undici';
  /** Dispatcher.prototype.connect, unbound (the package root installs it on every dispatcher; we do not load the root). */
  function connect(this: Dispatcher, options: Dispatcher.ConnectOptions): Promise<Dispatcher.ConnectData>;
  export default connect;
}
