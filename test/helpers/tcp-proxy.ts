/**
 * A TCP proxy a test controls, to put network faults between a replica and PostgreSQL
 * (docs/operations.md#faults-and-recovery). It forwards both ways until told otherwise:
 *
 * - `blackhole()`: every connection, open or new, stops forwarding without a reset, as when a cable is
 *   pulled or a security group changed: nothing is refused, nothing answers. What each side sends is
 *   held, in order, and delivered on `heal()`, as TCP retransmits after a short partition (a side that
 *   gave up and closed meanwhile sees its buffered bytes arrive at a closed peer). New connections are
 *   accepted and reach the server only after the heal. `{ existing: true }` silences only the
 *   connections open now (a NAT table flushed under them): new ones go through.
 * - `latency(ms)`: every chunk from the client waits `ms` before it is forwarded (order kept), so each
 *   statement's round trip takes that much longer.
 */
import net from "node:net";

interface Leg {
  /** Chunks (or the end, as null) held while blackholed. */
  readonly held: (Buffer | null)[];
  /** When the last chunk scheduled under latency leaves, to keep order when the latency changes. */
  lastAt: number;
}

interface Link {
  readonly client: net.Socket;
  upstream: net.Socket | null;
  blackholed: boolean;
  readonly toServer: Leg;
  readonly toClient: Leg;
  /** What the client sent before the upstream connection was made. */
  readonly early: (Buffer | null)[];
}

export interface TcpProxy {
  readonly port: number;
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url(databaseUrl: string): string;
  /** Stops forwarding (all connections, or only those open now), holding what is sent. */
  blackhole(options?: { readonly existing?: boolean }): void;
  /** Forwards again, delivering what was held. */
  heal(): void;
  /** Delays every chunk from the client by `ms` (0: none). */
  latency(ms: number): void;
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

/** Starts a proxy on an OS-assigned port of 127.0.0.1 in front of `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>();
  let blackholeNew = false;
  let latencyMs = 0;
  let accepted = 0;

  const deliver = (to: net.Socket | null, chunk: Buffer | null): void => {
    if (to === null || to.destroyed) return;
    if (chunk === null) to.end();
    else to.write(chunk);
  };
  const send = (link: Link, leg: Leg, chunk: Buffer | null): void => {
    const to = leg === link.toServer ? link.upstream : link.client;
    if (link.blackholed) {
      leg.held.push(chunk);
      return;
    }
    if (leg === link.toServer && latencyMs > 0) {
      const at = Math.max(Date.now() + latencyMs, leg.lastAt);
      leg.lastAt = at;
      setTimeout(
        () => {
          if (link.blackholed) leg.held.push(chunk);
          else deliver(link.upstream, chunk);
        },
        Math.max(0, at - Date.now()),
      );
      return;
    }
    deliver(to, chunk);
  };
  const destroy = (link: Link): void => {
    links.delete(link);
    link.client.destroy();
    link.upstream?.destroy();
  };
  const connectUpstream = (link: Link): void => {
    const upstream = net.connect(target.port, target.host);
    link.upstream = upstream;
    upstream.on("data", (chunk: Buffer) => {
      send(link, link.toClient, chunk);
    });
    upstream.on("end", () => {
      send(link, link.toClient, null);
    });
    upstream.on("error", () => {
      destroy(link);
    });
    upstream.on("close", () => {
      if (!link.blackholed) destroy(link);
    });
    for (const chunk of link.early.splice(0)) send(link, link.toServer, chunk);
  };
  const flush = (link: Link): void => {
    link.blackholed = false;
    if (link.upstream === null) connectUpstream(link);
    for (const chunk of link.toServer.held.splice(0)) send(link, link.toServer, chunk);
    for (const chunk of link.toClient.held.splice(0)) send(link, link.toClient, chunk);
    // A side that went away meanwhile: the other gets its held bytes, then the close.
    if (link.client.destroyed) link.upstream?.end();
    if (link.upstream?.destroyed === true) destroy(link);
  };

  const server = net.createServer((client) => {
    accepted++;
    const link: Link = {
      client,
      upstream: null,
      blackholed: blackholeNew,
      toServer: { held: [], lastAt: 0 },
      toClient: { held: [], lastAt: 0 },
      early: [],
    };
    links.add(link);
    client.on("data", (chunk: Buffer) => {
      if (link.upstream === null) link.early.push(chunk);
      else send(link, link.toServer, chunk);
    });
    client.on("end", () => {
      if (link.upstream === null) link.early.push(null);
      else send(link, link.toServer, null);
    });
    client.on("error", () => {
      destroy(link);
    });
    client.on("close", () => {
      if (!link.blackholed) destroy(link);
    });
    if (!link.blackholed) connectUpstream(link);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no proxy address");
  const port = address.port;
  return {
    port,
    url: (databaseUrl) => {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    blackhole: (options = {}) => {
      if (options.existing !== true) blackholeNew = true;
      for (const link of links) link.blackholed = true;
    },
    heal: () => {
      blackholeNew = false;
      for (const link of [...links]) flush(link);
    },
    latency: (ms) => {
      latencyMs = ms;
    },
    get accepted() {
      return accepted;
    },
    close: async () => {
      for (const link of [...links]) destroy(link);
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
