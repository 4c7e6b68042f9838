import net from 'node:net';
import tls from 'node:tls';
import { AbstractConnector, Redis, type RedisOptions } from 'ioredis';

type Address = { host: string; port: number };

export interface SlotMasterOptions {
  /** Cluster nodes to ask where the slot's master is (the configured seeds; nodes seen since are added). */
  seeds: Address[];
  /** A key of the slot: every key this connection touches carries the same hash tag. */
  key: string;
}

/**
 * Connects a plain ioredis client to the master that serves one hash slot of a Redis Cluster, and finds that master
 * again on every (re)connect. For a user whose keys all live on one slot (BullMQ: `{prefix:bull}`), this follows a
 * failover the way the Sentinel connector does: the old master's socket closes, the client reconnects with its
 * retry strategy, asks the cluster (CLUSTER SLOTS) where the slot is now, connects there, checks with INFO that the
 * node is a master, and resends what was unanswered. No Cluster client is involved, so none of its slot-map and
 * reconnect paths (where BullMQ's workers were seen to hang for good after that master died) can strand a caller.
 */
export class SlotMasterConnector extends AbstractConnector {
  private readonly known: Address[];

  constructor(private readonly options: RedisOptions & { slotMaster: SlotMasterOptions }) {
    super(options.disconnectTimeout ?? 2000);
    this.known = [...options.slotMaster.seeds];
  }

  async connect(): Promise<net.Socket | tls.TLSSocket> {
    this.connecting = true;
    const master = await this.findMaster();
    if (!this.connecting) throw new Error('Connection is closed.');
    const where = { host: master.host, port: master.port };
    const stream = this.options.tls
      ? tls.connect({ ...this.options.tls, ...where })
      : net.createConnection(where);
    stream.once('error', (err: Error) => {
      (this as unknown as { firstError?: Error }).firstError = err;
    });
    this.stream = stream;
    return stream;
  }

  /** A node that answered INFO as a replica (a failover ahead of CLUSTER SLOTS) is left: the next connect asks again. */
  override check(info: Record<string, string>): boolean {
    return info.role === 'master';
  }

  /** The master of the slot, asked of the nodes known so far in turn (those that answer teach the others). */
  private async findMaster(): Promise<Address> {
    let lastError: unknown = new Error('no cluster node to ask');
    for (const node of [...this.known]) {
      const probe = new Redis({
        host: node.host,
        port: node.port,
        username: this.options.username,
        password: this.options.password,
        tls: this.options.tls,
        lazyConnect: true,
        connectTimeout: 1000,
        commandTimeout: 1000,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
        enableOfflineQueue: false,
        enableReadyCheck: false,
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        const slot = Number(await probe.call('CLUSTER', 'KEYSLOT', this.options.slotMaster.key));
        const ranges = (await probe.call('CLUSTER', 'SLOTS')) as [number, number, ...[string, number][]][];
        this.learn(ranges);
        const range = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (range) return { host: range[2][0] || node.host, port: Number(range[2][1]) };
        lastError = new Error(`slot ${slot} has no master`);
      } catch (err) {
        lastError = err;
      } finally {
        probe.disconnect();
      }
    }
    throw lastError;
  }

  private learn(ranges: [number, number, ...[string, number][]][]): void {
    for (const [, , ...nodes] of ranges)
      for (const [host, port] of nodes)
        if (host && !this.known.some((k) => k.host === host && k.port === Number(port)))
          this.known.push({ host, port: Number(port) });
  }
}
