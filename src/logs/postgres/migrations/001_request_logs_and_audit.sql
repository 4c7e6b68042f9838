-- Request logs, kept bodies and the audit trail, each partitioned by UTC day (src/logs/postgres/partitions.ts makes
-- the days ahead and drops the ones retention let go). Every index leads with what a filter names, then time and id:
-- the order pages are read in (newest first, ties by id).

-- A batch the writer inserted, by its id: a batch written again (a replay after a lost reply) is refused whole.
CREATE TABLE log_batches (
  id uuid PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX log_batches_at ON log_batches (at);

CREATE SEQUENCE request_logs_id CACHE 1000;

CREATE TABLE request_logs (
  time timestamptz NOT NULL,
  id bigint NOT NULL DEFAULT nextval('request_logs_id'),
  request_id text NOT NULL,
  account_id text,
  key_id text,
  surface text NOT NULL,
  method text NOT NULL,
  route text NOT NULL,
  model text,
  upstream text,
  upstream_model text,
  status smallint NOT NULL,
  error_type text,
  input_tokens integer,
  output_tokens integer,
  cached_tokens integer,
  cache_write_tokens integer,
  reasoning_tokens integer,
  cost_micros bigint NOT NULL DEFAULT 0,
  latency_ms real NOT NULL,
  ttfb_ms real,
  user_agent text,
  client_ip text,
  task_id text,
  batch_id text,
  request_bytes bigint,
  response_bytes bigint
) PARTITION BY RANGE (time);

-- The admin's list (every account), and the account's list: the console's default query.
CREATE INDEX request_logs_time ON request_logs (time DESC, id DESC);
CREATE INDEX request_logs_account ON request_logs (account_id, time DESC, id DESC);
-- Filters: a key (which implies its account), a model, a status (or class) of one account.
CREATE INDEX request_logs_key ON request_logs (key_id, time DESC, id DESC);
CREATE INDEX request_logs_account_model ON request_logs (account_id, model, time DESC, id DESC);
CREATE INDEX request_logs_account_status ON request_logs (account_id, status, time DESC, id DESC);
-- A call named by its request id (genway-request-id), and a task's submission.
CREATE INDEX request_logs_request ON request_logs (request_id);
CREATE INDEX request_logs_task ON request_logs (task_id) WHERE task_id IS NOT NULL;

CREATE TABLE request_log_bodies (
  time timestamptz NOT NULL,
  request_id text NOT NULL,
  account_id text,
  request_body text,
  response_body text
) PARTITION BY RANGE (time);
CREATE INDEX request_log_bodies_request ON request_log_bodies (request_id, time);

CREATE SEQUENCE audit_log_id;

CREATE TABLE audit_log (
  time timestamptz NOT NULL,
  id bigint NOT NULL DEFAULT nextval('audit_log_id'),
  actor text NOT NULL,
  action text NOT NULL,
  target text NOT NULL,
  account_id text,
  before jsonb,
  after jsonb,
  request_id text,
  client_ip text
) PARTITION BY RANGE (time);

CREATE INDEX audit_log_time ON audit_log (time DESC, id DESC);
CREATE INDEX audit_log_account ON audit_log (account_id, time DESC, id DESC);
CREATE INDEX audit_log_target ON audit_log (target, time DESC, id DESC);
CREATE INDEX audit_log_actor ON audit_log (actor, time DESC, id DESC);

-- Append-only in the database too: no UPDATE or DELETE of a row, whoever asks. Retention drops whole partitions.
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the audit trail is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- Which accounts and keys keep their calls' bodies (logs.bodies per account or key): `account:<id>` or `key:<id>`.
CREATE TABLE log_body_settings (
  scope text PRIMARY KEY,
  mode text NOT NULL CHECK (mode IN ('off', 'metadata', 'full')),
  updated_at timestamptz NOT NULL DEFAULT now()
);
