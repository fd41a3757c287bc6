// Shell commands that restart a test's services, for `fencer conformance
// --sink-restart-cmd` and `--coordinator-restart-cmd`. The kit runs them with
// sh and waits for them to exit, while the processes to restart belong to the
// test (a cluster's supervisor, startFencer's children). So each command asks
// the test, over a loopback HTTP server, to run the restart it named.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A test's restart commands, by name; close() when the test ends. */
export interface RestartCommands {
  /** The sh command that runs the restart named `name` and exits 0 once it is done (1 if it failed). */
  command(name: string): string;
  close(): Promise<void>;
}

/**
 * Serves `restarts` (name → what to do: typically SIGKILL a service and
 * start it again on its address) on 127.0.0.1 and returns the commands that
 * trigger them. A failed restart answers 500 with its message, which the
 * command prints on stderr, where the kit reads why it failed.
 */
export async function serveRestartCommands(
  restarts: Readonly<Record<string, () => Promise<unknown>>>,
): Promise<RestartCommands> {
  const server = createServer((request, response) => {
    const restart = Object.hasOwn(restarts, request.url!.slice(1)) ? restarts[request.url!.slice(1)] : undefined;
    if (request.method !== 'POST' || restart === undefined) {
      response.writeHead(404).end(`no restart ${request.method} ${request.url}`);
      return;
    }
    restart().then(
      () => response.writeHead(204).end(),
      (error: unknown) => response.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  // Node itself, so the command needs nothing on PATH.
  const post =
    'fetch(process.argv[1], { method: "POST" }).then(async (r) => { if (!r.ok) { console.error(await r.text()); process.exit(1); } })';
  return {
    command: (name) => `'${process.execPath}' -e '${post}' http://127.0.0.1:${port}/${name}`,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}
