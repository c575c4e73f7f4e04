// The audit ledger that recorded it all: entries, verification, checkpoints, a proof.

import {
  API_KEY,
  DENIED,
  hashes,
  LOG_ID,
  list,
  type OperationExamples,
  ownerParty,
  REVIEW,
} from "./example-org";

const auditEntry = (
  id: string,
  sequence: number,
  type: string,
  actor: { type: string; id: string },
  subject: { type: string; id: string },
  time: string,
  prev: string,
  hash: string,
  leaf: string,
  status: "pending" | "anchored",
) => ({
  object: "audit_entry",
  id,
  sequence,
  type,
  actor,
  subject,
  digest: `sha256:${leaf.slice(0, 32)}${prev.slice(0, 32)}`,
  time,
  prev_hash: prev,
  hash,
  leaf_hash: leaf,
  status,
});

const keyActor = { type: "api_key", id: API_KEY };

const checkpoint = {
  log_id: LOG_ID,
  tree_size: 64,
  root_hash: hashes.g,
  time: "2026-11-20T10:03:00.000Z",
  // C2SP tlog-checkpoint: origin, tree size, base64 root hash, the time extension line.
  note: `agent-risk/log/${LOG_ID}\n64\n50T9d6XwU82JnA9idJYtBE3/L3itveRvgUye45WT+U8=\ntime 2026-11-20T10:03:00.000Z\n`,
  jws: "eyJhbGciOiJFZERTQSIsImtpZCI6ImhRNW4wWnEzZVgxdjJZYjdtV2M5dFJrNExwUzZ1SmQ4YUZnMGlIZTJvVHMiLCJ0eXAiOiJ0bG9nLWNoZWNrcG9pbnQifQ.YWdlbnQtcmlzay9sb2cv.Vq3xT8m2Lk9pRz0aNb4wYc7dHe1fGj5sUo6iPr2tQx",
  previous_tree_size: 48,
  consistency_proof: [hashes.b, hashes.c, hashes.d],
};

export const auditExamples: OperationExamples = {
  "GET /v1/audit": list(
    [
      auditEntry(
        "01a1f868-2fae-7727-8da8-dbabb5951a06",
        64,
        "assessment.created",
        keyActor,
        { type: "assessment", id: DENIED },
        "2026-11-20T10:02:19.950Z",
        hashes.a,
        hashes.b,
        hashes.c,
        "anchored",
      ),
      auditEntry(
        "01a1f85e-e14d-70c7-b13b-1cd2dbfb6d9c",
        63,
        "review.resolved",
        ownerParty,
        { type: "review", id: REVIEW },
        "2026-11-20T09:52:10.061Z",
        hashes.d,
        hashes.a,
        hashes.e,
        "anchored",
      ),
    ],
    "01a1f85e-e14d-70c7-b13b-1cd2dbfb6d9c",
  ),
  "GET /v1/audit/verify": {
    ok: true,
    checked: 64,
    head: { sequence: 64, hash: hashes.b },
    first_break: null,
    checkpoints: {
      checked: 4,
      latest: { tree_size: 64, root_hash: hashes.g, time: "2026-11-20T10:03:00.000Z" },
      first_invalid: null,
    },
    ledger: { tree_size: 64, root_hash: hashes.g, entries_stored: true, checkpoint_stored: true },
    alert: null,
  },
  "GET /v1/audit/checkpoints": list([{ object: "checkpoint", ...checkpoint }]),
  "GET /v1/audit/{id}/proof": {
    object: "audit_proof",
    entry_id: "01a1f83b-fd8a-775a-aaaa-89b7fbddb38e",
    sequence: 57,
    leaf_hash: hashes.f,
    status: "anchored",
    leaf_index: 56,
    tree_size: 64,
    audit_path: [hashes.e, hashes.h, hashes.c, hashes.a, hashes.d, hashes.b],
    checkpoint,
  },
};
