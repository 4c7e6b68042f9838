import net from 'node:net';

/** A loopback TCP proxy a test can cut (drop every connection, refuse new ones) and restore: a network outage. */
export interface TcpProxy {
  /** The port it listens on (127.0.0.1). */
  port: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    const upstream = net.connect(target);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dropAll = () => {
    for (const socket of open) socket.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut: () => {
      cut = true;
      dropAll();
    },
    restore: () => {
      cut = false;
    },
    close: async () => {
      dropAll();
      await new Promise((r) => server.close(r));
    },
  };
}
