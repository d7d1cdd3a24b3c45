import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

// Below the NodePort range (30000-32767), which kube-proxy may claim.
const CHOSEN_PORTS = { from: 20_000, below: 30_000 };

/**
 * A port that was free a moment ago, for a server started next. It is chosen below the kernel's
 * ephemeral range: a port the kernel picked could be handed to any outgoing connection (a parallel
 * suite's client, say) before our server binds it, and that server then exits at startup.
 */
export async function freePort(): Promise<number> {
  const below = Math.min(CHOSEN_PORTS.below, ephemeralRangeStart());
  if (below - CHOSEN_PORTS.from < 1_000) return listenOnce(0);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = CHOSEN_PORTS.from + Math.floor(Math.random() * (below - CHOSEN_PORTS.from));
    const bound = await listenOnce(port).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE' || error.code === 'EACCES') return undefined;
      throw error;
    });
    if (bound !== undefined) return bound;
  }
  return listenOnce(0);
}

function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 ? low : CHOSEN_PORTS.below;
  } catch {
    return CHOSEN_PORTS.below;
  }
}

// Every address at once: a server on any one of them (loopback, the host address) holds the port.
function listenOnce(port: number): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on('error', fail);
    server.listen({ port, host: '0.0.0.0', exclusive: true }, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}
