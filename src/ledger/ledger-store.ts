import type { CheckpointRecord } from "#audit/checkpoint";
import type { NodeStore } from "#audit/merkle";
import type { AuditEntryRecord } from "#audit/verify";

/** An entry as the OrgLedger keeps it in its own storage, before and after Postgres has it. */
export type StoredEntry = AuditEntryRecord & { leaf_hash: string };

export interface Head {
  sequence: number;
  hash: string;
  time: string;
}

/** A revocation as the ledger object keeps it: what it voids, its entry, and when it took effect. */
export interface Voiding {
  key: string;
  sequence: number;
  /** The revocation's time as the record shows it (`revoked_at`). */
  at: string;
}

type Row = Record<string, SqlStorageValue>;

/** How a spend names its consent: the digest of what was signed, and the texts it had before. */
export interface ConsentKey {
  root: string;
  rootSpellings?: string[];
}

/** What a consent's payments are judged under, as a review item's spend states them. */
export interface ConsentTerms {
  currency: string;
  budgets: { max: number; currency: string }[];
  caps: { max: number; currency: string; period: "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY" }[];
  maxOccurrences: number | null;
}

/** A write's fate: not yet in Postgres, stored, refused at the spending cap, or lost to another. */
export type WriteStatus = "pending" | "stored" | "refused" | "other";

const SCHEMA = [
  "create table if not exists meta (key text primary key, value text not null)",
  "create table if not exists once_keys (key text primary key, sequence integer not null)",
  // What a deferred append's caller must still write; kept for a retry or a racing duplicate.
  `create table if not exists attachments (
     sequence integer primary key, body text not null, created_at integer not null)`,
  // What the ledger object writes to Postgres itself, with the entry (an assessment's rows),
  // kept past the write for a retry or a racing duplicate that asks for the answer again.
  `create table if not exists writes (
     sequence integer primary key, body text not null, created_at integer not null,
     status text not null default 'pending')`,
  // Payments approved under an AP2 open mandate, one per mode, consent and transaction: what
  // "one consent pays once" and the open mandate's budget are decided from. `consent` names
  // what the root's issuer signed, never the text of its signature; a test approval is never
  // a live one's (docs/credentials.md, "One consent pays once, in every spelling and mode").
  // `at`: epoch ms the spend counts at in a period cap's period (null: kept before caps).
  `create table if not exists consent_spends (
     livemode integer not null, consent text not null, tx text not null,
     amount integer not null, currency text not null, sequence integer not null,
     at integer, primary key (livemode, consent, tx))`,
  // The terms of the last payment approved under a consent, per mode (its budgets, period caps
  // and recurrence, as JSON): what the remaining-budget attestation states them from.
  `create table if not exists consent_terms (
     livemode integer not null, consent text not null, terms text not null,
     primary key (livemode, consent))`,
  // What voids grants, by key (`action_mandate:<id>`): set by the revocation's own append, in
  // its transaction, and read by a redemption's, so the two are ordered by sequence.
  `create table if not exists voids (
     key text primary key, sequence integer not null, at text not null)`,
  `create table if not exists entries (
     sequence integer primary key, id text not null, type text not null,
     actor_type text not null, actor_id text not null, subject_type text, subject_id text,
     digest text not null, time text not null, prev_hash text not null, hash text not null,
     leaf_hash text not null)`,
  `create table if not exists nodes (
     level integer not null, idx integer not null, hash text not null, primary key (level, idx))`,
  `create table if not exists checkpoints (
     tree_size integer primary key, log_id text not null, root_hash text not null,
     time text not null, note text not null, jws text not null,
     previous_tree_size integer not null, consistency_proof text not null,
     flushed integer not null default 0)`,
];

/**
 * The Durable Object's SQLite storage: synchronous, transactional, local. Nothing here awaits,
 * which is what lets the ledger assign sequences without any interleaving.
 */
export class LedgerStore {
  readonly nodes: NodeStore;
  /**
   * Whether this object kept spends before they were keyed by consent and mode: the `spends`
   * table (root: SHA-256 of the root JWS text, no mode), read and never written since. Its rows
   * count in both modes: which one each was is not recorded, and a spend seen twice refuses
   * a payment, where a spend missed would approve one twice.
   */
  private readonly textKeyedSpends: boolean;

  constructor(private readonly sql: SqlStorage) {
    for (const statement of SCHEMA) sql.exec(statement);
    // An object made before period caps has consent_spends without `at`.
    const columns = sql.exec<{ name: string }>("pragma table_info(consent_spends)").toArray();
    if (!columns.some((c) => c.name === "at")) {
      sql.exec("alter table consent_spends add column at integer");
    }
    this.textKeyedSpends =
      sql.exec("select 1 from sqlite_master where type = 'table' and name = 'spends'").toArray()
        .length > 0;
    this.nodes = {
      get: (level, index) =>
        sql
          .exec<{ hash: string }>(
            "select hash from nodes where level = ? and idx = ?",
            level,
            index,
          )
          .toArray()[0]?.hash,
      set: (level, index, hash) => {
        sql.exec(
          "insert or replace into nodes (level, idx, hash) values (?, ?, ?)",
          level,
          index,
          hash,
        );
      },
    };
  }

  meta(key: string): string | undefined {
    const rows = this.sql.exec<{ value: string }>("select value from meta where key = ?", key);
    return rows.toArray()[0]?.value;
  }

  setMeta(key: string, value: string): void {
    this.sql.exec("insert or replace into meta (key, value) values (?, ?)", key, value);
  }

  /**
   * The next value of the org's status counter (docs/status-lists.md): one statement, so the
   * value is taken once whatever runs beside it, and kept with the rest of the object's storage.
   */
  nextStatusCounter(): number {
    const rows = this.sql.exec<{ value: string }>(
      `insert into meta (key, value) values ('status_counter', '0')
       on conflict (key) do update set value = cast(cast(value as integer) + 1 as text)
       returning value`,
    );
    return Number(rows.one().value);
  }

  head(): Head | null {
    const row = this.sql
      .exec<{ sequence: number; hash: string; time: string }>(
        "select sequence, hash, time from entries order by sequence desc limit 1",
      )
      .toArray()[0];
    return row ? { sequence: row.sequence, hash: row.hash, time: row.time } : null;
  }

  insertEntry(e: StoredEntry): void {
    this.sql.exec(
      `insert into entries (sequence, id, type, actor_type, actor_id, subject_type, subject_id,
         digest, time, prev_hash, hash, leaf_hash) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      e.sequence,
      e.id,
      e.type,
      e.actor.type,
      e.actor.id,
      e.subject?.type ?? null,
      e.subject?.id ?? null,
      e.digest,
      e.time,
      e.prev_hash,
      e.hash,
      e.leaf_hash,
    );
  }

  entriesAfter(sequence: number, limit: number): StoredEntry[] {
    return this.sql
      .exec<Row>(
        "select * from entries where sequence > ? order by sequence limit ?",
        sequence,
        limit,
      )
      .toArray()
      .map(toEntry);
  }

  entry(sequence: number): StoredEntry | undefined {
    const row = this.sql
      .exec<Row>("select * from entries where sequence = ?", sequence)
      .toArray()[0];
    return row ? toEntry(row) : undefined;
  }

  onceEntry(key: string): StoredEntry | undefined {
    const rows = this.sql.exec<{ sequence: number }>(
      "select sequence from once_keys where key = ?",
      key,
    );
    const sequence = rows.toArray()[0]?.sequence;
    return sequence === undefined ? undefined : this.entry(sequence);
  }

  setOnce(key: string, sequence: number): void {
    this.sql.exec("insert into once_keys (key, sequence) values (?, ?)", key, sequence);
  }

  /** The revocation that voided this key, if any. */
  voiding(key: string): Voiding | undefined {
    const rows = this.sql.exec<{ sequence: number; at: string }>(
      "select sequence, at from voids where key = ?",
      key,
    );
    const row = rows.toArray()[0];
    return row ? { key, sequence: row.sequence, at: row.at } : undefined;
  }

  /** Records a revocation once: a retry keeps the first one's sequence and time. */
  setVoiding(voiding: Voiding): void {
    this.sql.exec(
      "insert into voids (key, sequence, at) values (?, ?, ?) on conflict (key) do nothing",
      voiding.key,
      voiding.sequence,
      voiding.at,
    );
  }

  attachment(sequence: number): string | null {
    const rows = this.sql.exec<{ body: string }>(
      "select body from attachments where sequence = ?",
      sequence,
    );
    return rows.toArray()[0]?.body ?? null;
  }

  setAttachment(sequence: number, body: string, now: number): void {
    this.sql.exec(
      "insert into attachments (sequence, body, created_at) values (?, ?, ?)",
      sequence,
      body,
      now,
    );
  }

  pruneAttachments(before: number): void {
    this.sql.exec("delete from attachments where created_at < ?", before);
    this.sql.exec(
      "delete from writes where created_at < ? and sequence <= ?",
      before,
      this.flushed(),
    );
  }

  write(sequence: number): { body: string; status: WriteStatus } | null {
    const rows = this.sql.exec<{ body: string; status: WriteStatus }>(
      "select body, status from writes where sequence = ?",
      sequence,
    );
    return rows.toArray()[0] ?? null;
  }

  /** The write's status alone: answering a commit after its flush needs no second copy of its body. */
  writeStatus(sequence: number): WriteStatus | null {
    const rows = this.sql.exec<{ status: WriteStatus }>(
      "select status from writes where sequence = ?",
      sequence,
    );
    return rows.toArray()[0]?.status ?? null;
  }

  /**
   * The sequences of the pending writes of entries in (after, through], in order, at most
   * `limit`: their bodies are read one by one, and only when the group commit does not hold
   * them already.
   */
  pendingWrites(after: number, through: number, limit: number): number[] {
    return this.sql
      .exec<{ sequence: number }>(
        `select sequence from writes
         where sequence > ? and sequence <= ? and status = 'pending' order by sequence limit ?`,
        after,
        through,
        limit,
      )
      .toArray()
      .map((row) => row.sequence);
  }

  /**
   * What the write's transaction did, and of its body only `kept`: what answering a retry still
   * needs. The rest is in Postgres now (or was refused), and a copy here would outlive the
   * erasure of a principal whose data it holds (docs/identity.md, "What erasure reaches").
   */
  setWriteStatus(sequence: number, status: WriteStatus, kept: string): void {
    this.sql.exec(
      "update writes set status = ?, body = ? where sequence = ?",
      status,
      kept,
      sequence,
    );
  }

  setWrite(sequence: number, body: string, now: number): void {
    this.sql.exec(
      "insert into writes (sequence, body, created_at) values (?, ?, ?)",
      sequence,
      body,
      now,
    );
  }

  /**
   * What was approved under a consent in one mode: whether this transaction was (the sequence
   * that approved it), the total in `currency` and the number of payments.
   */
  spent(livemode: boolean, consent: ConsentKey, tx: string, currency: string) {
    const mode = livemode ? 1 : 0;
    const seen = this.sql
      .exec<{ sequence: number }>(
        "select sequence from consent_spends where livemode = ? and consent = ? and tx = ?",
        mode,
        consent.root,
        tx,
      )
      .toArray()[0];
    const totals = this.sql
      .exec<{ total: number; uses: number }>(
        `select coalesce(sum(case when currency = ? then amount else 0 end), 0) as total,
           count(*) as uses from consent_spends where livemode = ? and consent = ?`,
        currency,
        mode,
        consent.root,
      )
      .toArray()[0];
    const spent = {
      consumedBy: seen?.sequence ?? null,
      total: Number(totals?.total ?? 0),
      uses: Number(totals?.uses ?? 0),
    };
    return this.textKeyedSpends ? this.withTextKeyed(spent, consent, tx, currency) : spent;
  }

  /**
   * The total in `currency` approved under a consent in one mode within [from, to) epoch ms:
   * what a period cap is judged from. Spends kept without a time (before caps, and the spends
   * kept by the text of the root JWS) count in every period: a spend counted twice refuses a
   * payment, where one missed would let a period pass its cap.
   */
  spentWithin(
    livemode: boolean,
    consent: ConsentKey,
    currency: string,
    from: number,
    to: number,
  ): number {
    const row = this.sql
      .exec<{ total: number }>(
        `select coalesce(sum(amount), 0) as total from consent_spends
         where livemode = ? and consent = ? and currency = ?
           and (at is null or (at >= ? and at < ?))`,
        livemode ? 1 : 0,
        consent.root,
        currency,
        from,
        to,
      )
      .toArray()[0];
    const total = Number(row?.total ?? 0);
    if (!this.textKeyedSpends) return total;
    const roots = consent.rootSpellings ?? [consent.root];
    const legacy = this.sql
      .exec<{ total: number }>(
        `select coalesce(sum(amount), 0) as total from spends
         where root in (${roots.map(() => "?").join(", ")}) and currency = ?`,
        ...roots,
        currency,
      )
      .toArray()[0];
    return total + Number(legacy?.total ?? 0);
  }

  /** `spent` with the spends kept by the text of the root JWS, in either mode, added. */
  private withTextKeyed(
    spent: { consumedBy: number | null; total: number; uses: number },
    consent: ConsentKey,
    tx: string,
    currency: string,
  ) {
    // An item opened before consents were keyed by content names its root by such a text.
    const roots = consent.rootSpellings ?? [consent.root];
    const among = `root in (${roots.map(() => "?").join(", ")})`;
    const seen = this.sql
      .exec<{ sequence: number }>(
        `select sequence from spends where ${among} and tx = ?`,
        ...roots,
        tx,
      )
      .toArray()[0];
    const totals = this.sql
      .exec<{ total: number; uses: number }>(
        `select coalesce(sum(case when currency = ? then amount else 0 end), 0) as total,
           count(*) as uses from spends where ${among}`,
        currency,
        ...roots,
      )
      .toArray()[0];
    return {
      consumedBy: spent.consumedBy ?? seen?.sequence ?? null,
      total: spent.total + Number(totals?.total ?? 0),
      uses: spent.uses + Number(totals?.uses ?? 0),
    };
  }

  addSpend(
    livemode: boolean,
    consent: string,
    tx: string,
    amount: number,
    currency: string,
    sequence: number,
    at: number | null = null,
  ): void {
    this.sql.exec(
      `insert into consent_spends (livemode, consent, tx, amount, currency, sequence, at)
       values (?, ?, ?, ?, ?, ?, ?)`,
      livemode ? 1 : 0,
      consent,
      tx,
      amount,
      currency,
      sequence,
      at,
    );
  }

  /** Keeps the terms a consent's latest approved payment was judged under (one row per mode). */
  setConsentTerms(livemode: boolean, consent: string, terms: ConsentTerms): void {
    this.sql.exec(
      "insert or replace into consent_terms (livemode, consent, terms) values (?, ?, ?)",
      livemode ? 1 : 0,
      consent,
      JSON.stringify(terms),
    );
  }

  /** The terms kept for a consent in one mode; undefined when none of its payments was approved. */
  consentTerms(livemode: boolean, consent: string): ConsentTerms | undefined {
    const row = this.sql
      .exec<{ terms: string }>(
        "select terms from consent_terms where livemode = ? and consent = ?",
        livemode ? 1 : 0,
        consent,
      )
      .toArray()[0];
    return row ? (JSON.parse(row.terms) as ConsentTerms) : undefined;
  }

  /** A spend whose assessment the database refused (the spending cap): it never happened. */
  removeSpend(sequence: number): void {
    this.sql.exec("delete from consent_spends where sequence = ?", sequence);
    if (this.textKeyedSpends) this.sql.exec("delete from spends where sequence = ?", sequence);
  }

  private flushed(): number {
    return Number(this.meta("flushed") ?? 0);
  }

  insertCheckpoint(c: CheckpointRecord): void {
    this.sql.exec(
      `insert into checkpoints (tree_size, log_id, root_hash, time, note, jws, previous_tree_size,
         consistency_proof) values (?, ?, ?, ?, ?, ?, ?, ?)`,
      c.tree_size,
      c.log_id,
      c.root_hash,
      c.time,
      c.note,
      c.jws,
      c.previous_tree_size,
      JSON.stringify(c.consistency_proof),
    );
  }

  latestCheckpoint(): CheckpointRecord | undefined {
    const rows = this.sql.exec<Row>("select * from checkpoints order by tree_size desc limit 1");
    const row = rows.toArray()[0];
    return row ? toCheckpoint(row) : undefined;
  }

  /** Checkpoints not yet in Postgres whose entries are: a checkpoint never precedes its leaves. */
  unflushedCheckpoints(throughSequence: number): CheckpointRecord[] {
    return this.sql
      .exec<Row>(
        "select * from checkpoints where flushed = 0 and tree_size <= ? order by tree_size",
        throughSequence,
      )
      .toArray()
      .map(toCheckpoint);
  }

  hasUnflushedCheckpoints(): boolean {
    return (
      this.sql.exec("select 1 from checkpoints where flushed = 0 limit 1").toArray().length > 0
    );
  }

  markCheckpointsFlushed(sizes: number[]): void {
    for (const size of sizes) {
      this.sql.exec("update checkpoints set flushed = 1 where tree_size = ?", size);
    }
  }
}

function toEntry(row: Row): StoredEntry {
  return {
    sequence: row.sequence as number,
    id: row.id as string,
    type: row.type as string,
    actor: { type: row.actor_type as string, id: row.actor_id as string },
    subject:
      row.subject_type === null
        ? null
        : { type: row.subject_type as string, id: row.subject_id as string },
    digest: row.digest as string,
    time: row.time as string,
    prev_hash: row.prev_hash as string,
    hash: row.hash as string,
    leaf_hash: row.leaf_hash as string,
  };
}

function toCheckpoint(row: Row): CheckpointRecord {
  return {
    log_id: row.log_id as string,
    tree_size: row.tree_size as number,
    root_hash: row.root_hash as string,
    time: row.time as string,
    note: row.note as string,
    jws: row.jws as string,
    previous_tree_size: row.previous_tree_size as number,
    consistency_proof: JSON.parse(row.consistency_proof as string) as string[],
  };
}
