import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** Where a proxy sends new connections. */
export interface ProxyTarget {
  host: string;
  port: number;
}

/**
 * A TCP proxy on a loopback port: a stable address in front of PostgreSQL, as a managed
 * database's endpoint or a load balancer is. It can be repointed (new connections go to the new
 * target, open ones stay where they are), and it can lose the answer to the next COMMIT (the
 * server commits; the client's connection is cut before the answer reaches it).
 */
export class TcpProxy {
  private readonly pairs = new Set<{ client: Socket; server: Socket; port: number }>();
  private cutCommit = false;
  /** COMMITs whose answer was swallowed. */
  commitsCut = 0;

  private constructor(
    private readonly listener: Server,
    private target: ProxyTarget,
    readonly port: number,
  ) {}

  static async start(target: ProxyTarget): Promise<TcpProxy> {
    let proxy: TcpProxy | null = null;
    const listener = createServer((client) => proxy!.accept(client));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    proxy = new TcpProxy(listener, target, (listener.address() as AddressInfo).port);
    return proxy;
  }

  /** New connections go to `target` from now on. */
  repoint(target: ProxyTarget): void {
    this.target = target;
  }

  /** Arms the proxy: the next COMMIT is forwarded, the server's answer swallowed, and both sides of that connection cut. */
  loseNextCommitAnswer(): void {
    this.cutCommit = true;
  }

  /** Connections open through the proxy now to the target on `port`. */
  openTo(port: number): number {
    return [...this.pairs].filter((pair) => pair.port === port).length;
  }

  private accept(client: Socket): void {
    const server = connect(this.target.port, this.target.host);
    const pair = { client, server, port: this.target.port };
    this.pairs.add(pair);
    let cutting = false;
    const close = () => {
      this.pairs.delete(pair);
      client.destroy();
      server.destroy();
    };
    client.on('data', (chunk) => {
      // A simple-protocol Query message whose text is COMMIT (how knex ends a transaction).
      if (this.cutCommit && /Q[\s\S]{4}commit;?\0/i.test(chunk.toString('latin1'))) {
        this.cutCommit = false;
        cutting = true;
      }
      server.write(chunk);
    });
    server.on('data', (chunk) => {
      if (!cutting) return void client.write(chunk);
      // The server has committed and answered: the client never hears it.
      this.commitsCut++;
      close();
    });
    for (const socket of [client, server]) {
      socket.on('error', close);
      socket.on('close', close);
    }
  }

  async close(): Promise<void> {
    for (const { client, server } of this.pairs) {
      client.destroy();
      server.destroy();
    }
    await new Promise((resolve) => this.listener.close(resolve));
  }
}
