-- The public receipt check (GET /v1/verify/artifact?receipt=): a holder of a verified receipt
-- may see the one artifact row its claims name, by id AND digest together (both settings set,
-- both must match), in either mode, so the verdict can confirm the signed digest is the one
-- registered under that id (and its org and mode). SELECT only; the route reads only org_id,
-- livemode and digest of that row and shows nothing of it beyond the signed claims.
CREATE POLICY artifacts_by_receipt ON artifacts FOR SELECT
  USING (
    id = nullif(current_setting('app.artifact_id', true), '')::uuid
    AND digest = nullif(current_setting('app.artifact_digest', true), '')
  );
