/**
 * A primary and a streaming replica from the embedded PostgreSQL binaries, behind one stable address (a TCP proxy,
 * as a cloud endpoint is), for the failover scenarios. The replica is a copy of the primary's data directory taken
 * while it was stopped (the embedded packages ship no pg_basebackup), started with `standby.signal` and a
 * `primary_conninfo` that reaches the primary through a proxy of its own: the replication link, which a scenario
 * can stall (WAL stops reaching the replica, as under replication lag).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TcpProxy, waitFor } from '@webhook-inbox/testing';
import { findFreePorts, startEmbeddedPostgres, type EmbeddedPostgres } from '@webhook-inbox/testing/embedded';
import { migrateExampleDatabase } from '@webhook-inbox/worker/migrations';
import pg from 'pg';
import { StallProxy } from './stall-proxy.ts';

const DATABASE = 'inbox';
/** The standby's name in `synchronous_standby_names` and `pg_stat_replication`. */
const STANDBY = 'replica';

export interface Replication {
  state: string;
  syncState: string;
  /** Bytes of WAL the primary has written that the replica has not replayed. */
  lagBytes: number;
}

export interface ReplicatedPostgres {
  /** The inbox database through the stable address: the primary, then the promoted replica. */
  readonly url: string;
  /** The replication as the primary sees it, once the replica is connected. */
  replication(): Promise<Replication | undefined>;
  /** Waits until the replica has replayed everything the primary had written when this was called. */
  caughtUp(timeoutMs: number): Promise<Replication>;
  /** WAL stops reaching the replica: its connection to the primary hangs, nothing is closed. */
  stallReplication(): void;
  /** The primary crashes (immediate shutdown). Returns when it was gone. */
  crashPrimary(): Promise<number>;
  /** The replica is promoted and the stable address moves to it. Returns when each was done. */
  promoteReplica(): Promise<{ promotedAt: number; switchedAt: number }>;
  stop(): Promise<void>;
}

/**
 * Starts a primary (migrated, with the example's tables) and its replica; `synchronous`: every commit on the
 * primary waits for the replica to have flushed it (`synchronous_commit = on`, the default, and
 * `synchronous_standby_names` naming the replica).
 */
export async function startReplicatedPostgres({
  synchronous,
}: {
  synchronous: boolean;
}): Promise<ReplicatedPostgres> {
  const root = path.join(
    os.tmpdir(),
    `webhook-inbox-failover-${process.pid}-${randomBytes(3).toString('hex')}`,
  );
  await mkdir(root, { recursive: true, mode: 0o755 });
  const primaryDir = path.join(root, 'primary');
  const replicaDir = path.join(root, 'replica');
  const [primaryPort, replicaPort] = await findFreePorts(2);
  // Throwaway clusters: no fsync (a crash here is the postmaster's, not the machine's: the OS keeps the files).
  const common = { persistent: true, maxConnections: 150, settings: { fsync: 'off' } };
  const servers: EmbeddedPostgres[] = [];
  let front: TcpProxy | undefined;
  let link: StallProxy | undefined;
  const stop = async () => {
    await Promise.all(servers.map((server) => server.stop().catch(() => {})));
    await front?.close();
    await link?.close();
    await rm(root, { recursive: true, force: true });
  };
  try {
    let primary = await startEmbeddedPostgres({ ...common, dataDir: primaryDir, port: primaryPort! });
    const admin = new pg.Client({ connectionString: primary.url() });
    await admin.connect();
    await admin.query(`create database ${DATABASE}`);
    await admin.end();
    await migrateExampleDatabase(primary.url(DATABASE));
    await primary.stop();

    // The replica: a copy of the stopped primary (ownership kept: PostgreSQL may run as another user).
    const copy = spawnSync('cp', ['-a', primaryDir, replicaDir], { encoding: 'utf8' });
    if (copy.status !== 0) throw new Error(`could not copy the primary's data directory: ${copy.stderr}`);
    await writeFile(path.join(replicaDir, 'standby.signal'), '');

    primary = await startEmbeddedPostgres({
      ...common,
      dataDir: primaryDir,
      port: primaryPort!,
      settings: { ...common.settings, synchronous_standby_names: synchronous ? STANDBY : '' },
    });
    servers.push(primary);
    link = await StallProxy.start(primary.url());
    const replica = await startEmbeddedPostgres({
      ...common,
      dataDir: replicaDir,
      port: replicaPort!,
      settings: {
        ...common.settings,
        primary_conninfo: `host=127.0.0.1 port=${link.port} user=postgres password=postgres application_name=${STANDBY}`,
      },
    });
    servers.push(replica);
    front = await TcpProxy.start(primary.url(DATABASE));
    const stable = front;
    const replicationLink = link;
    const primaryUrl = primary.url(DATABASE);
    const crashed = primary;

    const replication = async (): Promise<Replication | undefined> => {
      const client = new pg.Client({ connectionString: primaryUrl, connectionTimeoutMillis: 5_000 });
      client.on('error', () => {});
      await client.connect();
      try {
        const { rows } = await client.query<{ state: string; sync_state: string; lag: string }>(
          `select state, sync_state, (pg_current_wal_lsn() - replay_lsn)::text as lag
             from pg_stat_replication where application_name = $1`,
          [STANDBY],
        );
        const row = rows[0];
        return row && { state: row.state, syncState: row.sync_state, lagBytes: Number(row.lag) };
      } finally {
        await client.end().catch(() => {});
      }
    };

    return {
      url: stable.url(primaryUrl),
      replication,
      caughtUp: async (timeoutMs) => {
        const client = new pg.Client({ connectionString: primaryUrl });
        await client.connect();
        try {
          const { rows } = await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
          const target = rows[0]!.lsn;
          await waitFor(
            async () => {
              const { rows: caught } = await client.query<{ ok: boolean }>(
                `select coalesce(bool_and(state = 'streaming' and replay_lsn >= $2::pg_lsn), false) as ok
                   from pg_stat_replication where application_name = $1`,
                [STANDBY, target],
              );
              return caught[0]!.ok;
            },
            { timeout: timeoutMs, interval: 50, message: `the replica replaying up to ${target}` },
          );
          return (await replication())!;
        } finally {
          await client.end().catch(() => {});
        }
      },
      stallReplication: () => void replicationLink.stall(),
      crashPrimary: async () => {
        await crashed.crash();
        return Date.now();
      },
      promoteReplica: async () => {
        const client = new pg.Client({ connectionString: replica.url(DATABASE) });
        await client.connect();
        try {
          await client.query('select pg_promote(true, 60)');
        } finally {
          await client.end();
        }
        const promotedAt = Date.now();
        stable.retarget(replica.url(DATABASE));
        return { promotedAt, switchedAt: Date.now() };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
